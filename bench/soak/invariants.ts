// The end-of-run checks, from the chain and the database rather than from the service's answers.
import { verifyWebhook } from '@docanchor/client'
import pg from 'pg'
import { type Address, getAbiItem, type Hex } from 'viem'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import type { FaultResult } from './faults.ts'
import type { LibraryKind, ModelItem } from './library-model.ts'
import type { Recorder, Sample } from './recorder.ts'
import type { Workload } from './workload.ts'
import type { World } from './world.ts'

/** Answers already on their way when a fault ends still count as the fault's. */
const FAULT_GRACE_MS = 5_000

export interface Invariant {
  name: string
  ok: boolean
  detail: string
  /** Passed, but only by leaving out what a database that forgot its last commits lost for good: said so. */
  accepted?: boolean
}

interface ChainEvent {
  txHash: Hex
  compositeHash: Hex
  previousTxHash: Hex
  signer: string
}

export async function checkInvariants(
  world: World,
  workload: Workload,
  recorder: Recorder,
  faults: FaultResult[],
  databaseMayForget: boolean,
): Promise<Invariant[]> {
  const db = new pg.Client({ connectionString: world.databaseUrl })
  await db.connect()
  try {
    const events = await anchoredEvents(world)
    const lost = databaseMayForget ? lostWindows(faults) : []
    return [
      await anchorsOnChain(workload, events, db),
      await relayerNonces(world, db),
      await libraries(workload, db, lost),
      serverErrors(recorder.samples, faults),
      verifyAnswers(workload, events),
      await signOuts(world, workload, recorder, lost),
      unexpectedAnswers(workload, faults, databaseMayForget),
      await webhookDeliveries(world, workload, events, db, databaseMayForget),
    ]
  } finally {
    await db.end()
  }
}

type LostWindows = { from: number; to: number }[]
const LOST_MARGIN_MS = 5_000

/**
 * The spans of commits a failover to an asynchronous standby or a restore may have lost, widened by a margin for the
 * requests' own time: only a change written then may be missing at the end.
 */
function lostWindows(faults: FaultResult[]): LostWindows {
  return faults.flatMap((fault) =>
    fault.lost ? [{ from: fault.lost.from - LOST_MARGIN_MS, to: fault.lost.to + LOST_MARGIN_MS }] : [],
  )
}

const inLost = (windows: LostWindows, from: number, to = from) => windows.some((w) => to >= w.from && from <= w.to)

async function anchoredEvents(world: World): Promise<ChainEvent[]> {
  const logs = await world.chain.getLogs({
    address: world.contract,
    event: getAbiItem({ abi: documentAnchorsAbi, name: 'DocumentAnchored' }),
    fromBlock: 0n,
    toBlock: 'latest',
  })
  return logs.map((log) => ({
    txHash: log.transactionHash,
    compositeHash: log.args.compositeHash!,
    previousTxHash: log.args.previousTxHash!,
    signer: log.args.signer!,
  }))
}

async function anchorsOnChain(workload: Workload, events: ChainEvent[], db: pg.Client): Promise<Invariant> {
  const byHash = new Map<string, ChainEvent[]>()
  for (const event of events) byHash.set(event.compositeHash, [...(byHash.get(event.compositeHash) ?? []), event])
  const { rows } = await db.query<{ tx_hash: string; composite_hash: string; status: string }>(
    'SELECT tx_hash, composite_hash, status FROM anchors',
  )
  const rowByHash = new Map(rows.map((row) => [row.composite_hash, row]))
  const problems: string[] = []
  for (const anchor of workload.acknowledged) {
    const onChain = byHash.get(anchor.compositeHash) ?? []
    if (onChain.length !== 1) problems.push(`${anchor.compositeHash} is on chain ${onChain.length} times`)
    else if (onChain[0]!.txHash !== anchor.txHash) {
      problems.push(`${anchor.compositeHash} is on chain under ${onChain[0]!.txHash}, answered ${anchor.txHash}`)
    }
    const row = rowByHash.get(anchor.compositeHash)
    if (row?.tx_hash !== anchor.txHash || row.status !== 'confirmed') {
      problems.push(`${anchor.compositeHash}: database has ${row?.status} ${row?.tx_hash}, answered ${anchor.txHash}`)
    }
  }
  const twice = [...byHash.values()].filter((list) => list.length > 1).length
  if (twice > 0) problems.push(`${twice} composite hashes anchored more than once`)
  const unsettled = rows.filter((row) => row.status === 'pending').length
  if (unsettled > 0) problems.push(`${unsettled} anchors still pending in the database`)
  return {
    name: 'every acknowledged anchor on chain exactly once, under the tx hash answered',
    ok: problems.length === 0,
    detail:
      problems.length === 0
        ? `${workload.acknowledged.length} acknowledged, ${events.length} on chain, ${rows.length} in the database, none pending`
        : problems.slice(0, 5).join('; '),
  }
}

