// `anchor verify <file.pdf | QR URL>`: checks every signature of a PDF (or the one a QR URL names) against the
// anchors, through the service or, with --rpc, straight from the chain.

import { rootCertificates } from 'node:tls'
import {
  certificateOf,
  checkSignedPdf,
  commonName,
  compositeHash,
  compositeHashesEqual,
  DEVELOPMENT_CHAIN_ID,
  decideIdentity,
  decryptPayload,
  type IdentityDecision,
  MAX_PDF_BYTES,
  type PdfCheckResult,
  type PdfSignatureCheck,
  parseAnchorPayload,
  parseQrUrl,
  pemCertificates,
  readSignedPdf,
  type SignatureCheck,
} from '@docanchor/client'
import type { Address } from 'viem'
import type { Claims, Lookup } from '../chain-source.ts'
import {
  type CliContext,
  type CliRun,
  configuredService,
  parseCommandArgs,
  readInputFile,
  serviceUrl,
  writeJson,
  writeLines,
} from '../cli-context.ts'
import { EXIT, usageError } from '../cli-errors.ts'
import { displayTime } from '../display-time.ts'
import { PASSWORD_FILE_OPTION, readPasswordFile, refusePasswordOnCommandLine, wrongPassword } from '../pdf-password.ts'
import { ServiceClient } from '../service-client.ts'
import type { TrustedContracts } from '../trusted-contract.ts'

const IDENTITY_WORDS: Record<IdentityDecision['state'], string> = {
  attested: 'attested by the service',
  claimed: 'claimed by the signer’s application, not attested',
  mismatch: 'MISMATCH: not what the service attests',
}

function identityLine(identity: IdentityDecision | null): string {
  if (!identity) return 'identity unchecked (no payload tied to the anchor)'
  const { attestation } = identity
  const account = attestation
    ? ` (anchored by an account signed in with ${attestation.trust}${attestation.verified ? '' : ', unverified'})`
    : ''
  return `identity ${IDENTITY_WORDS[identity.state]}${account}`
}

/** Whether what a reader shows is what was signed: the file's later revisions changed nothing shown, or what. */
function shownLine(check: SignatureCheck): string | null {
  if (check.changes.length === 0) {
    return check.valid ? 'what you see is what was signed: nothing shown changed afterwards' : null
  }
  const pages = [...new Set(check.changes.flatMap((change) => change.pages))].sort((a, b) => a - b)
  const where = pages.length > 0 ? ` (page${pages.length > 1 ? 's' : ''} ${pages.join(', ')})` : ''
  return `what you see is NOT what was signed: the document changed afterwards${where}`
}

const NOT_ATTESTED = 'Name, company and position are as the signer stated them: no one attests them.'

function timestampWords(timestamp: PdfSignatureCheck['timestamp']): string {
  if (!timestamp) return 'no timestamp'
  const trust = timestamp.trusted ? '' : ', authority not trusted'
  return `timestamped ${displayTime(timestamp.time)} by ${timestamp.authority ?? 'an unnamed authority'}${trust}`
}

function ownPdfSignatureLine(pdfSignature: PdfSignatureCheck | null, ca: ServiceCa): string {
  if (!pdfSignature) return 'no PDF signature (signed before the service made them)'
  if (pdfSignature.status !== 'valid') return `PDF signature ${pdfSignature.status.toUpperCase()}`
  const by = pdfSignature.certifiedByService
    ? `the certificate the service's ${ca.development ? 'development CA' : 'CA'} issued ${pdfSignature.signerEmail ?? 'the signer'}`
    : 'a certificate the service did not issue'
  return `PDF signature valid, made with ${by} (${pdfSignature.signer?.subject}), ${timestampWords(pdfSignature.timestamp)}`
}

/**
 * Whether readers trust the signer's certificate: "trusted" means one thing, a root this system trusts, as pdfsig and
 * Acrobat decide; the service's CA only says who certified the signer.
 */
