// A command's two output streams, as a terminal would show them, collected for a test to read.
import { PassThrough } from 'node:stream'

export function capturedOutput() {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (chunk) => (out += chunk))
  stderr.on('data', (chunk) => (err += chunk))
  return { stdout, stderr, text: () => ({ stdout: out, stderr: err }) }
}
