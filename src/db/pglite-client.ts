// A PGlite instance for drizzle without a per-query cost drizzle and PGlite add up to. drizzle's PGlite session passes
// the same parsers with every query (the raw text of timestamps, intervals, dates and their arrays); PGlite merges
// per-query parsers into its whole parser table (hundreds of entries, one per array type) on every call: about a
// quarter of the time of a small statement. Installed once in the table instead, they are dropped from each call.
import { PGlite, type PGliteOptions, types } from '@electric-sql/pglite'

const raw = (value: string) => value

/** What drizzle-orm/pglite/session.js passes as `parsers` with every query (kept as text; drizzle maps them). */
export const DRIZZLE_TEXT_PARSERS: Record<number, (value: string) => string> = {
  [types.TIMESTAMP]: raw,
  [types.TIMESTAMPTZ]: raw,
  [types.INTERVAL]: raw,
  [types.DATE]: raw,
  1231: raw, // numeric[]
  1115: raw, // timestamp[]
  1185: raw, // timestamptz[]
  1187: raw, // interval[]
  1182: raw, // date[]
}

type QueryOptions = NonNullable<Parameters<PGlite['query']>[2]>

export async function openPgliteForDrizzle(options: PGliteOptions): Promise<PGlite> {
  const client = new PGlite(options)
  await client.waitReady
  // After waitReady: PGlite fills in the array types' parsers while starting, and these must win, as in a merge.
  Object.assign(client.parsers, DRIZZLE_TEXT_PARSERS)
  const query = client.query.bind(client)
  client.query = ((text: string, params?: unknown[], queryOptions?: QueryOptions) =>
    query(
      text,
      params,
      onlyInstalledParsers(queryOptions) ? { ...queryOptions, parsers: undefined } : queryOptions,
    )) as PGlite['query']
  return client
}

/** True when every per-query parser is one the instance already holds (other parsers are still honoured). */
function onlyInstalledParsers(options: QueryOptions | undefined): options is QueryOptions {
  if (!options?.parsers) return false
  for (const oid of Object.keys(options.parsers)) if (!(oid in DRIZZLE_TEXT_PARSERS)) return false
  return true
}