function readerTrustLine(pdfSignature: PdfSignatureCheck | null, ca: ServiceCa): string | null {
  if (pdfSignature?.status !== 'valid') return null
  if (pdfSignature.trusted) return 'its certificate chains to a root this system trusts: PDF readers show it trusted'
  if (pdfSignature.certifiedByService && ca.development) {
    return "its certificate was issued by the service's development CA, which no PDF reader trusts: for trying it out, never for a real signature"
  }
  return (
    'its certificate chains to no root this system trusts: PDF readers show it untrusted unless the ' +
    "service's CA is added to them (docs/operations.md)"
  )
}

/** What the service says of its CA: whether it is the embedded default's development one. */
interface ServiceCa {
  development: boolean
}

const LEVEL_WORDS: Record<NonNullable<PdfSignatureCheck['level']>, string> = {
  'B-B': 'B-B: no timestamp, so nothing shows when it was made',
  'B-T': 'B-T: timestamped, but the file holds no revocation status of its certificate (`anchor extend` adds it)',
  'B-LT': 'B-LT: the file holds its certificate’s revocation status, checked offline',
  'B-LTA': 'B-LTA: the file holds its certificate’s revocation status, and a document timestamp covers it',
}

/** How the PDF signature stands over time: its PAdES level, and what the file says of its certificate. */
function longTermLine(pdfSignature: PdfSignatureCheck | null): string | null {
  if (!pdfSignature?.level) return null
  const { revocation } = pdfSignature
  const status =
    revocation.state === 'good'
      ? ` (not revoked as of ${displayTime(revocation.at)}, by ${revocation.source})`
      : revocation.state === 'revoked'
        ? ` (certificate revoked on ${displayTime(revocation.revokedAt)}, by ${revocation.source})`
        : ''
  return `long-term validation ${LEVEL_WORDS[pdfSignature.level]}${status}`
}

function otherSignatureLine(other: PdfSignatureCheck): string {
  const name = other.name === null ? 'a signature' : `"${other.name}"`
  const where = `${name} (revision ${other.revision}, ${other.subFilter ?? 'unknown kind'})`
  if (other.status !== 'valid') {
    return `${where}: ${other.status === 'invalid' ? 'INVALID' : 'not checked'}: ${other.problems.join('; ')}`
  }
  if (other.subFilter === 'ETSI.RFC3161') {
    const trust = other.trusted ? 'authority trusted' : 'authority NOT trusted'
    return `${where}: document timestamp ${displayTime(other.timestamp?.time ?? '')} by ${other.signer?.commonName}, ${trust}`
  }
  const trust = other.trusted ? 'certificate trusted' : `certificate not trusted: ${other.trustProblem}`
  return `${where}: valid, signed by ${other.signer?.subject}, ${trust}, ${timestampWords(other.timestamp)}`
}

/**
 * When the file needs `anchor extend`: its newest timestamp (the last document timestamp, else the last signature's)
 * is provable by its authority's certificate until that expires.
 */
function renewalLine(result: PdfCheckResult): string | null {
  const timestamps = [
    ...result.signatures.flatMap((check) =>
      check.pdfSignature ? [{ revision: check.pdfSignature.revision, timestamp: check.pdfSignature.timestamp }] : [],
    ),
    ...result.otherSignatures.map((other) => ({ revision: other.revision, timestamp: other.timestamp })),
  ]
  const newest = timestamps.sort((a, b) => a.revision - b.revision).at(-1)?.timestamp
  const until = newest?.certificateNotAfter
  if (!until) return null
  const expired = Date.parse(until) <= Date.now()
  return expired
    ? `the newest timestamp's certificate expired on ${displayTime(until)}: this check still holds (each timestamp is checked at ` +
        "its own time), but validators that check the newest one at today's date no longer accept the file"
    : `the newest timestamp's certificate is valid until ${displayTime(until)}: run \`anchor extend\` on the file before then`
}

