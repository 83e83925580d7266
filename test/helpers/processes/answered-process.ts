// A child process that asks for one line on its stdin (a sign-in code, as a person would type it), given once the
// test knows it; what the process printed on stdout and stderr, interleaved as a terminal would show them.
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'

export async function answerAndWait(
  child: ChildProcess,
  answer: Promise<string>,
): Promise<{ code: number | null; output: string }> {
  let output = ''
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
  }
  const exited = once(child, 'exit')
  child.stdin!.end(`${await answer}\n`)
  const [code] = (await exited) as [number | null]
  return { code, output }
}
