// Checks every signature of a PDF: its document hash against the right byte prefix, its payload (decrypted with
// the QR URL's key, or rebuilt from the metadata) against the composite hash anchored on chain, the chain links
// between signatures, and the PDF signature (PAdES) its revision carries; checks every other product's PDF signature
// too; and reports bytes that no signature covers. Shared by the CLI and the verification page.

import { type AnchorPayload, parseAnchorPayload } from '../formats/anchor-payload.ts'
import { compositeHash, compositeHashesEqual } from '../formats/composite-hash.ts'
import { ZERO_TX_HASH } from '../formats/constants.ts'
import { toHex } from '../formats/hex.ts'
import { decideIdentity, type IdentityAttestation, type IdentityDecision } from '../formats/identity-attestation.ts'
import { decryptPayload } from '../formats/payload-cipher.ts'
import { type PdfSignature, rebuildPayloadFromMetadata } from '../formats/pdf-metadata.ts'
import { parseQrUrl } from '../formats/qr-url.ts'
import { checkPdfSignature, type PdfSignatureCheck } from './check-pdf-signatures.ts'
import { certificateOf } from './cms/der.ts'
import { latestMetadata, readSignedPdf, type SignedPdf, type SignedPdfRevision } from './read-signed-pdf.ts'
import type { RevisionChange, RevisionNote } from './revision-changes.ts'
import { describeStructureProblem } from './revision-structure.ts'
import { changedAfterSigning, changesAfter, describeChanges } from './signature-changes.ts'

/** What the check needs to know about an anchor: the fields of a `GET /api/verify/:txHash` answer. */
export interface AnchorRecord {
  txHash: string
  compositeHash: string
  previousTxHash: string
  timestamp: number
  signer: string
  /** The stored ciphertext; null when the source holds none (an anchor read straight from the chain). */
  encryptedPayload: string | null
  /** The service's attestation of the account that relayed it; null or absent when there is none to be had. */
  attestation?: IdentityAttestation | null
}

export interface CheckSignedPdfOptions {
  /** Looks an anchor up by transaction hash: null when there is none; throws when the lookup itself fails. */
  verify: (txHash: string) => Promise<AnchorRecord | null>
  /** QR URLs supplied by the user (scanned from the page) for signatures whose metadata holds none (version 1). */
  qrUrls?: readonly string[]
  /** The user password of an encrypted PDF that has one. */
  password?: string
  /**
   * The service's CA certificates (DER; its /api/info's pdfSigning): an anchored signature's PDF signature must be
   * made with a certificate one of them issued. Without any, no issuer is required of it.
   */
  serviceCertificates?: readonly Uint8Array[]
  /** Roots (DER) other products' signers and the time-stamping authorities may chain to: the system's, say. */
  trustedCertificates?: readonly Uint8Array[]
  /**
   * Roots (DER) the service's time-stamping authorities chain to (its /api/info's pdfSigning.timestampCertificates):
   * trusted for timestamps only, never for signers.
   */
  timestampCertificates?: readonly Uint8Array[]
}

/**
 * How far a signature's timestamp may lie from its anchor's block time: the PDF signature is made right after the
 * anchor is confirmed, so a little before (clocks differ) and at most an hour after.
 */
export const TIMESTAMP_WINDOW_SECONDS = { before: 300, after: 3600 } as const

export interface SignatureCheck {
  /** 1-based position in the metadata. */
  position: number
  signature: PdfSignature
  /** The revision whose metadata first lists this signature; its bytes start where the signed prefix ends. */
  revision: number | null
  /** Length of the byte prefix the document hash covers, when a matching one was found. */
  signedBytes: number | null
  documentHash: 'match' | 'mismatch' | 'unknown'
  anchor: 'found' | 'not-found' | 'mismatch'
  /** How the payload was tied to the anchored composite hash. */
  payload: 'decrypted' | 'rebuilt' | 'unchecked' | 'failed'
  anchorRecord: AnchorRecord | null
  /** Whether the service attests the payload's identity; null when no payload could be tied to the anchor. */
  identity: IdentityDecision | null
  /** The PDF signature its revision carries; null for signatures made before those existed (QR code as content). */
  pdfSignature: PdfSignatureCheck | null
  /**
   * What its own revision (when made with a PDF signature) and every later one changed that a later revision may not
   * change (revision-changes.ts): when there is any, what the file shows is not what was signed.
   */
  changes: RevisionChange[]
  valid: boolean
  /** Every reason it is not valid, in words. */
  problems: string[]
}