function checkedAgainst(trusted: TrustedContracts): string {
  const source = { '--contract': '--contract', service: "the service's /api/info", pinned: 'your pins' }[trusted.source]
  return `checked on chain ${trusted.chainId} against contract ${trusted.contracts.join(', ')} (from ${source})`
}

/** The report's lines: written with writeLines, which shows any control character a name or e-mail holds as text. */
function describe(
  result: PdfCheckResult,
  file: string,
  trusted: TrustedContracts,
  source: string,
  ca: ServiceCa,
): string[] {
  const out: string[] = []
  const n = result.signatures.length
  out.push(`${file}: ${count(n, 'signature')} in ${count(result.revisions.length, 'revision')}`)
  out.push(`  ${checkedAgainst(trusted)}`)
  if (trusted.chainId === DEVELOPMENT_CHAIN_ID) out.push(`  ${DEVELOPMENT_CHAIN_NOTE}`)
  out.push(`  ${source}`)
  for (const check of result.signatures) {
    const s = check.signature
    const who = `${s.signer_name} <${s.signer_email}>${s.company ? `, ${s.position ? `${s.position}, ` : ''}${s.company}` : ''}`
    out.push(`  ${check.valid ? 'valid  ' : 'INVALID'} ${check.position}. ${who}, ${displayTime(s.timestamp)}`)
    out.push(`          transaction ${s.tx_hash}`)
    out.push(`          ${identityLine(check.identity)}`)
    if (check.signedBytes !== null)
      out.push(`          covers bytes 0-${check.signedBytes} (revision ${check.revision})`)
    out.push(`          ${ownPdfSignatureLine(check.pdfSignature, ca)}`)
    const readerTrust = readerTrustLine(check.pdfSignature, ca)
    if (readerTrust) out.push(`          ${readerTrust}`)
    const longTerm = longTermLine(check.pdfSignature)
    if (longTerm) out.push(`          ${longTerm}`)
    const shown = shownLine(check)
    if (shown) out.push(`          ${shown}`)
    for (const problem of check.problems) out.push(`          - ${problem}`)
  }
  for (const note of result.notes) {
    out.push(`  note: revision ${note.revision} changed ${note.what}, which changes nothing a reader shows`)
  }
  if (result.otherSignatures.length > 0) out.push(`  Other PDF signatures and document timestamps:`)
  for (const other of result.otherSignatures) out.push(`    ${otherSignatureLine(other)}`)
  for (const problem of result.problems) out.push(`  ${problem}`)
  const renewal = renewalLine(result)
  if (renewal) out.push(`  ${renewal}`)
  out.push(`  ${NOT_ATTESTED}`)
  out.push(
    !result.valid
      ? 'NOT VERIFIED.'
      : n === 1
        ? 'Verified: the signature is valid.'
        : `Verified: all ${n} signatures are valid.`,
  )
  return out
}

const DEVELOPMENT_CHAIN_NOTE =
  "chain 31337 is a development chain (the embedded default's local anvil): its anchors are no public record"

