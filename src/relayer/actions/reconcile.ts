// Reconciliation with the chain: what the relayer keys did that the database forgot (a failover to a standby that
// had not received the last commits, a restore from an older backup). Every DocumentAnchored event of the keys since
// the last mined anchor the database knows is looked up; one whose transaction the outbox does not hold is recorded
// (without ciphertext or owner, which only the lost rows had), and each key's nonce row is raised past every nonce the
// chain consumed. Cost: one eth_getLogs per RELAY_RECONCILE_LOG_BLOCKS blocks since that anchor (less the reorg
// watch), one eth_getTransaction per forgotten transaction, two nonce counts per key; see docs/operations.md.
import { setTimeout as sleep } from 'node:timers/promises'
import { type Address, getAbiItem, type Hex, keccak256, serializeTransaction, type Transaction } from 'viem'
import { documentAnchorsAbi } from '../../chain/document-anchors-artifact.ts'
import type { Fees } from '../fees.ts'
import { nonceAuthorityPastChain } from '../outbox/nonces.ts'
import {
  type ChainAnchor,
  highestKnownBlock,
  type KeepNonce,
  knownTransactions,
  recordChainAnchor,
} from '../outbox/reconciled-anchors.ts'
import type { Slot } from '../outbox/slot.ts'
import { accountOf, type RelayContext } from '../relay-context.ts'
import { signFiller } from '../signing.ts'

const DOCUMENT_ANCHORED = getAbiItem({ abi: documentAnchorsAbi, name: 'DocumentAnchored' })

export interface ReconcileReport {
  fromBlock: number
  toBlock: number
  /** Events of the keys in that range. */
  events: number
  recovered: number
  adopted: number
  /** Composite hashes the chain holds twice from the keys (one of them was the database's): reported, not recorded. */
  doubled: number
  /** Keys whose nonce row was behind the chain, with the row's value before. */
  raised: { relayer: Address; from: number; to: number }[]
  /**
   * Keys with transactions the node's pool held when asked and had not mined after the wait: their events are not
   * read yet. A follow-up looks once the key's latest count reaches `until`.
   */
  unmined: { relayer: Address; until: number }[]
}

/**
 * `readFrom`: a block the read starts at or before (a follow-up of a run that left transactions in the pool, which
 * were mined after that run's head).
 */