export interface PdfCheckResult {
  /** True only when there is at least one signature, every one is valid and no bytes follow the last one. */
  valid: boolean
  signatures: SignatureCheck[]
  revisions: Omit<SignedPdfRevision, 'metadata'>[]
  /** Bytes after the revision of the last signature (later revisions and trailing bytes), or null. */
  unsignedBytes: { start: number; length: number; revisions: number } | null
  /** PDF signatures no anchored signature made: another product's, each checked all the same. */
  otherSignatures: PdfSignatureCheck[]
  /** Changes after the first signature that alter nothing shown (document information, XMP metadata). */
  notes: RevisionNote[]
  /** Problems of the document as a whole (no signatures, unreadable metadata, unsigned bytes, broken signatures). */
  problems: string[]
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)))
}

/**
 * Where signature prefixes may end for a revision starting at `start`: the revision start itself, and, when the
 * previous revision ends with an end-of-line after `%%EOF`, the start without that end-of-line (a writer adds one
 * when the signed file did not end with one).
 */
function prefixCandidates(bytes: Uint8Array, start: number): number[] {
  const candidates = [start]
  if (bytes[start - 1] === 0x0a && bytes[start - 2] === 0x0d) candidates.push(start - 2)
  else if (bytes[start - 1] === 0x0a || bytes[start - 1] === 0x0d) candidates.push(start - 1)
  return candidates
}

const sameSignature = (a: PdfSignature, b: PdfSignature) => JSON.stringify(a) === JSON.stringify(b)

/** Differences between the decrypted payload and what the metadata says about it. */
function payloadDifferences(text: string, signature: PdfSignature): string[] {
  const payload = parseAnchorPayload(text, { requireCanonical: false })
  const differences: string[] = []
  const expect = (field: string, a: unknown, b: unknown) => {
    if (JSON.stringify(a ?? null) !== JSON.stringify(b ?? null)) differences.push(field)
  }
  expect('doc_hash', payload.d.toLowerCase(), signature.doc_hash.toLowerCase())
  expect('signer_type', payload.s.t, signature.signer_type)
  expect('signer_name', payload.s.n, signature.signer_name)
  expect('signer_email', payload.s.e, signature.signer_email)
  if (signature.salt !== null) {
    expect('company', payload.s.c, signature.company || null)
    expect('position', payload.s.p, signature.position || null)
    expect('salt', payload.salt, signature.salt)
    expect('geo', payload.g ? [payload.g.la, payload.g.ln] : null, signature.geo)
  }
  expect('timestamp', payload.ts, Math.floor(Date.parse(signature.timestamp) / 1000))
  return differences
}

