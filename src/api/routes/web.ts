// The verification page: GET /v/:id (HTML, revalidated on every visit) and GET /assets/:name (content-hashed,
// cached for a year). Its files are loaded into memory: read from the build `npm install` (or `npm run build`) made.
// In production that build is all there is: it is read before the server starts, which refuses to start without it.
// Elsewhere, when a source changed since, the page is bundled in a child process once the server listens, and a
// request that arrives before it is ready waits for it. The key stays in the URL fragment, which no browser sends.
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { buildWebAssets } from '../../web/build-assets.ts'
import { contentSecurityPolicy, renderPageHtml } from '../../web/page-html.ts'
import type { WebAsset } from '../../web/web-build-files.ts'
import type { AppInstance } from '../app-types.ts'
import { ProblemError } from '../problem.ts'

interface ServedPage {
  html: string
  etag: string
  assets: Map<string, WebAsset>
}

const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The encodings the client accepts with a non-zero quality. */
function acceptedEncodings(request: FastifyRequest): Set<string> {
  const accepted = new Set<string>()
  for (const part of (request.headers['accept-encoding'] ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined)
    if (name && (q === undefined || Number(q) > 0)) accepted.add(name)
  }
  return accepted
}

export async function webRoutes(app: AppInstance): Promise<void> {
  const { apiBaseUrl } = app.deps.config.web
  const prebuiltOnly = app.deps.config.production
  const securityHeaders = {
    'content-security-policy': contentSecurityPolicy(apiBaseUrl),
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  }

  let pending: Promise<ServedPage> | undefined
  const closing = new AbortController()
  const page = (): Promise<ServedPage> => {
    pending ??= buildWebAssets({ signal: closing.signal, prebuiltOnly }).then(
      ({ assets, script, style }) => {
        const html = renderPageHtml({
          scriptHref: `../assets/${script}`,
          styleHref: `../assets/${style}`,
          apiBase: apiBaseUrl,
        })
        return { html, etag: `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`, assets }
      },
      (error: unknown) => {
        // Not cached: the next request tries again.
        pending = undefined
        throw error
      },
    )
    return pending
  }

  // Production: the built page or no start.
  if (prebuiltOnly) await page()
  app.addHook('onListen', async () => {
    page().catch((error: unknown) => {
      // A build stopped by the shutdown has not failed.
      if (!closing.signal.aborted) app.log.error({ err: error }, 'the verification page could not be built')
    })
  })
  // A build still running at close would outlive the app: its process is stopped.
  app.addHook('onClose', async () => {
    closing.abort()
    await pending?.catch(() => undefined)
  })

  async function loaded(): Promise<ServedPage> {
    try {
      return await page()
    } catch {
      throw new ProblemError(503, 'NOT_READY', 'The verification page is not available; try again shortly')
    }
  }

  app.get(
    '/v/:id',
    {
      schema: {
        tags: ['verify'],
        summary: 'The verification page a QR code opens; the key in the URL fragment never reaches the server',
        params: z.object({ id: z.string().describe('The transaction hash: 43 base64url characters, or 0x hex') }),
        produces: ['text/html'],
      },
    },
    async (request, reply) => {
      const { html, etag } = await loaded()
      const raw = (reply as unknown as FastifyReply)
        .headers(securityHeaders)
        .header('cache-control', 'no-cache')
        .header('etag', etag)
      if (request.headers['if-none-match'] === etag) return raw.code(304).send()
      return raw.type('text/html; charset=utf-8').send(html)
    },
  )

  app.get(
    '/assets/:name',
    { schema: { hide: true, params: z.object({ name: z.string() }) } },
    async (request, reply) => {
      const file = (await loaded()).assets.get(request.params.name)
      if (!file) throw new ProblemError(404, 'NOT_FOUND', 'No such asset')
      const encodings = acceptedEncodings(request)
      const [encoding, body] = encodings.has('br')
        ? ['br', file.brotli]
        : encodings.has('gzip')
          ? ['gzip', file.gzip]
          : [undefined, file.body]
      const raw = (reply as unknown as FastifyReply)
        .header('cache-control', IMMUTABLE)
        // Added to what CORS already put there (Origin), not in its place.
        .header('vary', [reply.getHeader('vary'), 'Accept-Encoding'].filter(Boolean).join(', '))
        .type(file.contentType)
      if (encoding) raw.header('content-encoding', encoding)
      return raw.send(Buffer.from(body.buffer, body.byteOffset, body.byteLength))
    },
  )
}