async function relayerNonces(world: World, db: pg.Client): Promise<Invariant> {
  const { chain } = world
  const { rows: anchorRows } = await db.query<{ tx_hash: string }>(
    "SELECT tx_hash FROM anchors WHERE status = 'confirmed'",
  )
  const { rows: fillerRows } = await db.query<{ tx_hash: string }>(
    'SELECT tx_hash FROM relay_transactions WHERE anchor_id IS NULL',
  )
  const anchorTxs = new Set(anchorRows.map((row) => row.tx_hash.toLowerCase()))
  const fillerTxs = new Set(fillerRows.map((row) => row.tx_hash.toLowerCase()))
  const relayers = new Set(world.relayers.map((address) => address.toLowerCase()))
  const counts = new Map<string, { anchors: number; fillers: number; wasted: number }>()
  for (const relayer of relayers) counts.set(relayer, { anchors: 0, fillers: 0, wasted: 0 })
  const head = await chain.getBlockNumber()
  for (let number = 0n; number <= head; number++) {
    const block = await chain.getBlock({ blockNumber: number, includeTransactions: true })
    for (const tx of block.transactions) {
      const count = counts.get(tx.from.toLowerCase())
      if (!count) continue
      const hash = tx.hash.toLowerCase()
      if (anchorTxs.has(hash) && tx.to?.toLowerCase() === world.contract.toLowerCase()) count.anchors += 1
      else if (fillerTxs.has(hash) && tx.to?.toLowerCase() === tx.from.toLowerCase()) count.fillers += 1
      else count.wasted += 1
    }
  }
  const problems: string[] = []
  const summary: string[] = []
  const pool = (await chain.request({ method: 'txpool_content' as never })) as {
    pending: Record<string, unknown>
    queued: Record<string, unknown>
  }
  for (const relayer of relayers) {
    const count = counts.get(relayer)!
    const [latest, pending] = await Promise.all([
      chain.getTransactionCount({ address: relayer as Address, blockTag: 'latest' }),
      chain.getTransactionCount({ address: relayer as Address, blockTag: 'pending' }),
    ])
    const inPool = [pool.pending, pool.queued].flatMap((part) =>
      Object.entries(part).filter(([address]) => address.toLowerCase() === relayer),
    )
    if (inPool.length > 0 || pending !== latest) problems.push(`${relayer}: transactions left in the pool`)
    if (count.wasted > 0) problems.push(`${relayer}: ${count.wasted} nonces spent on neither an anchor nor a filler`)
    if (count.anchors + count.fillers + count.wasted !== latest) {
      problems.push(`${relayer}: ${latest} nonces used, ${count.anchors + count.fillers + count.wasted} mined`)
    }
    summary.push(`${relayer.slice(0, 8)}…: ${latest} nonces = ${count.anchors} anchors + ${count.fillers} fillers`)
  }
  return {
    name: 'per relayer key: nothing stuck in the pool, no nonce wasted but by fillers',
    ok: problems.length === 0,
    detail: problems.length === 0 ? summary.join('; ') : problems.join('; '),
  }
}