export async function reconcileWithChain(
  context: RelayContext,
  { readFrom }: { readFrom?: number } = {},
): Promise<ReconcileReport> {
  const { client, chainId, contractAddress } = context.chain
  const keys = context.pool.all.map(({ address }) => address)
  const slot = (relayer: Address): Slot => ({ chainId, relayer })
  const report: ReconcileReport = {
    fromBlock: 0,
    toBlock: 0,
    events: 0,
    recovered: 0,
    adopted: 0,
    doubled: 0,
    raised: [],
    unmined: [],
  }
  if (keys.length === 0) return report
  // A transaction in the node's pool has no event yet: the read waits for what the pools held to be mined, within
  // RELAY_WAIT_MS (a block or two); what is still unmined after that is left to a follow-up.
  const counts = await poolDrained(context, keys)
  for (const [i, relayer] of keys.entries()) {
    const { latest, pending, asked } = counts[i]!
    const was = await nonceAuthorityPastChain(context.db, slot(relayer), { latest, pending })
    if (was !== undefined) report.raised.push({ relayer, from: was, to: pending })
    if (latest < asked) report.unmined.push({ relayer, until: asked })
  }

  const head = Number(await client.getBlockNumber({ cacheTime: 0 }))
  const known = await highestKnownBlock(context.db, chainId, keys)
  const { fromBlock: configuredFrom, logBlocks } = context.settings.reconcile
  const { reorgWatchBlocks } = context.settings
  const sinceKnown = known === null ? configuredFrom : Math.max(configuredFrom, known - reorgWatchBlocks)
  report.fromBlock =
    readFrom === undefined ? sinceKnown : Math.min(sinceKnown, Math.max(configuredFrom, readFrom - reorgWatchBlocks))
  report.toBlock = head
  // Keys that never sent a transaction anchored nothing: a fresh deployment reads no logs at all.
  if (counts.every((count) => count.latest === 0) || report.fromBlock > head) return report

  for (let start = report.fromBlock; start <= head; start += logBlocks) {
    const logs = await client.getLogs({
      address: contractAddress,
      event: DOCUMENT_ANCHORED,
      args: { signer: keys },
      fromBlock: BigInt(start),
      toBlock: BigInt(Math.min(head, start + logBlocks - 1)),
      strict: true,
    })
    report.events += logs.length
    const hashes = logs.map((log) => log.transactionHash.toLowerCase() as Hex)
    const held = await knownTransactions(context.db, hashes)
    for (const log of logs) {
      const txHash = log.transactionHash.toLowerCase() as Hex
      if (held.has(txHash)) continue
      const transaction = await client.getTransaction({ hash: txHash })
      const relayer = transaction.from.toLowerCase() as Address
      const compositeHash = log.args.compositeHash.toLowerCase() as Hex
      const where = { txHash, compositeHash, relayer, nonce: transaction.nonce }
      const raw = rawOf(transaction)
      if (!raw) {
        // Not one this service signs (another type than its own): recorded by no one, said once per reconciliation.
        context.log.error(where, 'ALERT a transaction of a relayer key could not be re-serialized: not recorded')
        continue
      }
      const found: ChainAnchor = {
        txHash,
        compositeHash,
        previousTxHash: log.args.previousTxHash.toLowerCase() as Hex,
        blockNumber: Number(log.blockNumber),
        blockHash: log.blockHash.toLowerCase() as Hex,
        logIndex: log.logIndex,
        nonce: transaction.nonce,
        raw,
        maxFeePerGas: transaction.maxFeePerGas ?? transaction.gasPrice ?? 0n,
        maxPriorityFeePerGas: transaction.maxPriorityFeePerGas ?? transaction.gasPrice ?? 0n,
        final: head - Number(log.blockNumber) + 1 >= context.settings.confirmations,
      }
      // Asked before the record's transaction, which may need them (cached: one question for many records).
      const keepNonce = fillerSigner(context, await context.fees.current())
      const outcome = await recordChainAnchor(
        context.db,
        slot(relayer),
        found,
        keepNonce,
        context.chain.contractAddress,
      )
      if (outcome.kind === 'known') continue
      report[outcome.kind] += 1
      context.onReconciled?.(outcome.kind)
      if (outcome.kind === 'doubled') {
        context.log.error(
          { ...where, anchorId: outcome.anchorId },
          'ALERT composite hash anchored twice by the relayer keys: the second transaction is recorded as failed',
        )
      } else {
        context.log.warn(
          { ...where, anchorId: outcome.anchorId },
          outcome.kind === 'recovered'
            ? 'ALERT anchor recovered from the chain: the database had forgotten it (recorded without its ciphertext)'
            : 'ALERT anchor re-attached to its mined transaction: the database had forgotten it',
        )
      }
    }
  }
  return report
}

/**
 * Signs the self-transfer that keeps a nonce an adopted anchor leaves (`recordChainAnchor`), at `fees` or above the fees
 * of what that anchor had sent there, so that it replaces that in a node's pool; undefined for a key not held here.
 */
function fillerSigner(context: RelayContext, fees: Fees): KeepNonce {
  return async (relayer, nonce, outbid) => {
    const account = accountOf(context, relayer)
    if (!account) return undefined
    const chosen = outbid ? context.fees.bump(outbid, context.settings.feeBumpPercent, fees) : fees
    return signFiller(account, context.chain.chainId, nonce, chosen)
  }
}

/**
 * Each key's nonce counts once what its pool held when asked is mined (its latest count reached that pending count),
 * or as they are after RELAY_WAIT_MS. Not until the pool is empty: other instances keep sending while this one
 * reconciles, and their transactions are known to the database.
 */
async function poolDrained(context: RelayContext, keys: Address[]) {
  const { client } = context.chain
  const deadline = Date.now() + context.settings.waitMs
  const countsOf = () =>
    Promise.all(
      keys.map(async (address) => {
        const [latest, pending] = await Promise.all([
          client.getTransactionCount({ address, blockTag: 'latest' }),
          client.getTransactionCount({ address, blockTag: 'pending' }),
        ])
        return { latest, pending }
      }),
    )
  const asked = await countsOf()
  let counts = asked
  while (!counts.every((c, i) => c.latest >= asked[i]!.pending) && Date.now() <= deadline) {
    await sleep(context.pollingIntervalMs)
    counts = await countsOf()
  }
  return counts.map((c, i) => ({ ...c, asked: asked[i]!.pending }))
}

/**
 * The signed bytes of a mined transaction (the monitor re-sends them after a reorg), checked against its hash;
 * undefined when they cannot be rebuilt (a type viem does not serialize from a node's answer).
 */
function rawOf(transaction: Transaction): Hex | undefined {
  try {
    const { r, s, v, yParity } = transaction
    const raw = serializeTransaction(
      { ...transaction, data: transaction.input } as Parameters<typeof serializeTransaction>[0],
      { r, s, v, yParity },
    )
    return keccak256(raw) === transaction.hash.toLowerCase() ? raw : undefined
  } catch {
    return undefined
  }
}
