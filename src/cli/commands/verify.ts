// `anchor verify <file.pdf | QR URL>`: checks every signature of a PDF (or the one a QR URL names) against the
// anchors, through the service or, with --rpc, straight from the chain.

import { type Address, createPublicClient, type Hash, http, isAddress, TransactionReceiptNotFoundError } from 'viem'
import { parseAnchorPayload } from '../../formats/anchor-payload.ts'
import { compositeHash, compositeHashesEqual } from '../../formats/composite-hash.ts'
import { decryptPayload } from '../../formats/payload-cipher.ts'
import { parseQrUrl } from '../../formats/qr-url.ts'
import { type AnchorRecord, checkSignedPdf, type PdfCheckResult } from '../../pdf/check-signed-pdf.ts'
import { readSignedPdf } from '../../pdf/read-signed-pdf.ts'
import { anchorFromReceipt } from '../../verify/anchor-entry.ts'
import {
  type CliCommand,
  type CliContext,
  parseCommandArgs,
  readInputFile,
  serviceUrl,
  writeJson,
} from '../cli-context.ts'
import { CliError, EXIT, usageError } from '../cli-errors.ts'
import { ServiceClient } from '../service-client.ts'

const usage = `anchor verify <file.pdf | QR URL> [--json] [--service <url>] [--rpc <url> [--contract <address>]]
              [--qr-url <url>]...

  --rpc       read the anchors from this JSON-RPC endpoint instead of trusting the service
  --contract  the DocumentAnchors address for --rpc (default: the one in each signature's metadata)
  --qr-url    a QR URL printed on the page, for signatures whose metadata (version 1) has none

Exit code 0 only when every signature verifies and nothing was added after the last one.`

type Lookup = (txHash: string) => Promise<AnchorRecord | null>

/** Anchors read from the chain: no trust in the service. The ciphertext, which only the service holds, is asked
 * for separately; what it decrypts to is checked against the chain's composite hash, so it needs no trust either. */
function chainLookup(rpc: string, contractFor: (txHash: string) => string | undefined, service: ServiceClient): Lookup {
  const client = createPublicClient({ transport: http(rpc, { retryCount: 1 }) })
  return async (txHash) => {
    const contract = contractFor(txHash)
    if (!contract || !isAddress(contract)) {
      throw usageError(`no contract address for ${txHash}: give --contract <address> with --rpc`)
    }
    let receipt: Awaited<ReturnType<typeof client.getTransactionReceipt>>
    try {
      receipt = await client.getTransactionReceipt({ hash: txHash as Hash })
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return null
      throw new CliError(`cannot read the chain at ${new URL(rpc).origin}`, EXIT.service, 'CHAIN_UNREACHABLE')
    }
    const anchor = anchorFromReceipt(receipt, contract as Address)
    if (!anchor) return null
    const stored = await service.anchor(txHash).catch(() => null)
    return { ...anchor, encryptedPayload: stored?.encryptedPayload ?? null }
  }
}

function describe(result: PdfCheckResult, file: string): string {
  const out: string[] = []
  const n = result.signatures.length
  out.push(`${file}: ${n} signature${n === 1 ? '' : 's'} in ${result.revisions.length} revisions`)
  for (const check of result.signatures) {
    const s = check.signature
    const who = `${s.signer_name} <${s.signer_email}>${s.company ? `, ${s.position ? `${s.position}, ` : ''}${s.company}` : ''}`
    out.push(`  ${check.valid ? 'valid  ' : 'INVALID'} ${check.position}. ${who}, ${s.timestamp}`)
    out.push(`          transaction ${s.tx_hash}`)
    if (check.signedBytes !== null)
      out.push(`          covers bytes 0-${check.signedBytes} (revision ${check.revision})`)
    for (const problem of check.problems) out.push(`          - ${problem}`)
  }
  for (const problem of result.problems) out.push(`  ${problem}`)
  out.push(result.valid ? `Verified: all ${n} signatures are valid.` : 'NOT VERIFIED.')
  return `${out.join('\n')}\n`
}