async function libraries(workload: Workload, db: pg.Client, lost: LostWindows): Promise<Invariant> {
  const problems: string[] = []
  const lostWrites: string[] = []
  // A change is judged by when it was written (its last request), not by its clock: a device may hold a change
  // through failed syncs and write it much later.
  const differs = (item: ModelItem, problem: string) =>
    (item.lastSent && inLost(lost, item.lastSent.from, item.lastSent.to) ? lostWrites : problems).push(problem)
  const tables: Record<LibraryKind, string> = { signatures: 'cloud_signatures', snippets: 'cloud_text_snippets' }
  let items = 0
  for (const email of workload.library.users()) {
    for (const kind of ['signatures', 'snippets'] as const) {
      const { rows } = await db.query<{ id: string; label: string; updated_at: Date; deleted_at: Date | null }>(
        `SELECT t.id, t.label, t.updated_at, t.deleted_at FROM ${tables[kind]} t JOIN users u ON u.id = t.user_id
          WHERE u.email = $1`,
        [email],
      )
      const byId = new Map(rows.map((row) => [row.id, row]))
      const expected = workload.library.expected(email, kind)
      for (const item of expected) {
        items += 1
        const row = byId.get(item.id)
        if (item.label === undefined) {
          if (row && row.deleted_at?.getTime() !== item.at)
            differs(item, `${email} ${kind} ${item.id} should be deleted`)
        } else if (
          !row ||
          row.deleted_at !== null ||
          row.label !== item.label ||
          row.updated_at.getTime() !== item.at
        ) {
          differs(item, `${email} ${kind} ${item.id}: expected "${item.label}", found "${row?.label}"`)
        }
      }
      const extra = rows.filter((row) => row.deleted_at === null && !expected.some((item) => item.id === row.id))
      if (extra.length > 0) problems.push(`${email} ${kind}: ${extra.length} live items no device sent`)
    }
  }
  const lostNote =
    lostWrites.length === 0 ? '' : `; ${lostWrites.length} changes written while the database lost commits`
  return {
    name: 'every library equals the last-write-wins model of what its two devices sent',
    ok: problems.length === 0,
    accepted: problems.length === 0 && lostWrites.length > 0,
    detail:
      problems.length === 0
        ? `${workload.library.users().length} libraries, ${items} items${lostNote}`
        : `${problems.length} differences: ${problems.slice(0, 3).join('; ')}${lostNote}`,
  }
}

/** Whether the span from `from` to `to` (ms since the epoch) touches a fault, from its start to its full recovery. */
function faultWindows(faults: FaultResult[]): (from: number, to: number) => boolean {
  const windows = faults.map((fault) => ({
    from: fault.startedAt,
    to: (fault.recoveredAt ?? Number.POSITIVE_INFINITY) + FAULT_GRACE_MS,
  }))
  return (from, to) => windows.some((window) => to >= window.from && from <= window.to)
}

function serverErrors(samples: Sample[], faults: FaultResult[]): Invariant {
  const during = faultWindows(faults)
  const inFault = (sample: Sample) => during(sample.startedAt, sample.startedAt + sample.ms)
  const failures = samples.filter((sample) => sample.status === 0 || sample.status >= 500)
  const bad = failures.filter((sample) => !((sample.status === 502 || sample.status === 503) && inFault(sample)))
  const byStatus = new Map<string, number>()
  for (const sample of bad) {
    // The time of a missing answer, to find it in the balancer's and the instances' logs.
    const at = new Date(sample.startedAt).toISOString().slice(11, 23)
    const key = `${sample.kind} ${sample.status === 0 ? `no answer (${sample.error}, at ${at}, after ${Math.round(sample.ms)} ms)` : sample.status}`
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1)
  }
  return {
    name: 'no 5xx but the documented 502/503 during a fault',
    ok: bad.length === 0,
    detail:
      bad.length === 0
        ? `${failures.length} answers 502/503, all during a fault`
        : [...byStatus].map(([key, count]) => `${count}× ${key}`).join('; '),
  }
}

function verifyAnswers(workload: Workload, events: ChainEvent[]): Invariant {
  const byTx = new Map(events.map((event) => [event.txHash, event]))
  const problems: string[] = []
  for (const answer of workload.verifyAnswers) {
    const event = byTx.get(answer.txHash)
    if (
      !event ||
      event.compositeHash !== answer.compositeHash ||
      event.previousTxHash !== answer.previousTxHash ||
      event.signer.toLowerCase() !== answer.signer.toLowerCase()
    ) {
      problems.push(`verify of ${answer.txHash} differs from the chain`)
      continue
    }
    if (answer.chain.at(-1) !== answer.txHash || answer.chain.some((txHash) => !byTx.has(txHash))) {
      problems.push(`verify of ${answer.txHash} lists a chain that is not on chain`)
    }
  }
  const cached = workload.verifyAnswers.filter((answer) => answer.cached).length
  return {
    name: 'verify answers equal the chain',
    ok: problems.length === 0,
    detail:
      problems.length === 0
        ? `${workload.verifyAnswers.length} answers checked, ${cached} of them from HAProxy's cache`
        : problems.slice(0, 3).join('; '),
  }
}

