// The service's PDF signature (POST /api/pdf-signatures' work, without HTTP and the database): a CMS over a digest
// with the development identity, timestamped by the development TSA, against its floor measured in the same run:
// the two bare ECDSA P-256 signatures (WebCrypto) it cannot do without, one for the CMS and one for the token.
// The aim, 12×, is what pkijs's encoding of the two SignedData structures leaves (most of the 2.3 ms measured on
// 2026-11-25; a CPU profile in docs/performance.md): meeting 4× would take a hand-written DER encoder, which is not
// this project's to write; the aim is there to catch the certificate re-encoding and the self-check coming back.

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { developmentIdentity } from '../src/pdf-signing/development-certificates.ts'
import { developmentTimestampAuthority } from '../src/pdf-signing/development-timestamp-authority.ts'
import { EC_KEY } from '../src/pdf-signing/issue-certificate.ts'
import { PdfSigner } from '../src/pdf-signing/pdf-signer.ts'
import { atMost, median, printRatioTable } from './ratio-table.ts'

const RUNS = 7
const OPS = 200

const work = await mkdtemp(join(tmpdir(), 'anchor-bench-pdf-signing-'))
try {
  const identity = await developmentIdentity(work)
  const signer = new PdfSigner(identity.signing, developmentTimestampAuthority(identity.timestamping))
  const { privateKey } = (await crypto.subtle.generateKey(EC_KEY, false, ['sign', 'verify'])) as CryptoKeyPair
  const digest = crypto.getRandomValues(new Uint8Array(32))
  // What each ECDSA signature covers: signed attributes of about this size.
  const attributes = crypto.getRandomValues(new Uint8Array(220))

  /** Microseconds per operation, over OPS operations in a row. */
  const perOp = async (op: () => Promise<unknown>) => {
    const start = performance.now()
    for (let i = 0; i < OPS; i++) await op()
    return ((performance.now() - start) * 1000) / OPS
  }
  const floorOp = async () => {
    await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, attributes)
    await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, attributes)
  }
  await perOp(floorOp)
  await perOp(() => signer.sign(digest))
  const floors: number[] = []
  const measured: number[] = []
  for (let run = 0; run < RUNS; run++) {
    floors.push(await perOp(floorOp))
    measured.push(await perOp(() => signer.sign(digest)))
  }
  const floor = median(floors)
  const sign = median(measured)
  const show = (us: number) => `${(us / 1000).toFixed(2)} ms (${Math.round(1e6 / us)}/s)`
  printRatioTable(`pdf-signing: median of ${RUNS} runs of ${OPS}, floor = two bare ECDSA P-256 signatures`, [
    {
      path: 'PDF signature CMS + development TSA token',
      measured: show(sign),
      floor: show(floor),
      ...atMost(sign / floor, 12),
    },
  ])
} finally {
  await rm(work, { recursive: true, force: true })
}
