// The soak's webhook receiver: an https server on loopback (a certificate of its own, which the instances trust through
// NODE_EXTRA_CA_CERTS, as production delivers only over https) that keeps every delivery with its headers and the
// time it arrived. It answers one request in FAIL_EVERY with 503, so the retry schedule is part of every run.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

const FAIL_EVERY = 10

export interface ReceivedDelivery {
  /** The endpoint it was sent to: the path's last segment. */
  endpoint: string
  id: string
  timestamp: string
  signature: string
  body: string
  receivedAt: Date
}

export interface WebhookReceiver {
  /** `https://127.0.0.1:<port>/hooks/`: an endpoint is this and a name. */
  baseUrl: string
  /** The receiver's certificate (PEM file): NODE_EXTRA_CA_CERTS of the instances. */
  caFile: string
  /** Every delivery answered 2xx, in the order they arrived. */
  delivered: ReceivedDelivery[]
  /** Requests answered 503 on purpose. */
  refused: number
  close(): Promise<void>
}

/** Starts the receiver with a key and certificate written into `dir`. */
export async function startWebhookReceiver(dir: string): Promise<WebhookReceiver> {
  const keyFile = join(dir, 'receiver.key')
  const caFile = join(dir, 'receiver.pem')
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2'],
      ...['-subj', '/CN=soak webhook receiver', '-addext', 'subjectAltName=IP:127.0.0.1'],
      ...['-keyout', keyFile, '-out', caFile],
    ],
    { stdio: 'ignore' },
  )
  const delivered: ReceivedDelivery[] = []
  let requests = 0
  const receiver = { refused: 0 }
  const server: Server = createServer(
    { key: readFileSync(keyFile), cert: readFileSync(caFile) },
    (request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        requests += 1
        if (requests % FAIL_EVERY === 0) {
          receiver.refused += 1
          response.writeHead(503).end('failing on purpose')
          return
        }
        delivered.push({
          endpoint: (request.url ?? '').split('/').pop() ?? '',
          id: String(request.headers['webhook-id']),
          timestamp: String(request.headers['webhook-timestamp']),
          signature: String(request.headers['webhook-signature']),
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: new Date(),
        })
        response.writeHead(204).end()
      })
    },
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `https://127.0.0.1:${port}/hooks/`,
    caFile,
    delivered,
    get refused() {
      return receiver.refused
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