/** Every signed-out token, on every instance, at the end: each must be refused (but one the database lost). */
async function signOuts(world: World, workload: Workload, recorder: Recorder, lost: LostWindows): Promise<Invariant> {
  let accepted = 0
  let lostSignOuts = 0
  let unanswered = 0
  for (const { token, at } of workload.loggedOut) {
    for (const instance of world.instances) {
      const answer = await recorder.send('me', 'GET', '/api/auth/me', { token, base: instance.url, record: false })
      if (answer.status === 200 && inLost(lost, at)) lostSignOuts += 1
      else if (answer.status === 200) accepted += 1
      else if (answer.status !== 401) unanswered += 1
    }
  }
  const during = workload.unexpected.filter((line) => line.startsWith('a signed-out session')).length
  const notes = [
    unanswered === 0 ? '' : `; ${unanswered} checks unanswered (an instance is not running)`,
    lostSignOuts === 0 ? '' : `; ${lostSignOuts} accepted whose sign-out the database lost`,
  ].join('')
  const ok = accepted === 0 && during === 0 && unanswered === 0
  return {
    name: 'a logout ends the session on every instance',
    ok,
    accepted: ok && lostSignOuts > 0,
    detail: `${workload.loggedOut.length} sessions signed out × ${world.instances.length} instances; ${during + accepted} accepted afterwards${notes}`,
  }
}

function unexpectedAnswers(workload: Workload, faults: FaultResult[], databaseMayForget: boolean): Invariant {
  const during = faultWindows(faults)
  const refused = workload.unexpected.filter((line) => !line.startsWith('a signed-out session'))
  // A session (or an account) begun in the moments the database lost is gone with them: its next request is refused.
  const lostSession = (line: string) =>
    databaseMayForget && (line.includes('The session has ended') || line.includes('account no longer exists'))
  const lost = refused.filter(lostSession)
  const others = refused.filter((line) => !lostSession(line))
  const outside = workload.incidents.filter((incident) => !during(incident.at, incident.at))
  const counts = new Map<string, number>()
  for (const incident of workload.incidents) counts.set(incident.what, (counts.get(incident.what) ?? 0) + 1)
  const tolerated = [...counts].map(([what, count]) => `${count}× ${what}`).join(', ')
  const ok = others.length === 0 && outside.length === 0
  return {
    name: 'no unexpected 4xx answers; the tolerable ones only during a fault',
    ok,
    accepted: ok && lost.length > 0,
    detail: [
      others.length === 0 ? 'none unexpected' : `${others.length} unexpected: ${others.slice(0, 3).join('; ')}`,
      lost.length === 0 ? '' : `${lost.length} refused as sessions the database lost`,
      outside.length === 0 ? '' : `outside a fault: ${outside.map((incident) => incident.what).join('; ')}`,
      tolerated === '' ? '' : `during faults: ${tolerated}`,
    ]
      .filter(Boolean)
      .join('; '),
  }
}

interface DeliveredEvent {
  type: string
  timestamp: string
  data: { txHash: string; blockHash: string | null }
}

/**
 * The setup users' webhooks, from what the receiver got, the events table and the chain: every delivery signed (v1
 * under its endpoint's secret, v1a under a published key) and each id with one body; every event recorded for a
 * webhook delivered to its own endpoint and none invented; every anchor of theirs on chain told as confirmed in the
 * block it is in now, and every confirmed told of either on chain or told reorged after; nothing left to deliver.
 */