/** The embedded default names its CA "… development CA (untrusted)" (src/pdf-signing/issue-certificate.ts). */
const isDevelopmentCa = (certificates: readonly Uint8Array[]) =>
  certificates.some((der) => /development CA \(untrusted\)/.test(commonName(certificateOf(der))))

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`

async function verifyQrUrl(
  url: string,
  lookup: Lookup,
  service: ServiceClient,
  context: CliContext,
  json: boolean,
  trusted: TrustedContracts,
  source: string,
) {
  const parts = parseQrUrl(url)
  const record = await lookup(parts.txHash)
  const problems: string[] = []
  let payload: ReturnType<typeof parseAnchorPayload> | null = null
  let identity: IdentityDecision | null = null
  if (!record) problems.push(`no anchor with transaction hash ${parts.txHash} exists`)
  else {
    const encrypted = record.encryptedPayload ?? (await service.anchor(parts.txHash))?.encryptedPayload ?? null
    if (encrypted === null) problems.push('the service holds no payload for this anchor')
    else {
      try {
        const text = await decryptPayload(encrypted, parts.key)
        if (!compositeHashesEqual(await compositeHash(text), record.compositeHash)) {
          problems.push('the payload does not hash to the anchored composite hash')
        } else payload = parseAnchorPayload(text, { requireCanonical: false })
      } catch {
        problems.push('the payload does not decrypt with the key in the QR URL')
      }
    }
  }
  if (record && payload) {
    identity = await decideIdentity(payload, record.attestation ?? null)
    if (identity.state === 'mismatch') problems.push(`the signer's identity is not what the service attests`)
  }
  const valid = problems.length === 0
  if (json) {
    writeJson(context.io, {
      qrUrl: url,
      valid,
      chainId: trusted.chainId,
      contract: trusted.contracts[0],
      contractSource: trusted.source,
      txHash: parts.txHash,
      anchor: record,
      payload,
      identity: identity?.state ?? null,
      identityMismatches: identity?.mismatches ?? [],
      problems,
    })
  } else {
    const development = trusted.chainId === DEVELOPMENT_CHAIN_ID ? [`  ${DEVELOPMENT_CHAIN_NOTE}`] : []
    const lines = [`${url}`, `  ${checkedAgainst(trusted)}`, ...development, `  ${source}`]
    if (payload) {
      lines.push(`  signed by ${payload.s.n} <${payload.s.e}> at ${displayTime(payload.ts * 1000)}`)
      lines.push(`  document hash ${payload.d}`)
      lines.push(`  ${identityLine(identity)}`)
      lines.push(`  ${NOT_ATTESTED}`)
    }
    for (const problem of problems) lines.push(`  - ${problem}`)
    // The chain holds the anchor; only the file shows whether what it shows is what was signed.
    if (valid) lines.push('  Whether a PDF shows what was signed, only the PDF can tell: anchor verify <file.pdf>.')
    lines.push(valid ? 'Verified: the anchor and its payload match.' : 'NOT VERIFIED.')
    writeLines(context.io.stdout, lines)
  }
  return valid ? EXIT.ok : EXIT.failed
}

