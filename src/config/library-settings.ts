// The cloud library's limits per account.
import { type EnvValues, integer } from './env-fields.ts'

export const libraryEnv = {
  LIBRARY_MAX_SIGNATURES: integer(500, 1),
  LIBRARY_MAX_SNIPPETS: integer(2_000, 1),
  LIBRARY_MAX_TOMBSTONES: integer(10_000, 1),
  /** Library syncs per account a minute: each may carry 16 MiB to read and validate. */
  LIBRARY_SYNCS_PER_USER_PER_MINUTE: integer(30, 1),
  LIBRARY_MAX_PNG_BYTES: integer(256 * 1024, 64),
  LIBRARY_CLOCK_SKEW_MS: integer(5 * 60_000),
}

export function librarySettings(e: EnvValues<typeof libraryEnv>) {
  return {
    /** Live signatures per user. */
    maxSignatures: e.LIBRARY_MAX_SIGNATURES,
    /** Live snippets per user. */
    maxSnippets: e.LIBRARY_MAX_SNIPPETS,
    /** Deletion markers kept per user and kind; the oldest beyond this are forgotten. Also caps a sync's delete list. */
    maxTombstones: e.LIBRARY_MAX_TOMBSTONES,
    /** Syncs per account a minute. */
    syncsPerUserPerMinute: e.LIBRARY_SYNCS_PER_USER_PER_MINUTE,
    /** Decoded size of one signature PNG. */
    maxPngBytes: e.LIBRARY_MAX_PNG_BYTES,
    /** How far past the server's clock a client timestamp may lie before the sync is rejected. */
    clockSkewMs: e.LIBRARY_CLOCK_SKEW_MS,
  }
}

export type LibraryLimits = ReturnType<typeof librarySettings>