async function webhookDeliveries(
  world: World,
  workload: Workload,
  events: ChainEvent[],
  db: pg.Client,
  databaseMayForget: boolean,
): Promise<Invariant> {
  const problems: string[] = []
  const received = world.webhooks.delivered
  const keys = await fetch(`${world.lbUrl}/.well-known/webhook-keys`).then(
    (response) => response.json() as Promise<{ keys: { publicKey: string }[] }>,
  )
  const publicKeys = keys.keys.map((key) => key.publicKey)
  const hookOf = new Map(workload.webhooks.map((hook) => [hook.endpoint, hook]))
  let unsigned = 0
  const bodies = new Map<string, string>()
  for (const delivery of received) {
    const headers = {
      'webhook-id': delivery.id,
      'webhook-timestamp': delivery.timestamp,
      'webhook-signature': delivery.signature,
    }
    const options = { now: delivery.receivedAt }
    const secret = hookOf.get(delivery.endpoint)?.secret
    const v1 = await verifyWebhook(delivery.body, headers, { secret }, options).then(
      () => true,
      () => false,
    )
    const v1a = await verifyWebhook(delivery.body, headers, { publicKeys }, options).then(
      () => true,
      () => false,
    )
    if (!v1 || !v1a) unsigned += 1
    const earlier = bodies.get(delivery.id)
    if (earlier !== undefined && earlier !== delivery.body) problems.push(`${delivery.id} arrived with two bodies`)
    bodies.set(delivery.id, delivery.body)
  }
  if (unsigned > 0) problems.push(`${unsigned} deliveries whose v1 or v1a signature does not verify`)

  const { rows: recorded } = await db.query<{ id: string; email: string }>(
    `SELECT e.id, u.email FROM events e JOIN users u ON u.id = e.user_id JOIN webhooks w ON w.user_id = e.user_id
     WHERE e.type IN ('anchor.confirmed', 'anchor.reorged', 'anchor.failed') AND e.created_at >= w.created_at`,
  )
  const emailOfEvent = new Map(recorded.map((row) => [row.id, row.email.toLowerCase()]))
  const receivedAt = new Map(received.map((delivery) => [delivery.id, delivery]))
  const undelivered = recorded.filter((row) => !receivedAt.has(row.id)).length
  if (undelivered > 0) problems.push(`${undelivered} of ${recorded.length} recorded events never delivered`)
  for (const delivery of received) {
    const owner = emailOfEvent.get(delivery.id)
    if (owner === undefined) problems.push(`${delivery.id} delivered but never recorded`)
    else if (owner !== hookOf.get(delivery.endpoint)?.email.toLowerCase()) {
      problems.push(`${delivery.id} delivered to another account's endpoint`)
    }
  }

  // What each transaction was last told to be, in the order the events were recorded.
  const told = new Map<string, DeliveredEvent[]>()
  for (const body of bodies.values()) {
    const event = JSON.parse(body) as DeliveredEvent
    const txHash = event.data.txHash.toLowerCase()
    told.set(txHash, [...(told.get(txHash) ?? []), event])
  }
  for (const list of told.values()) list.sort((a, b) => a.timestamp.localeCompare(b.timestamp))
  const onChain = new Set(events.map((event) => event.txHash.toLowerCase()))
  for (const [txHash, list] of told) {
    const last = list.at(-1)!
    if (!onChain.has(txHash) && last.type === 'anchor.confirmed')
      problems.push(`${txHash} told confirmed, not on chain`)
  }
  const { rows: theirs } = await db.query<{ tx_hash: string }>(
    `SELECT a.tx_hash FROM anchors a JOIN webhooks w ON w.user_id = a.user_id
     WHERE a.status = 'confirmed' AND a.created_at >= w.created_at`,
  )
  let untold = 0
  for (const { tx_hash } of theirs) {
    const txHash = tx_hash.toLowerCase()
    if (!onChain.has(txHash)) continue
    const confirmed = (told.get(txHash) ?? []).filter((event) => event.type === 'anchor.confirmed').at(-1)
    if (!confirmed) {
      untold += 1
      continue
    }
    const receipt = await world.chain.getTransactionReceipt({ hash: txHash as Hex })
    if (confirmed.data.blockHash !== receipt.blockHash) problems.push(`${txHash} told confirmed in another block`)
  }
  if (untold > 0) problems.push(`${untold} of their ${theirs.length} anchors on chain never told confirmed`)

  const { rows: left } = await db.query<{ status: string; n: number }>(
    "SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered' GROUP BY status",
  )
  for (const row of left) problems.push(`${row.n} deliveries ${row.status}`)

  const repeats = received.length - bodies.size
  // A database that forgot its last commits may have lost an anchor's owner with them: recovered from the chain, it
  // tells no one. Only that difference is accepted.
  const onlyForgotten = databaseMayForget && problems.every((problem) => problem.includes('never told confirmed'))
  return {
    name: 'every webhook event delivered to its endpoint, signed (v1 and v1a), none invented, none left to deliver',
    ok: problems.length === 0 || onlyForgotten,
    ...(onlyForgotten && problems.length > 0 && { accepted: true }),
    detail:
      problems.length === 0 || onlyForgotten
        ? `${bodies.size} events to ${workload.webhooks.length} endpoints, ${recorded.length} recorded; ` +
          `${received.length} deliveries (${repeats} repeated after a lost answer), ${world.webhooks.refused} answered 503 on purpose and tried again` +
          (problems.length > 0 ? `; ${problems.join('; ')}` : '')
        : problems.slice(0, 5).join('; '),
  }
}
