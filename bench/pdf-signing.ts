// A PDF signature as it is made since signers have certificates (issue 37), without HTTP and the database: the
// signer's CMS over a digest with its own key, naming its anchor; the service's check of it (its certificate from
// the development CA, its signature); the development TSA's token added. Against its floor measured in the same run:
// the bare ECDSA P-256 operations (WebCrypto) it cannot do without, two signatures (the CMS, the token) and two
// verifications (the certificate, the CMS). The aim, 12×, is what pkijs's encoding and parsing of the SignedData
// structures leaves: meeting 4× would take a hand-written DER codec, which is not this project's to write.

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { anchoredSignatureCms, certificationRequest, makeSignerKey, webCryptoSigningKey } from '@docanchor/client'
import { developmentIdentity } from '../src/pdf-signing/development-certificates.ts'
import { developmentTimestampAuthority } from '../src/pdf-signing/development-timestamp-authority.ts'
import { EC_KEY } from '../src/pdf-signing/issue-certificate.ts'
import { SignerAuthority } from '../src/pdf-signing/signer-authority.ts'
import { statusUrlsOf } from '../src/pdf-signing/signer-certificate.ts'
import { atMost, median, printRatioTable } from './ratio-table.ts'

const RUNS = 7
const OPS = 200

const work = await mkdtemp(join(tmpdir(), 'anchor-bench-pdf-signing-'))
try {
  const identity = await developmentIdentity(work)
  const authority = new SignerAuthority(
    identity.ca,
    developmentTimestampAuthority(identity.timestamping),
    statusUrlsOf('https://anchors.example'),
  )
  const keys = await makeSignerKey()
  const certificate = await authority.issue(await certificationRequest(keys, 'bench@example.com'), {
    email: 'bench@example.com',
    trust: 'email',
  })
  const signer = { key: webCryptoSigningKey(keys.privateKey), certificates: [certificate, ...authority.certificates] }
  const { privateKey, publicKey } = (await crypto.subtle.generateKey(EC_KEY, false, [
    'sign',
    'verify',
  ])) as CryptoKeyPair
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
  const request = {
    txHash: `0x${hex(crypto.getRandomValues(new Uint8Array(32)))}`,
    digest: hex(crypto.getRandomValues(new Uint8Array(32))),
    compositeHash: `0x${hex(crypto.getRandomValues(new Uint8Array(32)))}`,
    chainId: 31337,
    contractAddress: `0x${'00'.repeat(20)}`,
  }
  const sign = async () => authority.timestamp(await authority.check(await anchoredSignatureCms(signer, request)))
  // What each ECDSA signature covers: signed attributes of about this size.
  const attributes = crypto.getRandomValues(new Uint8Array(220))

  /** Microseconds per operation, over OPS operations in a row. */
  const perOp = async (op: () => Promise<unknown>) => {
    const start = performance.now()
    for (let i = 0; i < OPS; i++) await op()
    return ((performance.now() - start) * 1000) / OPS
  }
  const ecdsa = { name: 'ECDSA', hash: 'SHA-256' }
  const signature = await crypto.subtle.sign(ecdsa, privateKey, attributes)
  const floorOp = async () => {
    await crypto.subtle.sign(ecdsa, privateKey, attributes)
    await crypto.subtle.sign(ecdsa, privateKey, attributes)
    await crypto.subtle.verify(ecdsa, publicKey, signature, attributes)
    await crypto.subtle.verify(ecdsa, publicKey, signature, attributes)
  }
  await perOp(floorOp)
  await perOp(sign)
  const floors: number[] = []
  const measured: number[] = []
  for (let run = 0; run < RUNS; run++) {
    floors.push(await perOp(floorOp))
    measured.push(await perOp(sign))
  }
  const floor = median(floors)
  const made = median(measured)
  const show = (us: number) => `${(us / 1000).toFixed(2)} ms (${Math.round(1e6 / us)}/s)`
  printRatioTable(
    `pdf-signing: median of ${RUNS} runs of ${OPS}, floor = two bare ECDSA P-256 signs and two verifies`,
    [
      {
        path: 'signer’s CMS + the service’s check + development TSA token',
        measured: show(made),
        floor: show(floor),
        ...atMost(made / floor, 12),
      },
    ],
  )
} finally {
  await rm(work, { recursive: true, force: true })
}