async function checkSignature(
  pdf: SignedPdf,
  signature: PdfSignature,
  position: number,
  previous: PdfSignature | undefined,
  options: CheckSignedPdfOptions,
  hashes: Map<number, Promise<string>>,
): Promise<SignatureCheck> {
  const problems: string[] = []
  const check: SignatureCheck = {
    position,
    signature,
    revision: null,
    signedBytes: null,
    documentHash: 'unknown',
    anchor: 'not-found',
    payload: 'unchecked',
    anchorRecord: null,
    identity: null,
    pdfSignature: null,
    changes: [],
    valid: false,
    problems,
  }

  // The metadata of every revision that lists this signature must agree with the latest one.
  for (const revision of pdf.revisions) {
    const listed = revision.metadata?.signatures[position - 1]
    if (!listed || listed.tx_hash.toLowerCase() !== signature.tx_hash.toLowerCase()) continue
    check.revision ??= revision.index
    if (!sameSignature(listed, signature)) {
      problems.push(`its metadata in revision ${revision.index} differs from the latest revision's`)
    }
  }

  if (check.revision === null || check.revision === 0) {
    problems.push('no incremental revision introduces it, so the signed part of the file is unknown')
  } else {
    const start = pdf.revisions[check.revision]!.start
    check.documentHash = 'mismatch'
    for (const length of prefixCandidates(pdf.bytes, start)) {
      // Prefixes are shared between signatures' candidates: hash each length once.
      const hash = hashes.get(length) ?? sha256Hex(pdf.bytes.subarray(0, length))
      hashes.set(length, hash)
      if ((await hash) === signature.doc_hash.toLowerCase()) {
        check.documentHash = 'match'
        check.signedBytes = length
        break
      }
    }
    if (check.documentHash === 'mismatch') {
      problems.push(`the first ${start} bytes of the file changed since it was signed (document hash mismatch)`)
    }
  }

  const record = await options.verify(signature.tx_hash)
  check.anchorRecord = record
  if (!record) {
    problems.push(`no anchor with transaction hash ${signature.tx_hash} exists`)
  } else {
    check.anchor = compositeHashesEqual(record.compositeHash, signature.composite_hash) ? 'found' : 'mismatch'
    if (check.anchor === 'mismatch') problems.push('the composite hash anchored on chain differs from the metadata')
    const expectedPrevious = previous?.tx_hash ?? ZERO_TX_HASH
    if (!compositeHashesEqual(record.previousTxHash, expectedPrevious)) {
      problems.push(
        previous
          ? `on chain it follows ${record.previousTxHash}, not the previous signature ${previous.tx_hash}`
          : `on chain it follows ${record.previousTxHash}, but it is the document's first signature`,
      )
    }
  }

  // Tie the payload (and so the document hash and the signer) to the anchored composite hash.
  const qrUrl =
    signature.qr_url ??
    options.qrUrls?.find((url) => {
      try {
        return compositeHashesEqual(parseQrUrl(url).txHash, signature.tx_hash)
      } catch {
        return false
      }
    })
  const failures: string[] = []
  let proven: AnchorPayload | undefined
  if (record && qrUrl && record.encryptedPayload !== null) {
    try {
      const text = await decryptPayload(record.encryptedPayload, parseQrUrl(qrUrl).key)
      if (!compositeHashesEqual(await compositeHash(text), record.compositeHash)) {
        failures.push('the stored payload does not hash to the anchored composite hash')
      } else {
        const differences = payloadDifferences(text, signature)
        if (differences.length > 0)
          failures.push(`the metadata differs from the anchored payload: ${differences.join(', ')}`)
        else {
          proven = parseAnchorPayload(text, { requireCanonical: false })
          check.payload = 'decrypted'
        }
      }
    } catch {
      failures.push('the stored payload does not decrypt with the key in the QR URL')
    }
  }
  if (record && signature.salt !== null) {
    try {
      const rebuilt = await rebuildPayloadFromMetadata(signature)
      if (compositeHashesEqual(rebuilt.compositeHash, record.compositeHash)) {
        if (!proven) check.payload = 'rebuilt'
        proven ??= rebuilt.payload
      } else failures.push('the payload rebuilt from the metadata does not hash to the anchored composite hash')
    } catch (error) {
      failures.push(`the payload cannot be rebuilt from the metadata: ${(error as Error).message}`)
    }
  }
  if (failures.length > 0) {
    check.payload = 'failed'
    problems.push(...failures)
  } else if (record && !proven) {
    problems.push(
      qrUrl
        ? 'the service holds no payload for it and its metadata has no salt, so nothing ties it to the document'
        : 'its metadata (version 1) has neither QR URL nor salt: give the QR URL printed on the page to check it',
    )
  }
  if (record && proven) {
    check.identity = await decideIdentity(proven, record.attestation ?? null)
    if (check.identity.state === 'mismatch') {
      const { trust, verified } = check.identity.attestation!
      problems.push(
        `the signer's identity is not what the service attests (${check.identity.mismatches.join(', ')} differ): ` +
          `it was anchored by an account signed in with ${trust}${verified ? '' : ' (identity not verified)'}` +
          (check.identity.mismatches.includes('email') ? `, not by ${proven.s.e}` : ''),
      )
    }
  }
  return check
}

/**
 * The PDF signature of an anchored signature's revision: intact, made by a signer the service's CA certified, naming
 * this anchor in what it signs, by the e-mail the service attests, timestamped near the anchor.
 */
