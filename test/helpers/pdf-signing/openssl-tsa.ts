// A real RFC 3161 time-stamping authority for tests: `openssl ts -reply` behind a small HTTP server, with its own CA
// (made with openssl too), so that the service's timestamps come from an implementation that is not ours. Its CA's
// revocation list is served beside it (GET /ca.crl), named in the TSA's certificate, as long-term validation needs.
// Faults for failover tests: `refuse` answers 500, `silent` never answers.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface OpensslTsa {
  url: string
  /** The TSA's CA certificate (PEM), for verifiers that trust it, and the file that holds it. */
  caPem: string
  caFile: string
  /** Requests answered with a token so far. */
  granted: number
  /** Fetches of its CA's revocation list, which the TSA's certificate names. */
  crlRequests: number
  /**
   * 'ok' answers; 'refuse' answers HTTP 500; 'silent' holds the request open without answering; 'replay' answers with
   * the last reply it granted, a valid token for another request.
   */
  mode: 'ok' | 'refuse' | 'silent' | 'replay'
  close(): Promise<void>
}

const CONFIG = `
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = serial
signer_cert = tsa.pem
certs = ca.pem
signer_key = tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
[ tsa_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, timeStamping
crlDistributionPoints = URI:$ENV::TSA_CRL_URL
[ ca ]
default_ca = crl_ca
[ crl_ca ]
database = index.txt
certificate = ca.pem
private_key = ca.key
default_md = sha256
default_crl_days = 30
crlnumber = crlnumber
`

export async function startOpensslTsa(name = 'Test TSA'): Promise<OpensslTsa> {
  const dir = await mkdtemp(join(tmpdir(), 'openssl-tsa-'))
  // Listening first: the TSA's certificate names its CRL by this server's address.
  let handle: (request: IncomingMessage, response: ServerResponse) => void = () => {}
  const server: Server = createServer((request, response) => handle(request, response))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const openssl = (args: string[]) =>
    run('openssl', args, { cwd: dir, env: { ...process.env, TSA_CRL_URL: `${origin}/ca.crl` } })
  await writeFile(join(dir, 'tsa.cnf'), CONFIG)
  await writeFile(join(dir, 'serial'), '01\n')
  await writeFile(join(dir, 'index.txt'), '')
  await writeFile(join(dir, 'crlnumber'), '01\n')
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key'])
  await openssl(['req', '-x509', '-new', '-key', 'ca.key', '-subj', `/CN=${name} CA`, '-days', '30', '-out', 'ca.pem'])
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'tsa.key'])
  await openssl(['req', '-new', '-key', 'tsa.key', '-subj', `/CN=${name}`, '-out', 'tsa.csr'])
  await openssl([
    'x509',
    '-req',
    '-in',
    'tsa.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    'tsa.cnf',
    '-extensions',
    'tsa_ext',
    '-out',
    'tsa.pem',
  ])
  // The CA's (empty) revocation list, DER, as a CRL distribution point serves it.
  await openssl(['ca', '-gencrl', '-config', 'tsa.cnf', '-out', 'ca.crl.pem'])
  await openssl(['crl', '-in', 'ca.crl.pem', '-outform', 'DER', '-out', 'ca.crl'])
  const crl = await readFile(join(dir, 'ca.crl'))
  let sequence = 0
  const tsa: OpensslTsa = {
    url: `${origin}/tsa`,
    caPem: await readFile(join(dir, 'ca.pem'), 'utf8'),
    caFile: join(dir, 'ca.pem'),
    granted: 0,
    crlRequests: 0,
    mode: 'ok',
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await rm(dir, { recursive: true, force: true })
    },
  }
  let lastReply: Buffer | undefined
  handle = (request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      if (tsa.mode === 'silent') return
      if (request.method === 'GET' && request.url === '/ca.crl' && tsa.mode === 'ok') {
        tsa.crlRequests++
        response.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(crl)
        return
      }
      if (tsa.mode === 'refuse' || request.method !== 'POST') {
        response.writeHead(500).end()
        return
      }
      if (tsa.mode === 'replay' && lastReply) {
        response.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(lastReply)
        return
      }
      const id = ++sequence
      try {
        await writeFile(join(dir, `q${id}.tsq`), Buffer.concat(chunks))
        await openssl(['ts', '-reply', '-config', 'tsa.cnf', '-queryfile', `q${id}.tsq`, '-out', `r${id}.tsr`])
        const reply = await readFile(join(dir, `r${id}.tsr`))
        tsa.granted++
        lastReply = reply
        response.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(reply)
      } catch {
        response.writeHead(400).end()
      }
    })
  }
  return tsa
}
