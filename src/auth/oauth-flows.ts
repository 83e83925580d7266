// OAuth flow state kept in the database (shared by every instance): what the callback must check, keyed by the
// hash of `state`, taken exactly once.
import { and, eq, lt } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { oauthFlows } from '../db/schema.ts'
import { hashToken } from './sessions.ts'

export type OAuthProviderName = 'google' | 'microsoft'

export interface OAuthFlow {
  provider: OAuthProviderName
  state: string
  nonce: string
  codeVerifier: string
  /** The app's S256 challenge when it opted into the one-time-code hand-off. */
  appCodeChallenge: string | null
}

export async function saveOAuthFlow(db: Database, flow: OAuthFlow, ttlSeconds: number, now = new Date()) {
  await db.insert(oauthFlows).values({
    stateHash: hashToken(flow.state),
    provider: flow.provider,
    nonce: flow.nonce,
    codeVerifier: flow.codeVerifier,
    appCodeChallenge: flow.appCodeChallenge,
    expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    createdAt: now,
  })
}

/**
 * Deletes and returns the flow `state` names, in one statement, so a replayed callback finds nothing. An expired
 * flow is deleted too and reported as absent.
 */
export async function takeOAuthFlow(
  db: Database,
  provider: OAuthProviderName,
  state: string,
  now = new Date(),
): Promise<OAuthFlow | undefined> {
  const [row] = await db
    .delete(oauthFlows)
    .where(and(eq(oauthFlows.stateHash, hashToken(state)), eq(oauthFlows.provider, provider)))
    .returning()
  if (!row || row.expiresAt.getTime() <= now.getTime()) return undefined
  return {
    provider,
    state,
    nonce: row.nonce,
    codeVerifier: row.codeVerifier,
    appCodeChallenge: row.appCodeChallenge,
  }
}

export async function deleteExpiredOAuthFlows(db: Database, now = new Date()): Promise<void> {
  await db.delete(oauthFlows).where(lt(oauthFlows.expiresAt, now))
}
