// `anchor verify <file.pdf | QR URL>`: checks every signature of a PDF (or the one a QR URL names) against the
// anchors, through the service or, with --rpc, straight from the chain.

import {
  type AnchorRecord,
  checkSignedPdf,
  compositeHash,
  compositeHashesEqual,
  decideIdentity,
  decryptPayload,
  type IdentityDecision,
  type PdfCheckResult,
  parseAnchorPayload,
  parseQrUrl,
  readSignedPdf,
} from '@docanchor/client'
import {
  type Address,
  createPublicClient,
  type Hash,
  http,
  isAddress,
  type PublicClient,
  TransactionReceiptNotFoundError,
} from 'viem'
import { anchorFromReceipt } from '../../verify/anchor-entry.ts'
import { type CliContext, type CliRun, parseCommandArgs, readInputFile, serviceUrl, writeJson } from '../cli-context.ts'
import { CliError, EXIT, usageError } from '../cli-errors.ts'
import { readPins } from '../contract-pins.ts'
import { ServiceClient } from '../service-client.ts'
import { readStoredLogin } from '../token-store.ts'
import { contractFor, type TrustedContracts, trustedContracts, untrustedContract } from '../trusted-contract.ts'

type Lookup = (txHash: string) => Promise<AnchorRecord | null>

/** Anchors read from the chain: no trust in the service for them. The ciphertext and the identity attestation, which
 * only the service holds, are asked for separately and used only for the composite hash the chain records. */
function chainLookup(
  client: PublicClient,
  rpcOrigin: string,
  contractOf: (txHash: string) => Address,
  service: ServiceClient,
  takeAttestations: boolean,
): Lookup {
  return async (txHash) => {
    let receipt: Awaited<ReturnType<typeof client.getTransactionReceipt>>
    try {
      receipt = await client.getTransactionReceipt({ hash: txHash as Hash })
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return null
      throw chainUnreachable(rpcOrigin)
    }
    const anchor = anchorFromReceipt(receipt, contractOf(txHash))
    if (!anchor) return null
    const stored = await service.anchor(txHash).catch(() => null)
    const same = stored !== null && compositeHashesEqual(stored.compositeHash, anchor.compositeHash)
    const attested = takeAttestations && same
    return {
      ...anchor,
      encryptedPayload: stored?.encryptedPayload ?? null,
      attestation: attested ? (stored.attestation ?? null) : null,
    }
  }
}

const chainUnreachable = (origin: string) =>
  new CliError(`cannot read the chain at ${origin}`, EXIT.service, 'CHAIN_UNREACHABLE')

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

const NOT_ATTESTED = 'Name, company and position are as the signer stated them: no one attests them.'

function checkedAgainst(trusted: TrustedContracts): string {
  const source = { '--contract': '--contract', service: "the service's /api/info", pinned: 'your pins' }[trusted.source]
  return `checked on chain ${trusted.chainId} against contract ${trusted.contracts.join(', ')} (from ${source})`
}

function describe(result: PdfCheckResult, file: string, trusted: TrustedContracts): string {
  const out: string[] = []
  const n = result.signatures.length
  out.push(`${file}: ${n} signature${n === 1 ? '' : 's'} in ${result.revisions.length} revisions`)
  out.push(`  ${checkedAgainst(trusted)}`)
  for (const check of result.signatures) {
    const s = check.signature
    const who = `${s.signer_name} <${s.signer_email}>${s.company ? `, ${s.position ? `${s.position}, ` : ''}${s.company}` : ''}`
    out.push(`  ${check.valid ? 'valid  ' : 'INVALID'} ${check.position}. ${who}, ${s.timestamp}`)
    out.push(`          transaction ${s.tx_hash}`)
    out.push(`          ${identityLine(check.identity)}`)
    if (check.signedBytes !== null)
      out.push(`          covers bytes 0-${check.signedBytes} (revision ${check.revision})`)
    for (const problem of check.problems) out.push(`          - ${problem}`)
  }
  for (const problem of result.problems) out.push(`  ${problem}`)
  out.push(`  ${NOT_ATTESTED}`)
  out.push(result.valid ? `Verified: all ${n} signatures are valid.` : 'NOT VERIFIED.')
  return `${out.join('\n')}\n`
}

