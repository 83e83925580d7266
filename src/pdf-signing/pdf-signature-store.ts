// The PDF signatures the service made: one per anchor, kept so that the same request is answered with the same CMS
// (a client that lost the answer asks again) and another digest for the same anchor is refused: an anchor paid for
// one document buys one PDF signature.
import { sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { rows } from '../db/sql-rows.ts'

export interface StoredPdfSignature {
  digest: string
  cms: Uint8Array
  timestampTime: Date
  timestampAuthority: string
  blockTime: Date
}

interface Row {
  digest: string
  cms: string
  timestamp_time: Date | string
  timestamp_authority: string
  block_time: Date | string
}

export async function findPdfSignature(db: Database, anchorId: string): Promise<StoredPdfSignature | undefined> {
  const [row] = await rows<Row>(db, sql`SELECT * FROM pdf_signatures WHERE anchor_id = ${anchorId}`)
  return row ? fromRow(row) : undefined
}

/**
 * Keeps `signature` for the anchor unless one is kept already; answers the one kept either way, so that two requests
 * racing for one anchor both answer the first that was stored.
 */
export async function keepPdfSignature(
  db: Database,
  anchorId: string,
  signature: StoredPdfSignature,
): Promise<StoredPdfSignature> {
  const [row] = await rows<Row>(
    db,
    sql`INSERT INTO pdf_signatures (anchor_id, digest, cms, timestamp_time, timestamp_authority, block_time)
        VALUES (${anchorId}, ${signature.digest}, ${Buffer.from(signature.cms).toString('base64')},
                ${signature.timestampTime.toISOString()}, ${signature.timestampAuthority},
                ${signature.blockTime.toISOString()})
        ON CONFLICT (anchor_id) DO NOTHING
        RETURNING *`,
  )
  if (row) return fromRow(row)
  const kept = await findPdfSignature(db, anchorId)
  if (!kept) throw new Error('a PDF signature vanished between its conflict and its read')
  return kept
}

function fromRow(row: Row): StoredPdfSignature {
  return {
    digest: row.digest,
    cms: new Uint8Array(Buffer.from(row.cms, 'base64')),
    timestampTime: new Date(row.timestamp_time),
    timestampAuthority: row.timestamp_authority,
    blockTime: new Date(row.block_time),
  }
}
