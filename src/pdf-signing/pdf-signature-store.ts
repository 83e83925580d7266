// The PDF signatures the service timestamped: one per anchor, kept so that the same request is answered with the same
// CMS (a client that lost the answer asks again) and another digest for the same anchor is refused: an anchor paid
// for one document buys one PDF signature. The anchor is reserved for a digest before any time-stamping authority is
// asked, so a concurrent request for another digest loses without costing a token.
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

/** The anchor reserved for this request, or taken: by what digest, and the signature if it is made already. */
export type PdfSignatureSlot =
  | { state: 'reserved'; digest: string }
  | { state: 'taken'; digest: string; made: StoredPdfSignature | null }

interface Row {
  digest: string
  cms: string | null
  timestamp_time: Date | string | null
  timestamp_authority: string | null
  block_time: Date | string
}

/** A reservation older than this belongs to a request that died: another may take it over. */
const ABANDONED_AFTER = '2 minutes'

/**
 * Reserves the anchor for `digest`: `reserved` when this request is to timestamp it, `taken` with what holds it
 * otherwise (the same digest made or being made, or another digest).
 */
export async function reservePdfSignature(
  db: Database,
  anchorId: string,
  digest: string,
  blockTime: Date,
): Promise<PdfSignatureSlot> {
  const [fresh] = await rows<Row>(
    db,
    sql`INSERT INTO pdf_signatures (anchor_id, digest, block_time)
        VALUES (${anchorId}, ${digest}, ${blockTime.toISOString()})
        ON CONFLICT (anchor_id) DO UPDATE SET digest = EXCLUDED.digest, created_at = now()
          WHERE pdf_signatures.cms IS NULL AND pdf_signatures.created_at < now() - ${ABANDONED_AFTER}::interval
        RETURNING *`,
  )
  if (fresh) return { state: 'reserved', digest }
  const [row] = await rows<Row>(db, sql`SELECT * FROM pdf_signatures WHERE anchor_id = ${anchorId}`)
  if (!row) return reservePdfSignature(db, anchorId, digest, blockTime)
  return { state: 'taken', digest: row.digest, made: made(row) }
}

export async function completePdfSignature(
  db: Database,
  anchorId: string,
  signature: Omit<StoredPdfSignature, 'blockTime'>,
): Promise<void> {
  await db.execute(
    sql`UPDATE pdf_signatures
        SET cms = ${Buffer.from(signature.cms).toString('base64')},
            timestamp_time = ${signature.timestampTime.toISOString()},
            timestamp_authority = ${signature.timestampAuthority}
        WHERE anchor_id = ${anchorId} AND digest = ${signature.digest} AND cms IS NULL`,
  )
}

/** Gives the reservation up (no authority answered), so that the next request may try again. */
export async function releasePdfSignature(db: Database, anchorId: string, digest: string): Promise<void> {
  await db.execute(sql`DELETE FROM pdf_signatures WHERE anchor_id = ${anchorId} AND digest = ${digest} AND cms IS NULL`)
}

function made(row: Row): StoredPdfSignature | null {
  if (row.cms === null || row.timestamp_time === null || row.timestamp_authority === null) return null
  return {
    digest: row.digest,
    cms: new Uint8Array(Buffer.from(row.cms, 'base64')),
    timestampTime: new Date(row.timestamp_time),
    timestampAuthority: row.timestamp_authority,
    blockTime: new Date(row.block_time),
  }
}