function judgeOwnPdfSignature(check: SignatureCheck, pdfSignature: PdfSignatureCheck, serviceKnown: boolean): void {
  check.pdfSignature = pdfSignature
  const { problems, signature } = check
  if (pdfSignature.status === 'not checked') problems.push(`its PDF signature is of a kind not checked here`)
  if (pdfSignature.status === 'invalid')
    problems.push(`its PDF signature is invalid: ${pdfSignature.problems.join('; ')}`)
  if (pdfSignature.status !== 'valid') return
  if (serviceKnown && !pdfSignature.certifiedByService) {
    problems.push(
      `its PDF signature's certificate was not issued by the service's CA (${pdfSignature.signer?.subject})`,
    )
  }
  const { anchor } = pdfSignature
  if (!anchor) problems.push('its PDF signature does not name its anchor (made before signers had certificates)')
  else {
    const composite = check.anchorRecord?.compositeHash ?? signature.composite_hash
    const named =
      anchor.txHash === signature.tx_hash.toLowerCase() &&
      compositeHashesEqual(anchor.compositeHash, composite) &&
      (signature.chain_id == null || anchor.chainId === signature.chain_id) &&
      (signature.contract_address == null || anchor.contract === signature.contract_address.toLowerCase())
    if (!named) problems.push(`its PDF signature names another anchor (transaction ${anchor.txHash})`)
  }
  const email = signature.signer_email.toLowerCase()
  if (check.identity?.state === 'attested' && pdfSignature.signerEmail !== email) {
    problems.push(
      `its PDF signature was made with a certificate of ${pdfSignature.signerEmail ?? 'no e-mail'}, not of ${email}, ` +
        'whom the service attests',
    )
  }
  const { timestamp } = pdfSignature
  if (!timestamp) {
    problems.push('its PDF signature has no timestamp')
    return
  }
  if (serviceKnown && !timestamp.trusted) {
    problems.push(
      `its PDF signature's timestamp is by an authority neither the service nor you trust (${timestamp.authority})`,
    )
  }
  const block = check.anchorRecord?.timestamp
  if (block === undefined) return
  const offset = Date.parse(timestamp.time) / 1000 - block
  if (offset < -TIMESTAMP_WINDOW_SECONDS.before || offset > TIMESTAMP_WINDOW_SECONDS.after) {
    problems.push(
      `its PDF signature was timestamped at ${timestamp.time}, ${describeOffset(offset)} the anchor's block ` +
        `(${new Date(block * 1000).toISOString()})`,
    )
  }
}

function describeOffset(seconds: number): string {
  const minutes = Math.round(Math.abs(seconds) / 60)
  return `${minutes} minutes ${seconds < 0 ? 'before' : 'after'}`
}

