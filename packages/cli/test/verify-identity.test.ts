// `anchor verify` against forged identities and forged contracts, as an attacker would make them: real PDFs signed
// through the real relay on anvil, and a look-alike DocumentAnchors deployment the PDF names.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type AnchorPayloadInput,
  type AnchorRequest,
  certifiedSigner,
  createAnchorClient,
  signPdf,
} from '@docanchor/client'
import type { Hash } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deployDocumentAnchors } from '../../../src/chain/deploy-document-anchors.ts'
import { documentAnchorsAbi } from '../../../src/chain/document-anchors-artifact.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { pdfLibDocument } from '../../client/test/pdf/portable-fixtures.ts'
import { testPdfSignature } from '../../client/test/pdf/test-pdf-signer.ts'
import { ServiceClient } from '../src/service-client.ts'
import { runAnchor } from './helpers/run-anchor.ts'

/** Where nothing listens: the default service, down. */
const DOWN = 'http://127.0.0.1:1'
let t: TestApp
let url: string
let dir: string
let mallory: SignedInUser

type Signer = AnchorPayloadInput['signer']
const ceo: Signer = {
  type: 'individual',
  name: 'The CEO',
  email: 'ceo@bigcorp.example',
  trust: 'google',
  verified: true,
}

/** Signs `input` once as `signer`, anchored through the relay with mallory's login; `salt: false` as an old client. */
async function signAs(input: Uint8Array, signer: Signer, options: { salt?: boolean } = {}): Promise<Uint8Array> {
  const client = new ServiceClient(url, mallory.token)
  const info = await client.info()
  const result = await signPdf(input, {
    signer,
    verifyBaseUrl: 'https://verify.example.com',
    chainId: info.chainId,
    contractAddress: info.contractAddress,
    anchor: ({ salt, ...request }) =>
      client.relay(((options.salt ?? true) ? { ...request, salt } : request) as AnchorRequest),
    pdfSignature: (await certifiedSigner(createAnchorClient({ baseUrl: url, token: mallory.token }))).pdfSignature,
  })
  return result.bytes
}

async function save(name: string, bytes: Uint8Array): Promise<string> {
  const file = join(dir, name)
  await writeFile(file, bytes)
  return file
}

/** `anchor verify --json` through the service; the parsed output and the exit code. */
async function verify(file: string, ...flags: string[]) {
  const run = await runAnchor(['verify', file, '--json', ...flags], {
    XDG_CONFIG_HOME: join(dir, 'config-service'),
    ANCHOR_URL: url,
  })
  return { code: run.code, result: JSON.parse(run.stdout), stdout: run.stdout, stderr: run.stderr }
}

beforeAll(async () => {
  t = await createTestApp({ env: { VERIFY_CACHE_TTL_SECONDS: '0' } })
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'anchor-identity-'))
  mallory = await signInTestUser(t, 'mallory@example.com')
}, 120_000)

