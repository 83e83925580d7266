// Signing in: the session tokens, the mail that carries codes, Google and Microsoft, and how long each step may take.
import { z } from 'zod'
import { booleanFlag, type EnvValues, integer, list, optionalString } from './env-fields.ts'

const MIN_JWT_SECRET_BYTES = 32
/** A Microsoft directory (tenant) id, as the `tid` claim carries it. */
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const authEnv = {
  JWT_SECRET: optionalString,
  JWT_ISSUER: z.string().default('document-anchoring-service'),
  JWT_AUDIENCE: z.string().default('document-anchoring-app'),
  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default('Document Anchoring <no-reply@localhost>'),
  GOOGLE_CLIENT_ID: optionalString,
  GOOGLE_CLIENT_SECRET: optionalString,
  GOOGLE_ISSUER: z.string().url().default('https://accounts.google.com'),
  MICROSOFT_CLIENT_ID: optionalString,
  MICROSOFT_CLIENT_SECRET: optionalString,
  MICROSOFT_ISSUER: z.string().url().default('https://login.microsoftonline.com/common/v2.0'),
  MICROSOFT_ALLOWED_TENANTS: list,
  /** Lets OAuth talk to http:// issuers (a local test provider); refused in production. */
  OAUTH_ALLOW_INSECURE_REQUESTS: booleanFlag,
  OAUTH_FLOW_TTL_SECONDS: integer(600, 30),
  OAUTH_STARTS_PER_IP_PER_HOUR: integer(60, 1),
  AUTH_EXCHANGE_CODE_TTL_SECONDS: integer(60, 5),
  SIGN_IN_CODE_TTL_SECONDS: integer(600, 60),
  SIGN_IN_CODE_MAX_ATTEMPTS: integer(5, 1),
}

export function authSettings(e: EnvValues<typeof authEnv>, production: boolean, problems: string[]) {
  if (e.JWT_SECRET !== undefined && Buffer.byteLength(e.JWT_SECRET) < MIN_JWT_SECRET_BYTES) {
    problems.push(`JWT_SECRET: must be at least ${MIN_JWT_SECRET_BYTES} bytes`)
  }
  if (production && e.OAUTH_ALLOW_INSECURE_REQUESTS) {
    problems.push('OAUTH_ALLOW_INSECURE_REQUESTS: not allowed in production')
  }
  return {
    jwt: { secret: e.JWT_SECRET, issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    oauth: {
      google: oauthProvider('GOOGLE', e.GOOGLE_ISSUER, e.GOOGLE_CLIENT_ID, e.GOOGLE_CLIENT_SECRET, problems),
      microsoft: oauthProvider(
        'MICROSOFT',
        e.MICROSOFT_ISSUER,
        e.MICROSOFT_CLIENT_ID,
        e.MICROSOFT_CLIENT_SECRET,
        problems,
        e.MICROSOFT_ALLOWED_TENANTS,
      ),
      /** Test-only: allow http:// issuers. Never true in production. */
      allowInsecureRequests: e.OAUTH_ALLOW_INSECURE_REQUESTS,
    },
    signIn: {
      codeTtlSeconds: e.SIGN_IN_CODE_TTL_SECONDS,
      codeMaxAttempts: e.SIGN_IN_CODE_MAX_ATTEMPTS,
      oauthFlowTtlSeconds: e.OAUTH_FLOW_TTL_SECONDS,
      exchangeCodeTtlSeconds: e.AUTH_EXCHANGE_CODE_TTL_SECONDS,
      oauthStartsPerIpPerHour: e.OAUTH_STARTS_PER_IP_PER_HOUR,
    },
  }
}

function oauthProvider(
  prefix: string,
  issuer: string,
  clientId: string | undefined,
  clientSecret: string | undefined,
  problems: string[],
  allowedTenants: string[] = [],
) {
  for (const tenant of allowedTenants) {
    if (!TENANT_ID.test(tenant)) problems.push(`${prefix}_ALLOWED_TENANTS: ${tenant} is not a tenant id (a GUID)`)
  }
  if (clientId === undefined && clientSecret === undefined) return undefined
  if (clientId === undefined || clientSecret === undefined) {
    problems.push(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET: set both or neither`)
    return undefined
  }
  return {
    issuer,
    clientId,
    clientSecret,
    /** With a multi-tenant issuer: the only tenants (`tid`, lower case) whose users may sign in; empty admits any. */
    allowedTenants: allowedTenants.map((tenant) => tenant.toLowerCase()),
  }
}

export type OAuthProviderConfig = NonNullable<ReturnType<typeof oauthProvider>>
