// The demonstration's RFC 3161 time-stamping authority (deploy/compose.yaml's tsa): `openssl ts -reply` behind HTTP,
// with the key, certificate and configuration demo-token-init.sh made under /token/tsa, and its CA's revocation list
// at GET /ca.crl (the TSA's certificate names it). Not a trusted time source: production lists real ones in TSA_URL.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const DIR = '/token/tsa'
const MAX_QUERY_BYTES = 16 * 1024
const crl = await readFile(join(DIR, 'ca.crl'))
/** One `openssl ts -reply` at a time: each reads and rewrites the serial number's file. */
let queue = Promise.resolve()

createServer((request, response) => {
  const chunks = []
  let size = 0
  request.on('data', (chunk) => {
    size += chunk.length
    if (size > MAX_QUERY_BYTES) request.destroy()
    else chunks.push(chunk)
  })
  request.on('end', async () => {
    if (request.method === 'GET' && request.url === '/ca.crl') {
      response.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(crl)
      return
    }
    if (request.method !== 'POST') {
      response.writeHead(405).end()
      return
    }
    const reply = () => timestampReply(Buffer.concat(chunks))
    const answered = queue.then(reply, reply)
    queue = answered.then(
      () => {},
      () => {},
    )
    try {
      const token = await answered
      response.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(token)
    } catch {
      response.writeHead(400).end()
    }
  })
}).listen(8318, '0.0.0.0')

async function timestampReply(query) {
  const work = await mkdtemp(join(tmpdir(), 'tsq-'))
  try {
    await writeFile(join(work, 'q.tsq'), query)
    const config = join(DIR, 'tsa.cnf')
    await run('openssl', [
      'ts',
      '-reply',
      '-config',
      config,
      '-queryfile',
      join(work, 'q.tsq'),
      '-out',
      join(work, 'r.tsr'),
    ])
    return await readFile(join(work, 'r.tsr'))
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}
