// GET /v/:id and GET /assets/:name as HTTP: security headers, caching, compression, size, and what the HTML holds.
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config/env-fields.ts'
import { createTestApp, type TestApp, testConfig } from '../helpers/app.ts'

/** Gzipped budgets: the page must stay small on a phone. */
// 44 KiB since the page calls the service through @docanchor/client, whose answers are parsed with Zod schemas.
const MAX_SCRIPT_GZIP_BYTES = 44 * 1024
const MAX_STYLE_GZIP_BYTES = 4 * 1024

describe('the verification page routes', () => {
  let t: TestApp
  let html: string
  let script: string
  let style: string

  beforeAll(async () => {
    t = await createTestApp()
    const response = await t.app.inject('/v/bKpCcm5fZzH5YvZQFoRkEfyY7xok3CqkOtLxSwvUvSU')
    html = response.body
    script = /<script type="module" src="\.\.\/assets\/([^"]+)"><\/script>/.exec(html)?.[1] ?? ''
    style = /<link rel="stylesheet" href="\.\.\/assets\/([^"]+)">/.exec(html)?.[1] ?? ''
  })
  afterAll(async () => {
    await t?.close()
  })

  describe('GET /v/:id', () => {
    it('returns the HTML with a strict Content-Security-Policy, no referrer and revalidation on every visit', async () => {
      const response = await t.app.inject('/v/anything')
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(response.headers['cache-control']).toBe('no-cache')
      expect(response.headers['referrer-policy']).toBe('no-referrer')
      expect(response.headers['x-content-type-options']).toBe('nosniff')
      expect(response.headers['content-security-policy']).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      )
      expect(response.body).toBe(html)
    })

    it('answers 304 to its current ETag', async () => {
      const { etag } = (await t.app.inject('/v/x')).headers as { etag: string }
      expect(etag).toMatch(/^"[\w-]{27}"$/)
      const again = await t.app.inject({ url: '/v/y', headers: { 'if-none-match': etag } })
      expect(again.statusCode).toBe(304)
      expect(again.body).toBe('')
    })

    it('has no inline script, style or event handler, loads nothing from elsewhere and keeps the referrer', () => {
      expect(script).toMatch(/^main-[\w-]+\.js$/)
      expect(style).toMatch(/^main-[\w-]+\.css$/)
      expect(html.match(/<script\b/g)).toHaveLength(1)
      expect(html).not.toMatch(/\son[a-z]+=/i)
      expect(html).not.toMatch(/\sstyle=/i)
      expect(html).not.toMatch(/<style\b/i)
      expect(html).not.toMatch(/https?:\/\//)
      expect(html).toContain('<meta name="referrer" content="no-referrer">')
      expect(html).toContain('<meta name="api-base" content="">')
      expect(html).toContain('<html lang="en">')
      expect(html).toContain('<label for="pdf-file">')
    })

    it('serves HEAD too', async () => {
      const response = await t.app.inject({ method: 'HEAD', url: '/v/x' })
      expect(response.statusCode).toBe(200)
      expect(response.body).toBe('')
    })
  })

  describe('GET /assets/:name', () => {
    it('serves hashed assets for a year, immutable, in brotli, gzip or as is', async () => {
      const plain = await t.app.inject({ url: `/assets/${script}`, headers: { 'accept-encoding': 'identity' } })
      expect(plain.statusCode).toBe(200)
      expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8')
      expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(plain.headers.vary).toBe('Origin, Accept-Encoding')
      expect(plain.headers['content-encoding']).toBeUndefined()

      const br = await t.app.inject({ url: `/assets/${script}`, headers: { 'accept-encoding': 'gzip, deflate, br' } })
      expect(br.headers['content-encoding']).toBe('br')
      expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true)

      const gzip = await t.app.inject({ url: `/assets/${script}`, headers: { 'accept-encoding': 'gzip, br;q=0' } })
      expect(gzip.headers['content-encoding']).toBe('gzip')
      expect(gunzipSync(gzip.rawPayload).equals(plain.rawPayload)).toBe(true)

      const css = await t.app.inject({ url: `/assets/${style}`, headers: { 'accept-encoding': 'gzip' } })
      expect(css.headers['content-type']).toBe('text/css; charset=utf-8')
      expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    })

    it(`keeps the page small: script ≤ ${MAX_SCRIPT_GZIP_BYTES / 1024} KiB and style ≤ ${MAX_STYLE_GZIP_BYTES / 1024} KiB gzipped`, async () => {
      const sizes = await Promise.all(
        [script, style].map(async (name) => {
          const response = await t.app.inject({ url: `/assets/${name}`, headers: { 'accept-encoding': 'gzip' } })
          return response.rawPayload.length
        }),
      )
      expect(sizes[0]).toBeLessThanOrEqual(MAX_SCRIPT_GZIP_BYTES)
      expect(sizes[1]).toBeLessThanOrEqual(MAX_STYLE_GZIP_BYTES)
    })

    it('references no other origin from the stylesheet', async () => {
      const css = (await t.app.inject({ url: `/assets/${style}`, headers: { 'accept-encoding': 'identity' } })).body
      expect(css).not.toMatch(/url\(|@import|https?:\/\//)
    })

    it('answers 404 with a problem body for an unknown asset', async () => {
      const response = await t.app.inject('/assets/main-unknown.js')
      expect(response.statusCode).toBe(404)
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(response.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' })
    })
  })

  describe('WEB_API_BASE_URL', () => {
    it('points the page at another API and lets it connect there, and nowhere else', async () => {
      const other = await createTestApp({
        env: { WEB_API_BASE_URL: 'https://api.example.com/' },
        testChain: t.testChain,
      })
      try {
        const response = await other.app.inject('/v/x')
        expect(response.body).toContain('<meta name="api-base" content="https://api.example.com">')
        expect(response.headers['content-security-policy']).toContain("connect-src 'self' https://api.example.com;")
      } finally {
        await other.close()
      }
    })

    it('refuses a base URL that is not http(s)', () => {
      expect(() => testConfig({ WEB_API_BASE_URL: 'javascript:alert(1)' })).toThrow(ConfigError)
      expect(() => testConfig({ WEB_API_BASE_URL: 'https://api.example.com/?x=1' })).toThrow(/WEB_API_BASE_URL/)
    })
  })
})
