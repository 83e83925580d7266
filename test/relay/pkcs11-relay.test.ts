// The service process with its relayer keys on a SoftHSM2 token and no private key anywhere: concurrent relays from
// two token keys on anvil, a wrong PIN, and a key whose token call hangs while the other carries the work.
import { rmSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  certificateOf,
  certifiedSigner,
  checkCmsSignature,
  checkSignedPdf,
  createAnchorClient,
  pemCertificates,
  serviceLongTermValidation,
  signPdf,
} from '@docanchor/client'
import { type Address, type Hash, parseEther } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/soak/free-port.ts'
import { pdfLibDocument } from '../../packages/client/test/pdf/portable-fixtures.ts'
import { openPkcs11Relayers } from '../../src/pkcs11/pkcs11-relayers.ts'
import { TEST_JWT_SECRET } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { createTestDatabase, type TestDatabase, testPostgresUrl } from '../helpers/db/database.ts'
import { startOpensslTsa } from '../helpers/pdf-signing/openssl-tsa.ts'
import { provisionPdfSigningKey } from '../helpers/pkcs11/pdf-signing-token.ts'
import { createSoftHsmToken, SOFTHSM_MODULE, type SoftHsmToken } from '../helpers/pkcs11/softhsm.ts'
import { type ServerProcess, startServerProcess } from '../helpers/processes/server-process.ts'
import { newBody } from './relay-helpers.ts'
import { createUserToken, httpRelay } from './relay-process.ts'

let token: SoftHsmToken
let chain: TestChain
let addresses: Address[]
let dataDir: string

beforeAll(async () => {
  token = createSoftHsmToken()
  token.addKey('relayer-a')
  token.addKey('relayer-b')
  Object.assign(process.env, token.env)
  // The operator's step: read the token's addresses, authorize them on the contract and fund them.
  const relayers = await openPkcs11Relayers(
    {
      module: SOFTHSM_MODULE,
      tokenLabel: token.tokenLabel,
      pin: token.pin,
      keyLabels: ['relayer-a', 'relayer-b'],
      callTimeoutMs: 10_000,
      probeIntervalMs: 1_000,
    },
    () => {},
  ).then((opened) => {
    for (const relayer of opened) relayer.key.close()
    return opened
  })
  addresses = relayers.map((relayer) => relayer.account.address)
  chain = await startTestChain({ relayers: addresses })
  for (const to of addresses) {
    const hash = await chain.walletClient(0).sendTransaction({ to, value: parseEther('10') })
    await chain.publicClient.waitForTransactionReceipt({ hash })
  }
  dataDir = await mkdtemp(join(tmpdir(), 'pkcs11-relay-'))
}, 120_000)
afterAll(async () => {
  await chain?.stop()
  token?.remove()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

function tokenEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    ...token.env,
    DATA_DIR: dataDir,
    JWT_SECRET: TEST_JWT_SECRET,
    RPC_URL: chain.rpcUrl,
    CONTRACT_ADDRESS: chain.contract,
    CHAIN_POLLING_INTERVAL_MS: '20',
    RELAY_MONITOR_INTERVAL_MS: '200',
    RELAYER_SIGNER: 'pkcs11',
    PKCS11_MODULE: SOFTHSM_MODULE,
    PKCS11_TOKEN_LABEL: token.tokenLabel,
    PKCS11_PIN: token.pin,
    PKCS11_KEY_LABELS: 'relayer-a,relayer-b',
    ...overrides,
  }
}

async function senderOf(txHash: unknown): Promise<Address> {
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: txHash as Hash })
  expect(receipt.status).toBe('success')
  return receipt.from
}

