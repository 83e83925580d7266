// Follows redirects as a browser would, with a cookie jar: requests to the service go through app.inject, the rest
// over real HTTP to the local provider. Stops at the app's deep link (`<scheme>://...`).
import type { AppInstance } from '../../src/api/app-types.ts'

export interface BrowseResult {
  /** The deep link the journey ended on. */
  deepLink: URL
  /** Every URL visited, in order. */
  visited: string[]
}

export class TestBrowser {
  private readonly cookies = new Map<string, Map<string, string>>()

  constructor(
    private readonly app: AppInstance,
    private readonly appOrigin: string,
    private readonly appScheme: string,
  ) {}

  /** Follows redirects from `start` until the app's deep link; fails on any non-redirect answer on the way. */
  async follow(start: string, options: { stopAt?: (url: URL) => boolean } = {}): Promise<BrowseResult> {
    const visited: string[] = []
    let url = new URL(start)
    for (let hop = 0; hop < 25; hop++) {
      if (url.protocol === `${this.appScheme}:`) return { deepLink: url, visited }
      if (options.stopAt?.(url)) return { deepLink: url, visited }
      visited.push(url.href)
      const { status, location } = await this.get(url)
      if (status < 300 || status >= 400 || location === undefined) {
        throw new Error(`the journey stopped at ${url.href} with status ${status}`)
      }
      url = new URL(location, url)
    }
    throw new Error('too many redirects')
  }

  async get(url: URL): Promise<{ status: number; location: string | undefined }> {
    if (url.origin === this.appOrigin) {
      const response = await this.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` })
      const location = response.headers.location
      return { status: response.statusCode, location: typeof location === 'string' ? location : undefined }
    }
    const jar = this.cookies.get(url.origin) ?? new Map<string, string>()
    this.cookies.set(url.origin, jar)
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const response = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const separator = pair!.indexOf('=')
      jar.set(pair!.slice(0, separator).trim(), pair!.slice(separator + 1).trim())
    }
    await response.arrayBuffer()
    return { status: response.status, location: response.headers.get('location') ?? undefined }
  }
}