afterAll(async () => {
  await t?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('anchor verify: the identity of each signature', () => {
  it('attested: the honest signer', async () => {
    const file = await save(
      'honest.pdf',
      await signAs(await pdfLibDocument(), { ...ceo, email: 'Mallory@example.com', trust: 'email' }),
    )
    const { code, result } = await verify(file)
    expect(result.signatures[0]).toMatchObject({
      valid: true,
      identity: 'attested',
      identityMismatches: [],
      attestation: { trust: 'email', verified: true },
    })
    expect(code).toBe(0)
  })

  it.each([
    ['a forged e-mail', { ...ceo, trust: 'email' }, ['email']],
    ['a forged provider', { ...ceo, email: 'mallory@example.com' }, ['trust']],
    ['a forged verified flag', { ...ceo, email: 'mallory@example.com', trust: 'email', verified: false }, ['verified']],
    ['everything forged', ceo, ['email', 'trust']],
  ] as const)('mismatch: %s fails the signature and the exit code', async (_, signer, mismatches) => {
    const file = await save('forged.pdf', await signAs(await pdfLibDocument(), signer as Signer))
    const { code, result, stdout } = await verify(file)
    expect(result.valid).toBe(false)
    expect(result.signatures[0]).toMatchObject({ valid: false, identity: 'mismatch', identityMismatches: mismatches })
    // The document and its anchor are fine: the identity alone is what fails.
    expect(result.signatures[0].checks).toEqual({ documentHash: 'match', anchor: 'found', payload: 'decrypted' })
    expect(result.signatures[0].problems).toEqual([
      expect.stringMatching(/^the signer's identity is not what the service attests .*signed in with email/),
    ])
    expect(code).toBe(1)

    const text = await runAnchor(['verify', file], { XDG_CONFIG_HOME: join(dir, 'config-service'), ANCHOR_URL: url })
    expect(text.stdout).toContain('identity MISMATCH: not what the service attests')
    expect(text.stdout).toContain('NOT VERIFIED.')
    expect(stdout).not.toContain('"identity": "attested"')
  })

  it('claimed: a relay without salt (an older client) carries no attestation and passes as a claim', async () => {
    const file = await save('old-client.pdf', await signAs(await pdfLibDocument(), ceo, { salt: false }))
    const { code, result } = await verify(file)
    expect(result.signatures[0]).toMatchObject({ valid: true, identity: 'claimed', attestation: null })
    expect(code).toBe(0)
  })

  it('judges each signature of a chain mixing attested, claimed and forged identities', async () => {
    const honest = await signAs(await pdfLibDocument(), { ...ceo, email: 'mallory@example.com', trust: 'email' })
    const claimed = await signAs(honest, ceo, { salt: false })
    const forged = await signAs(claimed, ceo)
    const { code, result } = await verify(await save('mixed.pdf', forged))
    expect(result.signatures.map((s: { identity: string }) => s.identity)).toEqual(['attested', 'claimed', 'mismatch'])
    expect(result.signatures.map((s: { valid: boolean }) => s.valid)).toEqual([true, true, false])
    expect(code).toBe(1)
  })
})

describe('anchor verify --rpc: the contract is never the PDF’s word', () => {
  let honestPdf: string
  let forgedPdf: string
  let lookAlike: Hash
  const contract = () => t.chain.contractAddress.toLowerCase()
  /** A user with no service configured and no login, the default service down: only --contract and pins vouch. */
  const offline = (argv: string[], configHome = join(dir, 'config-offline')) =>
    runAnchor(argv, { XDG_CONFIG_HOME: configHome, ANCHOR_URL: '' }, undefined, { defaultService: DOWN })
  /** The same user with the default service up (the README's walk-through after `anchor logout`). */
  const loggedOut = (argv: string[], configHome = join(dir, 'config-logged-out')) =>
    runAnchor(argv, { XDG_CONFIG_HOME: configHome, ANCHOR_URL: '' }, undefined, { defaultService: url })

  beforeAll(async () => {
    honestPdf = await save('rpc-honest.pdf', await signAs(await pdfLibDocument(), ceo, { salt: false }))
    // The forger deploys their own DocumentAnchors, anchors what they like there and names it in the metadata.
    const wallet = t.testChain.walletClient(1)
    lookAlike = (await deployDocumentAnchors(wallet, t.testChain.publicClient, {
      relayers: [wallet.account.address],
    })) as Hash
    const forged = await signPdf(await pdfLibDocument(), {
      signer: ceo,
      verifyBaseUrl: 'https://verify.example.com',
      chainId: t.chain.chainId,
      contractAddress: lookAlike,
      anchor: async (request: AnchorRequest) => {
        const txHash = await wallet.writeContract({
          address: lookAlike,
          abi: documentAnchorsAbi,
          functionName: 'anchor',
          args: [request.compositeHash as Hash, request.previousTxHash as Hash],
          gas: 100_000n,
        })
        await t.testChain.publicClient.waitForTransactionReceipt({ hash: txHash })
        return { txHash }
      },
      // And signs the PDF with a certificate of their own.
      pdfSignature: testPdfSignature,
    })
    forgedPdf = await save('rpc-forged.pdf', forged.bytes)
  })

  it('refuses a contract named only in the PDF, naming --contract and the PDF’s contract', async () => {
    for (const file of [honestPdf, forgedPdf]) {
      const run = await offline(['verify', file, '--rpc', t.testChain.rpcUrl])
      expect(run.code).toBe(2)
      expect(run.stderr).toContain('--contract <address>')
      expect(run.stderr).toContain(`the default service at ${DOWN}, which would name one, did not answer`)
      expect(run.stderr).toContain(`the PDF names contract ${file === forgedPdf ? lookAlike : t.chain.contractAddress}`)
      expect(run.stdout).not.toContain('Verified')
    }
  })

  it('with --contract, checks that contract only: the forger’s anchors are not found', async () => {
    const run = await offline(['verify', forgedPdf, '--rpc', t.testChain.rpcUrl, '--contract', contract()])
    expect(run.stdout).toContain(`checked on chain ${t.chain.chainId} against contract ${contract()} (from --contract)`)
    expect(run.stdout).toContain('no anchor with transaction hash')
    expect(run.code).toBe(1)
  })

  it('after logout, takes the default service’s contract as plain verify takes its answers: one rule for both', async () => {
    const plain = await loggedOut(['verify', honestPdf, '--json'])
    expect(JSON.parse(plain.stdout)).toMatchObject({ valid: true, source: 'service', contractSource: 'service' })
    const run = await loggedOut(['verify', honestPdf, '--rpc', t.testChain.rpcUrl])
    expect(run.stdout).toContain(`against contract ${contract()} (from the service's /api/info)`)
    expect(run.stdout).toContain(`anchors read from the chain at ${new URL(t.testChain.rpcUrl).origin}`)
    expect(run.code).toBe(0)
    // A forged identity is found through the default service too, as plain verify finds it.
    const forged = await save('rpc-forged-identity-default.pdf', await signAs(await pdfLibDocument(), ceo))
    const identity = JSON.parse((await loggedOut(['verify', forged, '--rpc', t.testChain.rpcUrl, '--json'])).stdout)
    expect(identity.signatures[0]).toMatchObject({ identity: 'mismatch', valid: false })
  })

  it('takes the configured service’s contract from /api/info', async () => {
    const run = await runAnchor(['verify', honestPdf, '--rpc', t.testChain.rpcUrl, '--json'], {
      XDG_CONFIG_HOME: join(dir, 'config-service'),
      ANCHOR_URL: url,
    })
    expect(JSON.parse(run.stdout)).toMatchObject({
      valid: true,
      chainId: t.chain.chainId,
      contract: contract(),
      contractSource: 'service',
    })
    expect(run.code).toBe(0)
  })

  it('still finds a forged identity with --rpc when the service is configured, and only then', async () => {
    const forged = await save('rpc-forged-identity.pdf', await signAs(await pdfLibDocument(), ceo))
    const run = await runAnchor(['verify', forged, '--rpc', t.testChain.rpcUrl, '--json'], {
      XDG_CONFIG_HOME: join(dir, 'config-service'),
      ANCHOR_URL: url,
    })
    expect(JSON.parse(run.stdout).signatures[0]).toMatchObject({ identity: 'mismatch', valid: false })
    expect(run.code).toBe(1)
    // Under --contract, a service nobody configured vouched for nothing: the identity is a claim, as the docs say.
    const offlineRun = await loggedOut([
      'verify',
      forged,
      '--rpc',
      t.testChain.rpcUrl,
      '--contract',
      contract(),
      '--json',
    ])
    expect(JSON.parse(offlineRun.stdout).signatures[0]).toMatchObject({ identity: 'claimed' })
  })

  it('trusts a pinned contract, and still refuses a PDF naming one that is not pinned', async () => {
    const home = join(dir, 'config-pinned')
    const pin = await offline(['pin', t.chain.contractAddress, '--chain-id', String(t.chain.chainId)], home)
    expect(pin).toMatchObject({ code: 0, stdout: `Pinned ${contract()} on chain ${t.chain.chainId}.\n` })
    const stored = JSON.parse(await readFile(join(home, 'anchor', 'pins.json'), 'utf8'))
    expect(stored.pins).toEqual([expect.objectContaining({ chainId: t.chain.chainId, contract: contract() })])

    const honest = await offline(['verify', honestPdf, '--rpc', t.testChain.rpcUrl, '--json'], home)
    expect(JSON.parse(honest.stdout)).toMatchObject({ valid: true, contract: contract(), contractSource: 'pinned' })
    expect(honest.code).toBe(0)

    const forged = await offline(['verify', forgedPdf, '--rpc', t.testChain.rpcUrl], home)
    expect(forged.code).toBe(2)
    expect(forged.stderr).toContain(`the PDF names contract ${lookAlike}`)
    expect(forged.stderr).toContain(`not among your pinned contracts on chain ${t.chain.chainId} (${contract()})`)

    // A pin on another chain vouches for nothing here.
    const elsewhere = join(dir, 'config-elsewhere')
    await offline(['pin', t.chain.contractAddress, '--chain-id', '1'], elsewhere)
    expect((await offline(['verify', honestPdf, '--rpc', t.testChain.rpcUrl], elsewhere)).code).toBe(2)
  })

  it('pins the service’s contract, lists and removes pins', async () => {
    const home = join(dir, 'config-from-service')
    const pinned = await runAnchor(['pin', '--from-service'], { XDG_CONFIG_HOME: home, ANCHOR_URL: url })
    expect(pinned.stdout).toBe(`Pinned ${contract()} on chain ${t.chain.chainId}.\n`)
    const list = await offline(['pin', '--list', '--json'], home)
    expect(JSON.parse(list.stdout).pins).toEqual([
      expect.objectContaining({ contract: contract(), source: `service ${url}` }),
    ])
    expect((await offline(['pin', '--remove', t.chain.contractAddress], home)).code).toBe(0)
    expect((await offline(['pin', '--list'], home)).stdout).toBe('No contracts pinned.\n')
    expect((await offline(['pin', t.chain.contractAddress], home)).stderr).toContain('--chain-id is required')
  })
})