export const runVerify: CliRun = async (argv, context) => {
  refusePasswordOnCommandLine(argv)
  const { values, positionals } = parseCommandArgs(argv, {
    ...PASSWORD_FILE_OPTION,
    json: { type: 'boolean' },
    service: { type: 'string' },
    rpc: { type: 'string' },
    contract: { type: 'string' },
    'qr-url': { type: 'string', multiple: true },
  })
  const [target, ...extra] = positionals
  if (!target) throw usageError('what to verify? anchor verify <file.pdf | QR URL>')
  if (extra.length > 0) throw usageError(`unexpected argument ${extra[0]}`)
  if (values.contract !== undefined && !(await import('viem')).isAddress(values.contract)) {
    throw usageError('--contract is not an address')
  }
  if (values.rpc !== undefined && !/^https?:\/\//.test(values.rpc)) throw usageError('--rpc must be an http(s) URL')
  const qrUrls = values['qr-url'] ?? []
  for (const url of qrUrls) parseQrUrl(url)
  const configured = await configuredService(context, values.service)
  const service = new ServiceClient(configured ?? serviceUrl(context, undefined), undefined, {
    fetch: context.fetch,
  })
  const json = values.json ?? false

  const isUrl = /^https?:\/\//i.test(target)
  const password = await readPasswordFile(values['password-file'], context.io)
  const pdf = isUrl
    ? undefined
    : await readSignedPdf(await readInputFile(target, MAX_PDF_BYTES), { password }).catch((error: unknown) => {
        throw wrongPassword(error, password, target)
      })
  const named = new Map(
    (pdf?.revisions.findLast((r) => r.metadata)?.metadata?.signatures ?? []).map((s) => [
      s.tx_hash.toLowerCase(),
      s.contract_address,
    ]),
  )

  let lookup: Lookup
  let trusted: TrustedContracts
  let serviceCertificates: Uint8Array[] = []
  let timestampCertificates: Uint8Array[] = []
  if (values.rpc) {
    // Every signature's contract is settled before anything is read, so a refusal names the PDF's own claim.
    const claims: Claims = pdf ? [...named] : [[parseQrUrl(target).txHash, undefined]]
    const { chainSource } = await import('../chain-source.ts')
    ;({ lookup, trusted } = await chainSource(
      values.rpc,
      values.contract,
      claims,
      { client: service, configured: configured !== undefined },
      context,
    ))
  } else {
    const info = await service.info()
    trusted = { chainId: info.chainId, source: 'service', contracts: [info.contractAddress.toLowerCase() as Address] }
    lookup = (txHash) => service.anchor(txHash)
    serviceCertificates = info.pdfSigning.certificates.flatMap(pemCertificates)
    timestampCertificates = info.pdfSigning.timestampCertificates.flatMap(pemCertificates)
  }
  // With --rpc, the service (configured, or the default whose contract counts) still names its certificates: its
  // answer is only trusted for that.
  if (values.rpc && (configured !== undefined || trusted.source === 'service')) {
    const info = await service.info().catch(() => undefined)
    serviceCertificates = info?.pdfSigning.certificates.flatMap(pemCertificates) ?? []
    timestampCertificates = info?.pdfSigning.timestampCertificates.flatMap(pemCertificates) ?? []
  }
  // Where each anchor was read, in the text as in --json's `source`; an RPC URL only by its origin (a key may ride
  // in its path or query).
  const source = values.rpc
    ? `anchors read from the chain at ${new URL(values.rpc).origin}`
    : `anchors as the service at ${service.baseUrl} reports them`
  if (!pdf) return verifyQrUrl(target, lookup, service, context, json, trusted, source)

  const result = await checkSignedPdf(pdf, {
    verify: lookup,
    qrUrls,
    serviceCertificates,
    timestampCertificates,
    trustedCertificates: rootCertificates.flatMap(pemCertificates),
  })
  if (json) {
    writeJson(context.io, {
      file: target,
      valid: result.valid,
      source: values.rpc ? 'chain' : 'service',
      chainId: trusted.chainId,
      contract: trusted.contracts[0],
      contractSource: trusted.source,
      signatures: result.signatures.map((check) => ({
        position: check.position,
        valid: check.valid,
        signer: {
          name: check.signature.signer_name,
          email: check.signature.signer_email,
          type: check.signature.signer_type,
          company: check.signature.company,
          position: check.signature.position,
        },
        timestamp: check.signature.timestamp,
        identity: check.identity?.state ?? null,
        identityMismatches: check.identity?.mismatches ?? [],
        attestation: check.anchorRecord?.attestation ?? null,
        txHash: check.signature.tx_hash,
        compositeHash: check.signature.composite_hash,
        docHash: check.signature.doc_hash,
        qrUrl: check.signature.qr_url,
        revision: check.revision,
        signedBytes: check.signedBytes,
        checks: { documentHash: check.documentHash, anchor: check.anchor, payload: check.payload },
        anchoredAt: check.anchorRecord?.timestamp ?? null,
        pdfSignature: check.pdfSignature,
        changesAfterSigning: check.changes,
        problems: check.problems,
      })),
      notes: result.notes,
      otherSignatures: result.otherSignatures,
      revisions: result.revisions,
      unsignedBytes: result.unsignedBytes,
      problems: result.problems,
    })
  } else {
    const ca = { development: isDevelopmentCa(serviceCertificates) }
    writeLines(context.io.stdout, describe(result, target, trusted, source, ca))
  }
  return result.valid ? EXIT.ok : EXIT.failed
}