async function verifyQrUrl(
  url: string,
  lookup: Lookup,
  service: ServiceClient,
  context: CliContext,
  json: boolean,
  trusted: TrustedContracts,
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
    const lines = [`${url}`, `  ${checkedAgainst(trusted)}`]
    if (payload) {
      lines.push(`  signed by ${payload.s.n} <${payload.s.e}> at ${new Date(payload.ts * 1000).toISOString()}`)
      lines.push(`  document hash ${payload.d}`)
      lines.push(`  ${identityLine(identity)}`)
      lines.push(`  ${NOT_ATTESTED}`)
    }
    for (const problem of problems) lines.push(`  - ${problem}`)
    lines.push(valid ? 'Verified: the anchor and its payload match.' : 'NOT VERIFIED.')
    context.io.stdout.write(`${lines.join('\n')}\n`)
  }
  return valid ? EXIT.ok : EXIT.failed
}

export const runVerify: CliRun = async (argv, context) => {
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
  const configured = await configuredService(context, values.service)
  const service = new ServiceClient(configured ?? serviceUrl(context, undefined), undefined, {
    fetch: context.fetch,
  })
  const json = values.json ?? false

  const isUrl = /^https?:\/\//i.test(target)
  const pdf = isUrl ? undefined : await readSignedPdf(await readInputFile(target))
  const named = new Map(
    (pdf?.revisions.findLast((r) => r.metadata)?.metadata?.signatures ?? []).map((s) => [
      s.tx_hash.toLowerCase(),
      s.contract_address,
    ]),
  )

  let lookup: Lookup
  let trusted: TrustedContracts
  if (values.rpc) {
    // Every signature's contract is settled before anything is read, so a refusal names the PDF's own claim.
    const claims: Claims = pdf ? [...named] : [[parseQrUrl(target).txHash, undefined]]
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
  }
  if (!pdf) return verifyQrUrl(target, lookup, service, context, json, trusted)

  const result = await checkSignedPdf(pdf, { verify: lookup, qrUrls })
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
        problems: check.problems,
      })),
      revisions: result.revisions,
      unsignedBytes: result.unsignedBytes,
      problems: result.problems,
    })
  } else context.io.stdout.write(describe(result, target, trusted))
  return result.valid ? EXIT.ok : EXIT.failed
}

/** Transaction hash → the contract the signature's metadata names (undefined when it names none). */
type Claims = [string, string | undefined][]

/**
 * The lookup for --rpc and the contracts it trusts: --contract, else the configured service's, else the pinned ones;
 * refused when only the PDF names a contract.
 */
async function chainSource(
  rpc: string,
  contractFlag: string | undefined,
  claims: Claims,
  service: { client: ServiceClient; configured: boolean },
  context: CliContext,
): Promise<{ lookup: Lookup; trusted: TrustedContracts }> {
  const rpcOrigin = new URL(rpc).origin
  const client = createPublicClient({ transport: http(rpc, { retryCount: 1 }) }) as PublicClient
  const rpcChainId = await client.getChainId().catch(() => {
    throw chainUnreachable(rpcOrigin)
  })
  const found = await trustedContracts({
    rpcChainId,
    contractFlag,
    service: service.configured ? service.client : undefined,
    pins: await readPins(context.config.configDir),
  })
  if (!found) throw untrustedContract(claims.find(([, contract]) => contract)?.[1], rpcChainId, undefined)
  const contracts = new Map<string, Address>()
  for (const [txHash, contract] of claims) {
    const chosen = contractFor(found, contract)
    if (!chosen) throw untrustedContract(contract, rpcChainId, found)
    contracts.set(txHash.toLowerCase(), chosen)
  }
  // What is shown as checked is what is used: with several pins, only the ones the signatures name.
  const trusted = found.source === 'pinned' ? { ...found, contracts: [...new Set(contracts.values())] } : found
  const contractOf = (txHash: string) => contracts.get(txHash.toLowerCase()) ?? found.contracts[0]!
  // Payloads are asked of the service even when none is configured (then the default one): the chain checks them.
  // Attestations are a service's word, so only a configured service's count.
  return { lookup: chainLookup(client, rpcOrigin, contractOf, service.client, service.configured), trusted }
}

/** The service the user configured (--service, ANCHOR_URL, else the stored login's), or undefined for none. */
async function configuredService(context: CliContext, flag: string | undefined): Promise<string | undefined> {
  if (flag !== undefined || context.config.serviceUrlConfigured) return serviceUrl(context, flag)
  return (await readStoredLogin(context.config.configDir))?.service
}
