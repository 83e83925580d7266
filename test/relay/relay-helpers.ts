// Request builders and database probes shared by the relay tests.
import { randomBytes } from 'node:crypto'
import { toBase64Url, ZERO_TX_HASH } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { getAbiItem, type Hex } from 'viem'
import type { AppInstance } from '../../src/api/app-types.ts'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import type { Database } from '../../src/db/database.ts'
import type { TestChain } from '../helpers/chain/anvil.ts'

export function randomHash(): `0x${string}` {
  return `0x${randomBytes(32).toString('hex')}`
}

/** IV ‖ ciphertext ‖ tag shaped bytes: what a client would send. */
export function randomPayload(bytes = 60): string {
  return toBase64Url(randomBytes(bytes))
}

export interface RelayBody {
  compositeHash: string
  previousTxHash: string
  encryptedPayload: string
}

export function newBody(previousTxHash = ZERO_TX_HASH): RelayBody {
  return { compositeHash: randomHash(), previousTxHash, encryptedPayload: randomPayload() }
}

export function postRelay(app: AppInstance, headers: Record<string, string>, body: unknown) {
  return app.inject({ method: 'POST', url: '/api/relay', headers, payload: body as object })
}

/**
 * A relay that is to end mined, as its txHash: a 202 (the block not made within the test's short RELAY_WAIT_MS, as on a
 * loaded machine) is repeated, and the repeat answers once the receipt is there.
 */
export async function relayMined(app: AppInstance, headers: Record<string, string>, body: unknown): Promise<Hex> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const response = await postRelay(app, headers, body)
    if (response.statusCode === 201 || response.statusCode === 200) return response.json().txHash
    if (response.statusCode !== 202) throw new Error(`relay answered ${response.statusCode}: ${response.body}`)
  }
  throw new Error('relay still pending after 20 repeats')
}

export async function count(db: Database, table: 'anchors' | 'relay_transactions' | 'anchor_usage'): Promise<number> {
  const result = (await db.execute(sql.raw(`SELECT count(*) AS n FROM ${table}`))) as unknown as {
    rows: { n: unknown }[]
  }
  return Number(result.rows[0]?.n)
}

export async function query<T = Record<string, unknown>>(db: Database, text: ReturnType<typeof sql>): Promise<T[]> {
  return ((await db.execute(text)) as unknown as { rows: T[] }).rows
}

/** Nonces of the relayer's anchors, sorted. */
export async function anchorNonces(db: Database): Promise<number[]> {
  const rows = await query<{ nonce: unknown }>(db, sql`SELECT nonce FROM anchors ORDER BY nonce`)
  return rows.map((r) => Number(r.nonce))
}

export function expectContiguous(nonces: number[], from = nonces[0] ?? 0): boolean {
  return nonces.every((nonce, i) => nonce === from + i)
}

/** A raw JSON-RPC call (anvil's test methods are not in viem's typed schema). */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await response.json()) as { result?: T; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result as T
}

/** The relayer's next nonce as its nonce row has it (a test chain's one key). */
export async function nextNonceRow(db: Database): Promise<number> {
  return Number((await query(db, sql`SELECT next_nonce FROM relayer_nonces`))[0]?.next_nonce)
}

export async function anchorRow(db: Database, compositeHash: string): Promise<Record<string, unknown> | undefined> {
  return (await query(db, sql`SELECT * FROM anchors WHERE composite_hash = ${compositeHash}`))[0]
}

/**
 * Waits until a key's transactions in anvil's pool are mined: anvil answers a send before its automine has made the
 * block, so what a monitor pass sent may not be on chain when the next pass, or a count of the chain, looks.
 */
export async function poolMined(chain: TestChain, address = chain.account(0).address): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const [latest, pending] = await Promise.all([
      chain.publicClient.getTransactionCount({ address }),
      chain.publicClient.getTransactionCount({ address, blockTag: 'pending' }),
    ])
    if (latest === pending) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`transactions of ${address} still unmined after 10 s`)
}

/** How many times the chain holds the composite hash. */
export async function timesOnChain(chain: TestChain, compositeHash: string): Promise<number> {
  const logs = await chain.publicClient.getLogs({
    address: chain.contract,
    event: getAbiItem({ abi: documentAnchorsAbi, name: 'DocumentAnchored' }),
    args: { compositeHash: compositeHash as Hex },
    fromBlock: 0n,
  })
  return logs.length
}

/** As a restore from a backup taken before these anchors: their rows gone, the nonce row as it was. */
export async function forgetAnchors(db: Database, bodies: RelayBody[], nonceBefore: number): Promise<void> {
  await db.transaction(async (tx) => {
    for (const body of bodies) await tx.execute(sql`DELETE FROM anchors WHERE composite_hash = ${body.compositeHash}`)
    await tx.execute(sql`UPDATE relayer_nonces SET next_nonce = ${nonceBefore}`)
  })
}