describe('RELAYER_SIGNER=pkcs11', () => {
  // The embedded database opens and migrates beside the token before the start fails: slow on a loaded machine.
  it('refuses to start on a wrong PIN with exit 78, naming PKCS11_PIN and not quoting the PIN', async () => {
    const error = await startServerProcess(tokenEnv({ PKCS11_PIN: '97531' })).then(
      () => undefined,
      (caught: Error) => caught.message,
    )
    expect(error).toMatch(/exited with 78/)
    expect(error).toContain('PKCS11_PIN')
    expect(error).not.toContain('97531')
  }, 120_000)

  // Production needs a database server: PGlite is not allowed there. CI sets DATABASE_URL.
  describe.runIf(testPostgresUrl !== undefined)('in production (runs when DATABASE_URL is set)', () => {
    let database: TestDatabase
    let server: ServerProcess | undefined

    beforeAll(async () => {
      database = await createTestDatabase()
    })
    afterAll(async () => {
      await server?.stop('SIGKILL')
      await database?.close()
    })

    it('confirms concurrent relays once each, sent from the two token addresses, and certifies signers with a token key', async () => {
      // Production certifies signers too: a P-256 CA key on the same token, its CA certified by a root; a real TSA.
      const pdfKey = await provisionPdfSigningKey(token)
      const tsa = await startOpensslTsa()
      // Its certificates name its OCSP responder by the public URL: where it listens.
      const port = await freePort()
      server = await startServerProcess(
        tokenEnv({
          ...pdfKey.env,
          TSA_URL: tsa.url,
          TSA_TRUSTED_CERTIFICATES: tsa.caFile,
          NODE_ENV: 'production',
          DATABASE_URL: database.url!,
          SMTP_URL: 'smtp://127.0.0.1:2525',
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          PORT: String(port),
          HOST: '127.0.0.1',
          METRICS_TOKEN: 'm'.repeat(32),
        }),
      )
      const info = (await (await fetch(`${server.url}/api/info`)).json()) as {
        relayers: string[]
        chainId: number
        contractAddress: string
      }
      expect(info.relayers.sort()).toEqual(addresses.map((address) => address.toLowerCase()).sort())
      const users = await Promise.all(Array.from({ length: 4 }, () => createUserToken(database.handle.db)))
      const bodies = Array.from({ length: 20 }, () => newBody())
      const responses = await Promise.all(
        bodies.map((body, i) => httpRelay(server!.url, users[i % 4]!.authorization, body)),
      )
      expect(responses.map((response) => response.status).filter((status) => status !== 201)).toEqual([])
      const txHashes = responses.map((response) => response.json.txHash as string)
      expect(new Set(txHashes).size).toBe(20)
      const senders = await Promise.all(txHashes.map(senderOf))
      expect(new Set(senders.map((sender) => sender.toLowerCase()))).toEqual(
        new Set(addresses.map((address) => address.toLowerCase())),
      )

      // A signer's own key, certified by the token's CA key; its signature timestamped by the real TSA.
      const api = createAnchorClient({
        baseUrl: server.url,
        token: users[0]!.authorization.replace(/^Bearer /, ''),
      })
      const { pdfSignature } = await certifiedSigner(api)
      const content = new TextEncoder().encode('a byte range')
      const digest = Buffer.from(await crypto.subtle.digest('SHA-256', content)).toString('hex')
      const cms = await pdfSignature({
        txHash: txHashes[0]!,
        digest,
        compositeHash: bodies[0]!.compositeHash,
        chainId: info.chainId,
        contractAddress: info.contractAddress,
      })
      const roots = [...pemCertificates(pdfKey.caPem), ...pemCertificates(tsa.caPem)].map(certificateOf)
      const check = await checkCmsSignature(cms, content, roots)
      expect(check).toMatchObject({ valid: true, trusted: true, timestamp: { valid: true, trusted: true } })
      expect(check.signer?.commonName).toMatch(/^user-[\w-]+@example\.com$/)
      expect(check.timestamp?.authority).toBe('Test TSA')

      // A whole PDF, B-LTA: its DSS holds the token CA's OCSP answer, its document timestamp is the real TSA's.
      const published = await api.info()
      expect(published.pdfSigning.timestampCertificates).toEqual([tsa.caPem.trim()].map((pem) => `${pem}\n`))
      const email = check.signer!.commonName
      const signed = await signPdf(await pdfLibDocument(), {
        signer: { type: 'individual', name: 'Production Signer', email },
        verifyBaseUrl: published.verifyBaseUrl,
        chainId: published.chainId,
        contractAddress: published.contractAddress,
        anchor: (request) => api.relay(request, { waitMs: 30_000 }),
        pdfSignature,
        longTermValidation: serviceLongTermValidation(api, published),
      })
      expect(signed.warnings).toEqual([])
      const verified = await checkSignedPdf(signed.bytes, {
        verify: (txHash) => api.verify(txHash),
        serviceCertificates: published.pdfSigning.certificates.flatMap(pemCertificates),
        timestampCertificates: published.pdfSigning.timestampCertificates.flatMap(pemCertificates),
      })
      expect(verified.problems).toEqual([])
      expect(verified.signatures[0]!.problems).toEqual([])
      expect(verified.signatures[0]!.pdfSignature).toMatchObject({
        level: 'B-LTA',
        revocation: { state: 'good', source: 'OCSP' },
        timestamp: { authority: 'Test TSA', trusted: true },
      })
      // The TSA's status is the CRL its certificate names, fetched by the client and kept in the DSS.
      expect(tsa.crlRequests).toBeGreaterThan(0)
      expect(verified.otherSignatures).toMatchObject([
        {
          subFilter: 'ETSI.RFC3161',
          status: 'valid',
          trusted: true,
          timestamp: { authority: 'Test TSA' },
          revocation: { state: 'good', source: 'CRL' },
        },
      ])
      await tsa.close()
    }, 120_000)

    it('keeps relaying on the other key while one key hangs, and takes the hung key back once it answers', async () => {
      await server?.stop()
      const hanging = token.hangingModule()
      server = await startServerProcess(
        tokenEnv({
          ...hanging.env,
          DATABASE_URL: database.url!,
          PKCS11_MODULE: hanging.module,
          PKCS11_CALL_TIMEOUT_MS: '1000',
          PKCS11_PROBE_INTERVAL_MS: '200',
        }),
      )
      const { url, output } = server
      const [a, b] = addresses.map((address) => address.toLowerCase())
      const signerUp = async (address: string) =>
        new RegExp(`relayer_signer_up\\{relayer="${address}"\\} (\\d)`).exec(
          await (await fetch(`${url}/metrics`)).text(),
        )?.[1]
      const user = await createUserToken(database.handle.db)
      writeFileSync(hanging.flagFile, 'relayer-a')
      try {
        const results: { status: number; txHash: unknown }[] = []
        for (let i = 0; i < 6; i++) {
          const response = await httpRelay(url, user.authorization, newBody())
          results.push({ status: response.status, txHash: response.json.txHash })
        }
        // At most the one relay that met the hung key before its timeout fails (502, chain_unavailable: retry); b takes the rest.
        const failed = results.filter((result) => result.status !== 201)
        expect(failed.map((result) => result.status)).toEqual(failed.length === 0 ? [] : [502])
        const confirmed = results.filter((result) => result.status === 201)
        expect(confirmed.length).toBeGreaterThanOrEqual(5)
        for (const result of confirmed) expect((await senderOf(result.txHash)).toLowerCase()).toBe(b)
        expect(await signerUp(a!)).toBe('0')
        expect(await signerUp(b!)).toBe('1')
        expect(output.join('\n')).toContain('out of rotation')
        expect(output.join('\n')).not.toContain(token.pin)
      } finally {
        rmSync(hanging.flagFile)
      }
      await expect.poll(() => signerUp(a!), { timeout: 30_000 }).toBe('1')
      const again = await Promise.all(Array.from({ length: 6 }, () => httpRelay(url, user.authorization, newBody())))
      expect(again.map((response) => response.status)).toEqual(Array(6).fill(201))
      const senders = await Promise.all(again.map((response) => senderOf(response.json.txHash)))
      expect(new Set(senders.map((sender) => sender.toLowerCase()))).toEqual(new Set([a, b]))
    }, 120_000)
  })
})