/** Reads and checks a PDF. Throws `PdfError` for unreadable files and whatever `verify` throws for lookups. */
export async function checkSignedPdf(
  input: Uint8Array | SignedPdf,
  options: CheckSignedPdfOptions,
): Promise<PdfCheckResult> {
  const pdf = input instanceof Uint8Array ? await readSignedPdf(input, { password: options.password }) : input
  const problems: string[] = []
  for (const revision of pdf.revisions) {
    if (revision.metadataError) {
      problems.push(`the signature metadata of revision ${revision.index} cannot be read: ${revision.metadataError}`)
    }
  }
  const latest = latestMetadata(pdf)
  const signatures = latest?.metadata?.signatures ?? []
  const hashes = new Map<number, Promise<string>>()
  const checks: SignatureCheck[] = []
  for (const [i, signature] of signatures.entries()) {
    checks.push(await checkSignature(pdf, signature, i + 1, signatures[i - 1], options, hashes))
  }
  if (signatures.length === 0) problems.push('the PDF has no signatures')

  const service = options.serviceCertificates ?? []
  // `trusted` means one thing everywhere: the certificate chains to a root the verifier trusts (the system's, or ones
  // it was given), as a reader would say. The service's CA says who certified the signer (`certifiedByService`), not
  // that anyone trusts it: its development CA is trusted by no reader.
  const roots = (options.trustedCertificates ?? []).map((der) => certificateOf(der))
  const timestampRoots = [
    ...service,
    ...(options.timestampCertificates ?? []),
    ...(options.trustedCertificates ?? []),
  ].map((der) => certificateOf(der))
  const otherSignatures: PdfSignatureCheck[] = []
  for (const field of pdf.pdfSignatures) {
    const pdfSignature = await checkPdfSignature(pdf, field, { roots, timestampRoots, service })
    const own = checks.find((check) => check.revision === field.revision && check.pdfSignature === null)
    if (own) judgeOwnPdfSignature(own, pdfSignature, service.length > 0)
    else {
      otherSignatures.push(pdfSignature)
      if (pdfSignature.status === 'invalid') {
        problems.push(
          `another product's PDF signature${fieldName(pdfSignature)} is invalid: ${pdfSignature.problems.join('; ')}`,
        )
      }
    }
  }
  judgeChanges(pdf, checks, otherSignatures, problems)
  for (const check of checks) check.valid = check.problems.length === 0

  let unsignedBytes: PdfCheckResult['unsignedBytes'] = null
  const lastRevision = checks[checks.length - 1]?.revision
  const signedEnd = lastRevision ? pdf.revisions[lastRevision]!.end : 0
  if (signatures.length > 0 && signedEnd < pdf.bytes.length) {
    const laterRevisions = pdf.revisions.filter((revision) => revision.start >= signedEnd).length
    unsignedBytes = { start: signedEnd, length: pdf.bytes.length - signedEnd, revisions: laterRevisions }
    // Later revisions that only add what may follow a signature (validation data, document timestamps, other
    // signatures) change nothing shown; anything else, or bytes outside any revision, is reported.
    const changedLater = pdf.changes.some((change) => change.revision > (lastRevision ?? 0))
    if (changedLater) {
      problems.push(
        `${unsignedBytes.length} bytes were added after the last signature` +
          (laterRevisions > 0 ? ` (${laterRevisions} unsigned revision${laterRevisions > 1 ? 's' : ''})` : ''),
      )
    } else if (pdf.trailingBytes > 0) {
      // Bytes outside any revision: after the validation data, when the file has some.
      const after = laterRevisions > 0 ? 'the last revision' : 'the last signature'
      problems.push(`${pdf.trailingBytes} bytes were added after ${after}`)
    }
  }
  return {
    valid: problems.length === 0 && checks.every((check) => check.valid),
    signatures: checks,
    revisions: pdf.revisions.map(({ metadata: _, ...revision }) => revision),
    unsignedBytes,
    otherSignatures,
    notes: pdf.notes,
    problems,
  }
}

/**
 * A signature followed by a change is not valid, whoever made it: what it signed is intact, but not what a reader
 * shows. The structure of the revisions must be unambiguous, and a certification's permissions kept.
 */
function judgeChanges(
  pdf: SignedPdf,
  checks: SignatureCheck[],
  otherSignatures: PdfSignatureCheck[],
  problems: string[],
): void {
  const structure = pdf.structureProblems.map(describeStructureProblem)
  for (const check of checks) {
    if (check.revision === null || check.revision === 0) continue
    const signed = { revision: check.revision, ownRevisionCounts: check.pdfSignature !== null }
    check.changes = changesAfter(pdf, signed)
    if (check.changes.length > 0) {
      check.problems.push(changedAfterSigning(signed, check.changes, check.signature.signer_name))
    }
    check.problems.push(...structure)
  }
  if (checks.length === 0) problems.push(...structure)
  for (const other of otherSignatures) {
    const changes = changesAfter(pdf, { revision: other.revision, ownRevisionCounts: false })
    if (changes.length === 0) continue
    problems.push(
      `another product's PDF signature${fieldName(other)} is intact, but ${describeChanges(changes)} afterwards: ` +
        'what you see is not what it signed',
    )
  }
  const certification = pdf.certification
  if (certification?.permissions === 1) {
    const later = pdf.pdfSignatures.filter(
      (field) => field.revision > certification.revision && field.subFilter !== 'ETSI.RFC3161',
    )
    if (later.length > 0) {
      problems.push(
        `the document was certified with no changes allowed, but revision ${later[0]!.revision} signed it again`,
      )
    }
  }
}

const fieldName = (check: PdfSignatureCheck) => (check.name === null ? '' : ` "${check.name}"`)