async function verifyQrUrl(url: string, lookup: Lookup, service: ServiceClient, context: CliContext, json: boolean) {
  const parts = parseQrUrl(url)
  const record = await lookup(parts.txHash)
  const problems: string[] = []
  let payload: ReturnType<typeof parseAnchorPayload> | null = null
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
  const valid = problems.length === 0
  if (json) writeJson(context.io, { qrUrl: url, valid, txHash: parts.txHash, anchor: record, payload, problems })
  else {
    const lines = [`${url}`]
    if (payload) {
      lines.push(`  signed by ${payload.s.n} <${payload.s.e}> at ${new Date(payload.ts * 1000).toISOString()}`)
      lines.push(`  document hash ${payload.d}`)
    }
    for (const problem of problems) lines.push(`  - ${problem}`)
    lines.push(valid ? 'Verified: the anchor and its payload match.' : 'NOT VERIFIED.')
    context.io.stdout.write(`${lines.join('\n')}\n`)
  }
  return valid ? EXIT.ok : EXIT.failed
}

export const verifyCommand: CliCommand = {
  summary: 'check every signature of a PDF, or the anchor a QR URL names',
  usage,
  async run(argv, context) {
    const { values, positionals } = parseCommandArgs(argv, {
      json: { type: 'boolean' },
      service: { type: 'string' },
      rpc: { type: 'string' },
      contract: { type: 'string' },
      'qr-url': { type: 'string', multiple: true },
    })
    const [target, ...extra] = positionals
    if (!target) throw usageError('what to verify? anchor verify <file.pdf | QR URL>')
    if (extra.length > 0) throw usageError(`unexpected argument ${extra[0]}`)
    if (values.contract !== undefined && !isAddress(values.contract)) throw usageError('--contract is not an address')
    if (values.rpc !== undefined && !/^https?:\/\//.test(values.rpc)) throw usageError('--rpc must be an http(s) URL')
    const qrUrls = values['qr-url'] ?? []
    for (const url of qrUrls) parseQrUrl(url)
    const service = new ServiceClient(serviceUrl(context, values.service), undefined, { fetch: context.fetch })
    const json = values.json ?? false

    const isUrl = /^https?:\/\//i.test(target)
    const pdf = isUrl ? undefined : await readSignedPdf(await readInputFile(target))
    const contracts = new Map(
      (pdf?.revisions.findLast((r) => r.metadata)?.metadata?.signatures ?? []).map((s) => [
        s.tx_hash.toLowerCase(),
        s.contract_address,
      ]),
    )
    const lookup: Lookup = values.rpc
      ? chainLookup(values.rpc, (tx) => values.contract ?? contracts.get(tx.toLowerCase()), service)
      : (txHash) => service.anchor(txHash)
    if (!pdf) return verifyQrUrl(target, lookup, service, context, json)

    const result = await checkSignedPdf(pdf, { verify: lookup, qrUrls })
    if (json) {
      writeJson(context.io, {
        file: target,
        valid: result.valid,
        source: values.rpc ? 'chain' : 'service',
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
          txHash: check.signature.tx_hash,
          compositeHash: check.signature.composite_hash,
          docHash: check.signature.doc_hash,
          qrUrl: check.signature.qr_url,
          revision: check.revision,
          signedBytes: check.signedBytes,
          checks: { documentHash: check.documentHash, anchor: check.anchor, payload: check.payload },
          anchoredAt: check.anchorRecord?.timestamp ?? null,
          problems: check.problems,
        })),
        revisions: result.revisions,
        unsignedBytes: result.unsignedBytes,
        problems: result.problems,
      })
    } else context.io.stdout.write(describe(result, target))
    return result.valid ? EXIT.ok : EXIT.failed
  },
}
