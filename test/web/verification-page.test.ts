// The verification page in headless Chromium against the real service: a chain of real signatures on anvil, the
// real verify route, PGlite or PostgreSQL, and the page's own bundle as the service serves it.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type AnchorPayload,
  type AnchorRequest,
  anchoredSignatureCms,
  type CmsSigner,
  certificationRequest,
  encryptPayload,
  generatePayloadKey,
  identityCommitment,
  makeSignerKey,
  type PdfSignatureRequest,
  type SignPdfResult,
  serializeAnchorPayload,
  signPdf,
  txHashToBase64Url,
  webCryptoSigningKey,
} from '@docanchor/client'
import { PDF, PdfArray, PdfDict } from '@libpdf/core'
import type { FastifyBaseLogger } from 'fastify'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import pino from 'pino'
import type { Browser, Page, Worker } from 'playwright-core'
import type { Hash } from 'viem'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ATTACKS, attackableOriginal } from '../../packages/client/test/pdf/attacks.ts'
import { HOSTILE_FILES } from '../../packages/client/test/pdf/hostile-files.ts'
import { signedByPoppler, signedBySignpdf } from '../../packages/client/test/pdf/other-signers.ts'
import { buildApp } from '../../src/api/app.ts'
import type { AppInstance } from '../../src/api/app-types.ts'
import { buildStaticPage } from '../../src/web/static-build.ts'
import { testConfig } from '../helpers/app.ts'
import { startTestChain, type TestChain, testChainContext } from '../helpers/chain/anvil.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'
import { launchChromium, type OpenedPage, openPage } from './helpers/chromium.ts'
import {
  anchorRequest,
  eraseStoredPayload,
  replaceStoredPayload,
  type Signature,
  sign,
} from './helpers/signed-chain.ts'
import { type StaticServer, startStaticServer } from './helpers/static-server.ts'

const EXPLORER = 'https://explorer.example/tx/{txHash}'
// Signing times a few minutes before the anchoring block, as in real use; whole minutes in UTC.
const NOW = Math.floor(Date.now() / 60_000) * 60
const utc = (seconds: number) => `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`
/** The time of day and zone name the page shows in Berlin, e.g. "06:00:34 CET". */
function berlinTime(seconds: number): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/Berlin',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(new Date(seconds * 1000))
  const part = (type: string) => parts.find((item) => item.type === type)?.value
  return `${part('hour')}:${part('minute')}:${part('second')} ${part('timeZoneName')}`
}
const SCREENSHOTS = join(import.meta.dirname, '../../docs/screenshots')
// Screenshots land in docs/ only when asked for (UPDATE_SCREENSHOTS=1), so a test run never dirties the tree.
const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1'

async function contractPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  doc.addPage([595, 842]).drawText('Service agreement', { x: 50, y: 760, font, size: 20 })
  return doc.save({ useObjectStreams: false })
}

/** Drops a file on the page the way a drag from the desktop does: a drop event carrying it in a DataTransfer. */
async function dropFile(page: Page, name: string, bytes: Uint8Array): Promise<void> {
  await page.evaluate(
    ({ name, base64 }) => {
      const binary = atob(base64)
      const data = Uint8Array.from(binary, (char) => char.charCodeAt(0))
      const transfer = new DataTransfer()
      transfer.items.add(new File([data], name, { type: 'application/pdf' }))
      document.body.dispatchEvent(
        new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }),
      )
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }))
    },
    { name, base64: Buffer.from(bytes).toString('base64') },
  )
}

describe('the verification page (GET /v/:id) in Chromium', () => {
  let testChain: TestChain
  let database: TestDatabase
  let app: AppInstance
  let base: string
  let browser: Browser
  let staticHost: StaticServer
  let scratch: string
  // Pages a hook opened live until the end; a test's own close after it, so Chromium does not carry dozens of
  // renderers (one per context) through the file on a busy machine.
  const opened: OpenedPage[] = []
  let openedByTest: OpenedPage[] | undefined
  let ada: Signature
  let grace: Signature
  let zoe: Signature

  async function openTracked(url: string, options: Parameters<typeof openPage>[2] = {}): Promise<OpenedPage> {
    const result = await openPage(browser, url, options)
    ;(openedByTest ?? opened).push(result)
    return result
  }

  async function open(url: string, options: Parameters<typeof openPage>[2] = {}): Promise<Page> {
    return (await openTracked(url, options)).page
  }

  beforeEach(() => {
    openedByTest = []
  })

  afterEach(async () => {
    for (const result of openedByTest ?? []) await result.close()
    openedByTest = undefined
  })

  /** The whole page, or only the element matching `selector`. */
  async function screenshot(page: Page, name: string, selector?: string): Promise<void> {
    const path = join(UPDATE_SCREENSHOTS ? SCREENSHOTS : scratch, `${name}.png`)
    const png = selector
      ? await page.locator(selector).screenshot({ path })
      : await page.screenshot({ path, fullPage: true })
    expect(png.byteLength).toBeGreaterThan(5_000)
  }

  const text = (page: Page, selector: string) => page.locator(selector).textContent()
  /** The definition list entry with this term, as one line of text. */
  const fact = (page: Page, term: string) =>
    page
      .locator('dt', { hasText: new RegExp(`^${term}$`) })
      .first()
      .locator('xpath=following-sibling::dd[1]')
      .textContent()

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'web-page-test-'))
    if (UPDATE_SCREENSHOTS)
      await mkdir(SCREENSHOTS, { recursive: true })
      // The static host comes first: its origin goes into the service's CORS list.
    ;[testChain, database, browser, staticHost] = await Promise.all([
      startTestChain(),
      createTestDatabase(),
      launchChromium(),
      startStaticServer(),
    ])
    // No result cache: a record altered in the database or a chain stopped mid-test shows at once.
    const config = testConfig(
      { VERIFY_CACHE_TTL_SECONDS: '0', VERIFY_NOT_FOUND_TTL_SECONDS: '0', CORS_ORIGINS: staticHost.url },
      scratch,
    )
    app = await buildApp({
      config,
      database: database.handle,
      chain: testChainContext(testChain, { explorerTxUrl: EXPLORER }),
      logger: pino({ level: 'silent' }) as FastifyBaseLogger,
    })
    base = await app.listen({ host: '127.0.0.1', port: 0 })

    const db = database.handle.db
    ada = await sign(testChain, db, {
      documentHash: 'f35efb19fdb382572e3271363516e989c5179a0a7c859e26e4e7fe1b5568217f',
      signer: { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com', trust: 'email', verified: true },
      timestamp: NOW - 600,
    })
    grace = await sign(
      testChain,
      db,
      {
        documentHash: '168f3f49fd78a70aa0e7b2a4317b9131e64d91ccc686410aa41336c939684ae9',
        signer: {
          type: 'company',
          name: 'Grace Hopper',
          email: 'grace@navy.example',
          company: 'Example Corp GmbH',
          position: 'Rear Admiral',
          trust: 'google',
          verified: true,
        },
        timestamp: NOW - 300 + 34,
        geo: { latitude: 52.520008, longitude: 13.404954 },
      },
      { previousTxHash: ada.txHash, relayedBy: { email: 'grace@navy.example', trust: 'google', verified: true } },
    )
    zoe = await sign(
      testChain,
      db,
      {
        documentHash: 'aa'.repeat(32),
        signer: {
          type: 'individual',
          name: 'Zoë Ångström-Łukasz 山田',
          email: '山田@例え.jp',
          position: '<img src=x onerror="document.title=`pwned`">',
          trust: 'microsoft',
          verified: false,
        },
        timestamp: NOW - 60,
        geo: { latitude: -33.8688, longitude: -151.2093 },
      },
      { previousTxHash: grace.txHash, relayedBy: { email: '山田@例え.jp', trust: 'microsoft', verified: false } },
    )
    // The page is bundled when the server starts listening; wait for it here rather than inside a timed test.
    expect((await fetch(`${base}/v/warm-up`)).status).toBe(200)
  })

  afterAll(async () => {
    for (const page of opened) await page.close()
    await browser?.close()
    await app?.close()
    await database?.close()
    await testChain?.stop()
    await staticHost?.close()
    await rm(scratch, { recursive: true, force: true })
  })

  describe('a verified signature', () => {
    it('shows who signed, how they were identified, when and where, and the document hash', async () => {
      const page = await open(grace.qrUrl(base))
      const verdict = page.locator('#verdict')
      expect(await verdict.getAttribute('data-state')).toBe('verified')
      expect(await verdict.getAttribute('role')).toBe('status')
      expect(await text(page, 'h1')).toBe('Signature verified')
      expect(await page.title()).toBe('Verified: signed by \u2068Grace Hopper\u2069 · Signature check')

      expect(await fact(page, 'Name')).toBe('Grace Hopper')
      expect(await fact(page, 'E-mail')).toBe('grace@navy.example')
      expect(await fact(page, 'Signed as')).toBe('A company')
      expect(await fact(page, 'Company')).toBe('Example Corp GmbH')
      expect(await fact(page, 'Position')).toBe('Rear Admiral')
      expect(await verdict.getAttribute('data-identity')).toBe('attested')
      expect(await text(page, '#verdict p')).toContain(
        'This service attests that the signature was anchored by the account grace@navy.example, signed in with a Google account.',
      )
      // The chain holds the anchor, not the document: only the file can tell whether it shows what was signed.
      expect(await text(page, '#verdict p')).toContain(
        'The blockchain holds the anchor, not the document: only the signed PDF itself shows whether its content is the one that was signed. Drop the file below to check it.',
      )
      expect(await fact(page, 'Identity')).toBe(
        'Attested by this service: Signed in with a Google account; identity verified by the provider',
      )
      expect(await text(page, '#signer-title ~ p.note')).toBe(
        'Name, company and position are as the signer stated them: no one attests them.',
      )
      // In the viewer's time zone (Berlin here), and in UTC beside it.
      const signedAt = await fact(page, 'Signed at')
      expect(signedAt).toContain(berlinTime(grace.payload.ts))
      expect(signedAt).toContain(utc(grace.payload.ts))
      expect(signedAt).toContain('as stated by the signer’s device')
      const recorded = await fact(page, 'Recorded on the blockchain')
      expect(recorded).toContain(berlinTime(grace.blockTimestamp))
      expect(recorded).toContain(utc(grace.blockTimestamp))
      expect(await fact(page, 'Location')).toContain('52.520008° N, 13.404954° E')
      expect(await page.locator('a[href="geo:52.520008,13.404954"]').count()).toBe(1)
      expect(await fact(page, 'Fingerprint \\(SHA-256\\)')).toContain(grace.payload.d)
      expect(await fact(page, 'Composite hash')).toBe(grace.compositeHash)
      expect(await fact(page, 'Contract')).toBe(testChain.contract.toLowerCase())
      await screenshot(page, 'verification-verified')
    })

    it('shows the whole chain first to last with explorer links, marks this QR code and lists the later signature', async () => {
      const page = await open(grace.qrUrl(base))
      const items = page.locator('#chain-title ~ ol.chain > li')
      expect(await items.count()).toBe(2)
      for (const [index, signature] of [ada, grace].entries()) {
        const item = items.nth(index)
        expect(await item.locator('.chain-label strong').textContent()).toBe(`Signature ${index + 1}`)
        const link = item.locator('a.hash')
        expect(await link.getAttribute('href')).toBe(`https://explorer.example/tx/${signature.txHash}`)
        expect(await link.getAttribute('rel')).toBe('noopener noreferrer')
        expect(await item.textContent()).toContain(utc(signature.blockTimestamp))
      }
      expect(await items.nth(0).getAttribute('aria-current')).toBeNull()
      expect(await items.nth(1).getAttribute('aria-current')).toBe('true')
      expect(await items.nth(1).locator('.badge').textContent()).toBe('This QR code')

      const later = page.locator('h3:has-text("Signed after this one") ~ ol.chain > li')
      expect(await later.count()).toBe(1)
      expect(await later.locator('.chain-label strong').textContent()).toBe('Signature 3')
      expect(await later.locator('a.hash').textContent()).toContain(zoe.txHash)
    })

    it('shows the tip of the chain with all three signatures and renders signer text as text, never as markup', async () => {
      const page = await open(zoe.qrUrl(base))
      expect(await page.locator('#verdict').getAttribute('data-state')).toBe('verified')
      expect(await page.locator('#chain-title ~ ol.chain > li').count()).toBe(3)
      expect(await page.locator('h3:has-text("Signed after this one")').count()).toBe(0)
      expect(await fact(page, 'Name')).toBe('Zoë Ångström-Łukasz 山田')
      expect(await fact(page, 'E-mail')).toBe('山田@例え.jp')
      expect(await fact(page, 'Position')).toBe('<img src=x onerror="document.title=`pwned`">')
      expect(await page.locator('main img').count()).toBe(0)
      expect(await page.locator('#verdict').getAttribute('data-identity')).toBe('attested')
      expect(await fact(page, 'Identity')).toBe(
        'Attested by this service: Signed in with a Microsoft account; identity not verified by the provider',
      )
      expect(await fact(page, 'Location')).toContain('33.8688° S, 151.2093° W')
      expect(await page.title()).not.toContain('pwned')
    })

    it('accepts the 0x hex form of the transaction hash in the path', async () => {
      const page = await open(`${base}/v/${ada.txHash}#${Buffer.from(ada.key).toString('base64url')}`)
      expect(await page.locator('#verdict').getAttribute('data-state')).toBe('verified')
      expect(await fact(page, 'Name')).toBe('Ada Lovelace')
      // Relayed without salt (an older client): the identity is the signer application's word alone.
      expect(await page.locator('#verdict').getAttribute('data-identity')).toBe('claimed')
      expect(await text(page, '#verdict p')).toContain(
        'Who signed is as stated by the signer’s application: this signature carries no identity attestation by the service.',
      )
      expect(await fact(page, 'Identity')).toBe(
        'As stated by the signer’s application, not attested by this service: Signed in with a sign-in code sent to this e-mail address; identity verified by the provider',
      )
      expect(await page.locator('dt', { hasText: /^Location$/ }).count()).toBe(0)
    })

    it('never sends the key anywhere, nor a referrer, and loads nothing from another origin', async () => {
      const result = await openTracked(grace.qrUrl(base))
      const key = Buffer.from(grace.key).toString('base64url')
      const urls = result.requests.map((request) => request.url())
      expect(urls).toContain(`${base}/api/verify/${grace.txHash}`)
      for (const request of result.requests) {
        expect(request.url()).not.toContain(key)
        expect(new URL(request.url()).origin).toBe(base)
        const headers = await request.allHeaders()
        expect(headers.referer).toBeUndefined()
        expect(Object.values(headers).join('\n')).not.toContain(key)
      }
      expect(result.errors).toEqual([])
    })
  })

  describe('the identity of the signer (the attestation of the account that anchored it)', () => {
    const mallory = { email: 'mallory@example.com', trust: 'email', verified: true } as const
    const signer = (email: string, trust: 'email' | 'google' | 'microsoft', verified: boolean) =>
      ({ type: 'individual', name: 'The CEO', email, trust, verified }) as const
    const documentHash = 'bb'.repeat(32)

    /** The page of a signature, with the checks every mismatch must pass: a warning, never a success. */
    async function expectMismatch(signature: Signature, attests: string): Promise<Page> {
      const page = await open(signature.qrUrl(base))
      const verdict = page.locator('#verdict')
      expect(await verdict.getAttribute('data-state')).toBe('verified')
      expect(await verdict.getAttribute('data-identity')).toBe('mismatch')
      expect(await verdict.getAttribute('role')).toBe('alert')
      expect(await verdict.getAttribute('class')).toContain('tone-bad')
      expect(await text(page, 'h1')).toBe('Warning: the signer’s identity does not match what the service attests')
      expect(await page.title()).toBe('Warning: signer identity not confirmed · Signature check')
      expect(await text(page, '#verdict p')).toContain(attests)
      const whole = (await page.locator('body').textContent()) ?? ''
      expect(whole).not.toContain('Signature verified')
      expect(whole).not.toContain('identity verified by the provider')
      expect(await fact(page, 'Identity')).toMatch(/^Not confirmed: this service attests that /)
      return page
    }

    it('marks a forged e-mail as mismatch and says what the service attests instead', async () => {
      const forged = await sign(
        testChain,
        database.handle.db,
        { documentHash, signer: signer('ceo@bigcorp.example', 'google', true), timestamp: NOW - 120 },
        { relayedBy: mallory },
      )
      const page = await expectMismatch(
        forged,
        'This service attests that the signature was anchored by an account signed in with an e-mail sign-in code, not by ceo@bigcorp.example’s Google account.',
      )
      expect(await fact(page, 'E-mail')).toBe('ceo@bigcorp.examplenot the account that anchored this signature')
      await screenshot(page, 'verification-identity-mismatch')
    })

    it('marks a forged provider as mismatch', async () => {
      const forged = await sign(
        testChain,
        database.handle.db,
        { documentHash, signer: signer('mallory@example.com', 'google', true), timestamp: NOW - 120 },
        { relayedBy: mallory },
      )
      await expectMismatch(
        forged,
        'anchored by an account signed in with an e-mail sign-in code, not with a Google account.',
      )
    })

    it('marks a forged verified flag as mismatch', async () => {
      const forged = await sign(
        testChain,
        database.handle.db,
        { documentHash, signer: signer('mallory@example.com', 'microsoft', true), timestamp: NOW - 120 },
        { relayedBy: { email: 'mallory@example.com', trust: 'microsoft', verified: false } },
      )
      await expectMismatch(
        forged,
        'anchored by an account signed in with a Microsoft account, whose identity the provider did not check. The details claim the provider checked the signer’s identity; the service attests otherwise.',
      )
    })

    it('judges each signature of a chain mixing attested, claimed and forged identities on its own', async () => {
      const db = database.handle.db
      const honest = await sign(
        testChain,
        db,
        { documentHash, signer: signer('mallory@example.com', 'email', true), timestamp: NOW - 240 },
        { relayedBy: mallory },
      )
      const older = await sign(
        testChain,
        db,
        { documentHash, signer: signer('ceo@bigcorp.example', 'google', true), timestamp: NOW - 180 },
        { previousTxHash: honest.txHash },
      )
      const forged = await sign(
        testChain,
        db,
        { documentHash, signer: signer('ceo@bigcorp.example', 'google', true), timestamp: NOW - 120 },
        { previousTxHash: older.txHash, relayedBy: mallory },
      )
      const states = []
      for (const signature of [honest, older, forged]) {
        const page = await open(signature.qrUrl(base))
        expect(await page.locator('#chain-title ~ ol.chain > li').count()).toBeGreaterThan(0)
        states.push(await page.locator('#verdict').getAttribute('data-identity'))
      }
      expect(states).toEqual(['attested', 'claimed', 'mismatch'])
    })
  })

  describe('text that reorders or controls what is shown around it', () => {
    const RLO = '\u202e'
    const LRO = '\u202d'
    const RLI = '\u2067'
    // Controls and bidirectional formatting characters; the page's own markup only puts line breaks and tabs in text.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for the characters that must not reach the page
    const FORMATTING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

    /** The page of a signature of `payload` as an older client wrote it, relayed by its own e-mail, verified. */
    async function openVerified(payload: AnchorPayload): Promise<Page> {
      const signature = await sign(testChain, database.handle.db, {} as never, {
        legacyPayload: payload,
        relayedBy: { email: payload.s.e, trust: 'email', verified: true },
      })
      const page = await open(signature.qrUrl(base))
      expect(await page.locator('#verdict').getAttribute('data-state')).toBe('verified')
      return page
    }

    it('isolates every field and shows its formatting characters as text, on the page and in the title', async () => {
      // As an older client could have written it: an unterminated override in every text field.
      const legacy: AnchorPayload = {
        d: 'cc'.repeat(32),
        s: {
          t: 'company',
          n: `Mallory ${RLO}yrollam`,
          e: 'mallory@example.com',
          c: `Evil ${LRO}Corp`,
          p: `Boss ${RLI}ssob`,
          tr: 'email',
          v: true,
        },
        ts: NOW - 90,
        salt: '12'.repeat(32),
      }
      const page = await openVerified(legacy)
      const verdict = (await text(page, '#verdict p')) ?? ''
      expect(verdict).toMatch(/^Mallory <U\+202E>yrollam signed this document on /)
      expect(verdict).not.toMatch(FORMATTING)
      // Each untrusted string is its own isolate: nothing it holds can reverse the sentence around it.
      expect(await page.locator('#verdict p bdi').allTextContents()).toEqual([
        'Mallory <U+202E>yrollam',
        'mallory@example.com',
      ])
      expect(await fact(page, 'Name')).toBe('Mallory <U+202E>yrollam')
      expect(await fact(page, 'Company')).toBe('Evil <U+202D>Corp')
      expect(await fact(page, 'Position')).toBe('Boss <U+2067>ssob')
      expect(await page.locator('#details bdi').count()).toBeGreaterThanOrEqual(4)
      expect((await page.locator('body').textContent()) ?? '').not.toMatch(FORMATTING)
      // The title holds no elements: the name sits between Unicode isolates, its own override escaped.
      expect(await page.title()).toBe('Verified: signed by \u2068Mallory <U+202E>yrollam\u2069 · Signature check')
    })

    it('shows zero-width and other invisible characters as text, so a look-alike name does not pass (issue 38)', async () => {
      const lookAlike: AnchorPayload = {
        d: 'dd'.repeat(32),
        s: { t: 'individual', n: 'Ali\u200Bce Exam\uFEFFple', e: 'alice@example.com', tr: 'email', v: true },
        ts: NOW - 60,
        salt: '34'.repeat(32),
      }
      const page = await openVerified(lookAlike)
      expect(await fact(page, 'Name')).toBe('Ali<U+200B>ce Exam<U+FEFF>ple')
      expect(await page.title()).toBe('Verified: signed by \u2068Ali<U+200B>ce Exam<U+FEFF>ple\u2069 · Signature check')
      expect((await page.locator('body').textContent()) ?? '').not.toMatch(/[\u200B\uFEFF]/)
    })
  })

  describe('the other states', () => {
    it('shows the loading state while the answer is on its way', async () => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
      const page = await context.newPage()
      // Hold the verify answer back (it is still the real one) so the loading state can be seen.
      let release: () => void = () => {}
      const held = new Promise<void>((resolve) => {
        release = resolve
      })
      await page.route('**/api/verify/**', async (route) => {
        await held
        await route.continue()
      })
      await page.goto(grace.qrUrl(base))
      const verdict = page.locator('#verdict')
      expect(await verdict.getAttribute('aria-busy')).toBe('true')
      expect(await verdict.getAttribute('role')).toBe('status')
      expect(await text(page, 'h1')).toBe('Checking this signature…')
      await screenshot(page, 'verification-loading')
      release()
      await page.locator('#verdict[data-state="verified"]').waitFor()
      await context.close()
    })

    it('says the key does not open the details when the key is wrong, and still shows the chain', async () => {
      const page = await open(grace.qrUrl(base, generatePayloadKey()))
      const verdict = page.locator('#verdict')
      expect(await verdict.getAttribute('data-state')).toBe('key-mismatch')
      expect(await verdict.getAttribute('role')).toBe('alert')
      expect(await text(page, 'h1')).toBe('The signer’s details could not be opened')
      expect(await page.locator('dt', { hasText: /^Name$/ }).count()).toBe(0)
      expect(await page.getByText('Grace Hopper').count()).toBe(0)
      expect(await page.locator('#chain-title').textContent()).toBe('What the blockchain records')
      expect(await page.locator('#chain-title ~ ol.chain > li').count()).toBe(2)
      await screenshot(page, 'verification-wrong-key')
    })

    it('asks for the key when the link has none, and verifies once the key is added to the address', async () => {
      const page = await open(`${base}/v/${txHashToBase64Url(grace.txHash)}`)
      expect(await page.locator('#verdict').getAttribute('data-state')).toBe('missing-key')
      expect(await page.locator('#verdict').getAttribute('role')).toBe('alert')
      expect(await text(page, 'h1')).toBe('This link has no key')
      await screenshot(page, 'verification-missing-key')

      await page.evaluate((key) => {
        window.location.hash = key
      }, Buffer.from(grace.key).toString('base64url'))
      await page.locator('#verdict[data-state="verified"]').waitFor()
      expect(await fact(page, 'Name')).toBe('Grace Hopper')
    })

    it('calls a key of the wrong length damaged', async () => {
      const page = await open(`${base}/v/${txHashToBase64Url(grace.txHash)}#abc`)
      expect(await page.locator('#verdict').getAttribute('data-state')).toBe('missing-key')
      expect(await text(page, 'h1')).toBe('The key in this link is damaged')
    })

    it('warns that the details were altered when the stored ciphertext opens to details the chain never saw', async () => {
      const victim = await sign(testChain, database.handle.db, {
        documentHash: 'bb'.repeat(32),
        signer: { type: 'individual', name: 'Alan Turing', email: 'alan@example.org' },
        timestamp: NOW,
      })
      expect(await (await open(victim.qrUrl(base))).locator('#verdict').getAttribute('data-state')).toBe('verified')

      // Someone who saw the QR code re-encrypts other details under its key and swaps them into the database.
      const forged = serializeAnchorPayload({ ...victim.payload, s: { ...victim.payload.s, n: 'Mallory' } })
      await replaceStoredPayload(database.handle.db, victim.txHash, await encryptPayload(forged, victim.key))
      const page = await open(victim.qrUrl(base))
      const verdict = page.locator('#verdict')
      expect(await verdict.getAttribute('data-state')).toBe('tampered')
      expect(await verdict.getAttribute('role')).toBe('alert')
      expect(await text(page, 'h1')).toBe('Warning: the signer’s details do not match the blockchain')
      expect(await page.getByText('Mallory').count()).toBe(0)
      await screenshot(page, 'verification-tampered')

      // A ciphertext altered without the key cannot be opened at all: the key-mismatch state, which says so.
      const flipped = victim.encryptedPayload.replace(/^./, (char) => (char === 'A' ? 'B' : 'A'))
      await replaceStoredPayload(database.handle.db, victim.txHash, flipped)
      const second = await open(victim.qrUrl(base))
      expect(await second.locator('#verdict').getAttribute('data-state')).toBe('key-mismatch')
      expect(await second.locator('#verdict p').textContent()).toContain('may have been altered')
    })

    it('says no signer details are held for an anchor this service never stored', async () => {
      const unindexed = await sign(
        testChain,
        database.handle.db,
        {
          documentHash: 'cc'.repeat(32),
          signer: { type: 'individual', name: 'Edsger Dijkstra', email: 'ewd@example.org' },
          timestamp: NOW,
        },
        { index: false },
      )
      const page = await open(unindexed.qrUrl(base))
      expect(await page.locator('#verdict').getAttribute('data-state')).toBe('no-details')
      expect(await page.locator('#chain-title ~ ol.chain > li').count()).toBe(1)
    })

    it('says the signer’s details were erased at their request when the signer deleted their account', async () => {
      const erased = await sign(testChain, database.handle.db, {
        documentHash: 'cd'.repeat(32),
        signer: { type: 'individual', name: 'Barbara Liskov', email: 'liskov@example.org' },
        timestamp: NOW,
      })
      await eraseStoredPayload(database.handle.db, erased.txHash)
      const page = await open(erased.qrUrl(base))
      const verdict = page.locator('#verdict')
      expect(await verdict.getAttribute('data-state')).toBe('erased')
      expect(await text(page, 'h1')).toBe(
        'Recorded on the blockchain; the signer’s details were erased at their request',
      )
      expect(await page.locator('#verdict p').textContent()).toContain('deleted their account')
      expect(await page.content()).not.toContain('Barbara Liskov')
    })

    it('says no signature is found for an unknown transaction', async () => {
      const unknown = `0x${'ab'.repeat(32)}` as Hash
      const page = await open(`${base}/v/${txHashToBase64Url(unknown)}#${'A'.repeat(22)}`)
      const verdict = page.locator('#verdict')
      expect(await verdict.getAttribute('data-state')).toBe('not-found')
      expect(await verdict.getAttribute('role')).toBe('alert')
      expect(await text(page, 'h1')).toBe('No signature found for this link')
      expect(await page.locator('#details').textContent()).toContain(unknown)
      expect(await page.locator('button.retry').count()).toBe(1)
      await screenshot(page, 'verification-unknown')
    })

    it('says the link is not valid when the path holds no transaction hash', async () => {
      const page = await open(`${base}/v/not-a-transaction#${'A'.repeat(22)}`)
      expect(await page.locator('#verdict').getAttribute('data-state')).toBe('invalid-link')
      expect(await text(page, 'h1')).toBe('This is not a valid verification link')
    })
  })

  describe('quality', () => {
    it('renders its first paint well under a second and fits a 360 px screen without sideways scrolling', async ({
      annotate,
    }) => {
      const page = await open(zoe.qrUrl(base), { viewport: { width: 360, height: 740 } })
      const timing = await page.evaluate(() => ({
        firstContentfulPaint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Infinity,
        verdict: performance.getEntriesByName('verdict-rendered')[0]?.startTime ?? Infinity,
      }))
      // The figures go into the test report: docs/performance.md quotes them.
      await annotate(
        `first contentful paint ${timing.firstContentfulPaint.toFixed(0)} ms, verdict rendered ${timing.verdict.toFixed(0)} ms after navigation start`,
      )
      expect(timing.firstContentfulPaint).toBeLessThan(1000)
      expect(timing.verdict).toBeLessThan(3000)
      const widths = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        viewport: document.documentElement.clientWidth,
      }))
      expect(widths.page).toBeLessThanOrEqual(widths.viewport)
      await screenshot(page, 'verification-verified-360px')
    })

    it('keeps every piece of text at a contrast of at least 4.5:1 in each state', async () => {
      const urls = [
        grace.qrUrl(base),
        grace.qrUrl(base, generatePayloadKey()),
        `${base}/v/${txHashToBase64Url(grace.txHash)}`,
        `${base}/v/${txHashToBase64Url(`0x${'cd'.repeat(32)}`)}#${'A'.repeat(22)}`,
      ]
      for (const url of urls) {
        const page = await open(url)
        const failures = await page.evaluate(lowContrastTexts)
        expect(failures, url).toEqual([])
      }
      // The check itself can fail: grey text on white (2.8:1) is caught.
      const page = await open(grace.qrUrl(base))
      await page.evaluate(() => {
        const probe = document.createElement('p')
        probe.textContent = 'grey probe'
        probe.style.color = '#999999'
        document.querySelector('.card')?.append(probe)
      })
      expect(await page.evaluate(lowContrastTexts)).toEqual([expect.stringMatching(/^2\.\d\d: grey probe$/)])
    })

    it('is usable with the keyboard: a skip link first, then every link and the file picker, with a visible focus', async () => {
      const page = await open(grace.qrUrl(base))
      await page.keyboard.press('Tab')
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the result')
      const reached: string[] = []
      for (let i = 0; i < 20; i++) {
        await page.keyboard.press('Tab')
        const focused = await page.evaluate(() => {
          const element = document.activeElement as HTMLElement | null
          if (!element || element === document.body) return undefined
          const style = getComputedStyle(element)
          return { id: element.id, tag: element.tagName, outline: style.outlineStyle, width: style.outlineWidth }
        })
        if (!focused) break
        reached.push(focused.id || focused.tag)
        expect(focused.outline).toBe('solid')
      }
      expect(reached).toContain('pdf-file')
      expect(reached.filter((tag) => tag === 'A').length).toBeGreaterThanOrEqual(4)
      // Every form control has a label.
      expect(await page.locator('label[for="pdf-file"]').textContent()).toBe('Choose the signed PDF')
    })

    it('uses one h1 and headings in order', async () => {
      const page = await open(grace.qrUrl(base))
      const levels = await page.evaluate(() =>
        [...document.querySelectorAll('h1, h2, h3, h4')].map((heading) => Number(heading.tagName[1])),
      )
      expect(levels.filter((level) => level === 1)).toHaveLength(1)
      expect(levels[0]).toBe(1)
      for (let i = 1; i < levels.length; i++) expect(levels[i]! - levels[i - 1]!).toBeLessThanOrEqual(1)
    })
  })

  describe('the static build', () => {
    it('works from another origin with the API base set at build time', async () => {
      const out = join(scratch, 'static')
      await buildStaticPage({ outDir: out, apiBase: base })
      staticHost.setRoot(out)
      const result = await openTracked(grace.qrUrl(staticHost.url))
      expect(await result.page.locator('#verdict').getAttribute('data-state')).toBe('verified')
      expect(await fact(result.page, 'Name')).toBe('Grace Hopper')
      expect(result.requests.map((request) => request.url())).toContain(`${base}/api/verify/${grace.txHash}`)
      expect(result.errors).toEqual([])
    })
  })

  describe('a dropped PDF', () => {
    let signed: SignPdfResult
    /**
     * A signer certified by the service for `email`, signing as the CLI does, timestamped by the service as POST
     * /api/pdf-signatures would for these anchors.
     */
    const pdfSignatureAs = (email: string) => {
      // Made at the first signature, once the app is built.
      let signer: Promise<CmsSigner> | undefined
      const certify = async (): Promise<CmsSigner> => {
        const keys = await makeSignerKey()
        const csr = await certificationRequest(keys, email)
        const certificate = await app.signerAuthority.issue(csr, { email, trust: 'email' })
        return {
          key: webCryptoSigningKey(keys.privateKey),
          certificates: [certificate, ...app.signerAuthority.certificates],
        }
      }
      return async (request: PdfSignatureRequest) => {
        signer ??= certify()
        const cms = await anchoredSignatureCms(await signer, {
          ...request,
          chainId: testChain.chain.id,
          contractAddress: testChain.contract,
        })
        return (await app.signerAuthority.timestamp(await app.signerAuthority.check(cms))).cms
      }
    }
    const pdfSignature = pdfSignatureAs('ada@example.com')

    beforeAll(async () => {
      const anchor = (request: Parameters<typeof anchorRequest>[2]) =>
        anchorRequest(testChain, database.handle.db, request)
      const first = await signPdf(await contractPdf(), {
        signer: { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com', trust: 'email', verified: true },
        verifyBaseUrl: base,
        anchor,
        pdfSignature,
      })
      signed = await signPdf(first.bytes, {
        signer: { type: 'company', name: 'Grace Hopper', email: 'grace@navy.example', company: 'Example Corp GmbH' },
        geo: { latitude: 52.520008, longitude: 13.404954 },
        verifyBaseUrl: base,
        anchor,
        pdfSignature: pdfSignatureAs('grace@navy.example'),
      })
    })

    it('reports every signature as matching the document bytes and nothing added, without uploading the file', async () => {
      const result = await openTracked(signed.qrUrl)
      const { page } = result
      expect(await page.locator('#verdict').getAttribute('data-state')).toBe('verified')
      const before = result.requests.length
      await dropFile(page, 'agreement.pdf', signed.bytes)
      const heading = page.locator('.pdf-result h3')
      await heading.waitFor()
      expect(await heading.textContent()).toBe('agreement.pdf: all 2 signatures check out')
      expect(await heading.getAttribute('data-valid')).toBe('true')
      const items = page.locator('.pdf-signatures > li')
      expect(await items.count()).toBe(2)
      const signers = [
        ['Ada Lovelace', 'ada@example.com'],
        ['Grace Hopper', 'grace@navy.example'],
      ] as const
      for (const [index, [name, email]] of signers.entries()) {
        const item = items.nth(index)
        expect(await item.getAttribute('data-valid')).toBe('true')
        expect(await item.textContent()).toContain(`Valid: ${name}`)
        expect(await item.getAttribute('data-changed')).toBe('false')
        expect(await item.locator('.pdf-shown').textContent()).toBe(
          'What you see is what was signed: the document’s bytes are exactly what was signed, and nothing shown changed afterwards. It is recorded on the blockchain.',
        )
        // Its PDF signature, the signer's own, certified by the CA whose /api/info the page read, with the development
        // TSA's time.
        expect(await item.locator('.pdf-signature').getAttribute('data-pdf-signature')).toBe('valid')
        const escaped = email.replaceAll('.', '\\.')
        expect(await item.locator('.pdf-signature').textContent()).toMatch(
          new RegExp(
            `^Its PDF signature is valid: made with the certificate the service issued ${escaped} \\(${escaped}\\), ` +
              'timestamped .+ by Document Anchoring Service development TSA \\(untrusted\\)\\. ' +
              // The test chain is the embedded default's 31337: its CA is a development one, and the page says so.
              'The service’s certificates here are development ones, which no PDF reader trusts\\.$',
          ),
        )
      }
      expect(await page.locator('.pdf-other-signatures').count()).toBe(0)
      expect(await page.locator('.pdf-result').textContent()).toContain(
        'Nothing was added to the file after the last signature.',
      )
      // The file stayed here: after the drop, only GETs (the checker's code and the anchor look-ups) went out.
      const after = result.requests.slice(before)
      expect(after.length).toBeGreaterThan(0)
      expect(after.every((request) => request.method() === 'GET')).toBe(true)
      expect(after.some((request) => /\/assets\/pdf-check-[\w-]+\.js$/.test(request.url()))).toBe(true)
      await screenshot(page, 'verification-pdf-checked', '#pdf-check')
    })

    it('says of each signature whether the service attests its identity, in the words of the QR page', async () => {
      // Alice's own account anchors the first signature (attested); Mallory relays a payload claiming to be Alice's
      // without the salt, so the service attests nothing about the second (claimed).
      const alice = {
        type: 'individual',
        name: 'Alice CEO',
        email: 'alice@example.com',
        trust: 'google',
        verified: true,
      } as const
      const attestedBy = (email: string) => (request: AnchorRequest) =>
        identityCommitment(email, request.salt!).then((commitment) =>
          anchorRequest(testChain, database.handle.db, request, {
            attestation: { trust: 'google', verified: true, identityCommitment: commitment },
          }),
        )
      const first = await signPdf(await contractPdf(), {
        signer: alice,
        verifyBaseUrl: base,
        anchor: attestedBy('alice@example.com'),
        pdfSignature: pdfSignatureAs('alice@example.com'),
      })
      const both = await signPdf(first.bytes, {
        signer: alice,
        verifyBaseUrl: base,
        anchor: (request) => anchorRequest(testChain, database.handle.db, request),
        pdfSignature,
      })
      const page = await open(first.qrUrl)
      await dropFile(page, 'alice.pdf', both.bytes)
      await page.locator('.pdf-result h3').waitFor()
      const items = page.locator('.pdf-signatures > li')
      expect(await items.nth(0).getAttribute('data-identity')).toBe('attested')
      expect(await items.nth(0).locator('.pdf-identity').textContent()).toBe(
        'This service attests that the signature was anchored by the account alice@example.com, signed in with a Google account.',
      )
      expect(await items.nth(1).getAttribute('data-identity')).toBe('claimed')
      expect(await items.nth(1).locator('.pdf-identity').textContent()).toBe(
        'Who signed is as stated by the signer’s application: this signature carries no identity attestation by the service.',
      )
      // The same words as the QR page of each signature.
      const claimedPage = await open(both.qrUrl)
      expect(await text(claimedPage, '#verdict p')).toContain(
        'Who signed is as stated by the signer’s application: this signature carries no identity attestation by the service.',
      )
    })

    it('says prominently that a dropped PDF is not the document of this QR code', async () => {
      const page = await open(ada.qrUrl(base))
      await dropFile(page, 'other.pdf', signed.bytes)
      const warning = page.locator('.pdf-other-document')
      await warning.waitFor()
      expect(await warning.getAttribute('role')).toBe('alert')
      expect(await warning.textContent()).toBe(
        'This is not the document this QR code belongs to. None of its signatures is the one this page verifies, so what follows says nothing about the signature above.',
      )
      // Its own signatures still check out, below the warning.
      expect(await text(page, '.pdf-result h3')).toBe('other.pdf: all 2 signatures check out')
      const own = await open(signed.qrUrl)
      await dropFile(own, 'agreement.pdf', signed.bytes)
      await own.locator('.pdf-result h3').waitFor()
      expect(await own.locator('.pdf-other-document').count()).toBe(0)
    })

    it('reports bytes added after the last signature, from the file picker', async () => {
      const page = await open(signed.qrUrl)
      const appended = new Uint8Array([...signed.bytes, ...new TextEncoder().encode('% added later\n')])
      await page.setInputFiles('#pdf-file', {
        name: 'edited.pdf',
        mimeType: 'application/pdf',
        buffer: Buffer.from(appended),
      })
      const heading = page.locator('.pdf-result h3')
      await heading.waitFor()
      expect(await heading.textContent()).toBe('edited.pdf: not everything checks out')
      expect(await page.locator('[data-unsigned-bytes]').getAttribute('data-unsigned-bytes')).toBe('14')
      expect(await page.locator('.pdf-signatures > li[data-valid="true"]').count()).toBe(2)
    })

    it('reports a changed document and a file that is not a PDF', async () => {
      const page = await open(signed.qrUrl)
      const changed = new Uint8Array(signed.bytes)
      // One digit of the original file's modification date, which both signatures cover; the structure stays intact.
      const at = Buffer.from(changed).indexOf('/ModDate (D:') + '/ModDate (D:'.length
      expect(at).toBeGreaterThan(20)
      changed[at] = changed[at] === 0x31 ? 0x32 : 0x31
      await page.setInputFiles('#pdf-file', {
        name: 'changed.pdf',
        mimeType: 'application/pdf',
        buffer: Buffer.from(changed),
      })
      await page.locator('.pdf-result h3').waitFor()
      expect(await page.locator('.pdf-signatures > li[data-valid="false"]').count()).toBe(2)
      expect(await page.locator('.pdf-result').textContent()).toContain('NOT what was signed')

      await page.setInputFiles('#pdf-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') })
      await page.locator('.pdf-failure').waitFor()
      expect(await page.locator('.pdf-failure').textContent()).toBe('This file is not a PDF.')
    })

    it('checks another product’s PDF signature in the file too, and says when it breaks', async () => {
      const theirs = await signedBySignpdf(await contractPdf())
      const ours = await signPdf(theirs, {
        signer: { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' },
        verifyBaseUrl: base,
        anchor: (request) => anchorRequest(testChain, database.handle.db, request),
        pdfSignature,
      })
      const page = await open(ours.qrUrl)
      await dropFile(page, 'theirs-and-ours.pdf', ours.bytes)
      const other = page.locator('.pdf-other-signatures li')
      await other.waitFor()
      expect(await other.getAttribute('data-status')).toBe('valid')
      expect(await other.textContent()).toBe(
        'The PDF signature “Signature1” is valid, signed by Other Tool Signer, whose certificate this page cannot vouch for.',
      )
      expect(await page.locator('.pdf-result h3').getAttribute('data-valid')).toBe('true')

      const tampered = ours.bytes.slice()
      const at = Buffer.from(theirs).indexOf('/Producer') + 1
      tampered[at] = 'p'.charCodeAt(0)
      const again = await open(ours.qrUrl)
      await dropFile(again, 'tampered.pdf', tampered)
      const broken = again.locator('.pdf-other-signatures li')
      await broken.waitFor()
      expect(await broken.getAttribute('data-status')).toBe('invalid')
      expect(await broken.textContent()).toContain('is NOT valid: the document’s bytes are not what was signed')
      expect(await again.locator('.pdf-result h3').getAttribute('data-valid')).toBe('false')
    })

    it('reads hostile PDFs in a worker of their own and calls them damaged, the tab answering all along', async () => {
      const page = await open(signed.qrUrl)
      const workers: Worker[] = []
      page.on('worker', (worker) => workers.push(worker))
      for (const [name, make] of HOSTILE_FILES) {
        await page.evaluate(() => document.querySelector('.pdf-result')?.replaceChildren())
        const started = performance.now()
        await page.setInputFiles('#pdf-file', {
          name: 'hostile.pdf',
          mimeType: 'application/pdf',
          buffer: Buffer.from(make()),
        })
        // While the file is read, the page's own thread answers at once.
        const answered = performance.now()
        await page.evaluate(() => 1)
        expect(performance.now() - answered, name).toBeLessThan(1_000)
        await page.locator('.pdf-failure').waitFor({ timeout: 10_000 })
        expect(await page.locator('.pdf-failure').textContent(), name).toBe(
          'This PDF is damaged: its structure cannot be read.',
        )
        expect(performance.now() - started, name).toBeLessThan(10_000)
      }
      // One worker per file, from this site's own assets, each ended once its file was read.
      expect(workers).toHaveLength(HOSTILE_FILES.length)
      for (const worker of workers) expect(worker.url()).toMatch(/\/assets\/pdf-check-worker-[\w-]+\.js$/)
      await expect.poll(() => page.workers().length).toBe(0)
    })

    // Issue 36: a later revision may add signatures, validation data and timestamps, and nothing a reader shows.
    describe('changed after it was signed (what you see is what was signed)', () => {
      const alice = {
        type: 'individual',
        name: 'Alice Example',
        email: 'alice@example.com',
        trust: 'email',
        verified: true,
      } as const
      let aliceSigned: SignPdfResult
      let page: Page

      /** Drops `bytes` on the page opened once for all of these, after clearing the last result, and waits for it. */
      async function dropAndWait(name: string, bytes: Uint8Array): Promise<void> {
        await page.evaluate(() => document.querySelector('.pdf-result')?.replaceChildren())
        await dropFile(page, name, bytes)
        await page.locator('.pdf-result h3, .pdf-result .pdf-failure').first().waitFor()
        expect(await page.locator('.pdf-failure').count(), name).toBe(0)
      }

      beforeAll(async () => {
        // Alice signs the original an attacker prepared (a form field, a hidden shadow object), with a real anchor.
        aliceSigned = await signPdf(await attackableOriginal(), {
          signer: alice,
          verifyBaseUrl: base,
          anchor: (request) => anchorRequest(testChain, database.handle.db, request),
          pdfSignature,
        })
        page = await open(aliceSigned.qrUrl)
        expect(await page.locator('#verdict').getAttribute('data-state')).toBe('verified')
      })

      it('says of Alice’s file as she signed it that what you see is what was signed', async () => {
        await dropAndWait('contract.pdf', aliceSigned.bytes)
        expect(await text(page, '.pdf-result h3')).toBe('contract.pdf: its signature checks out')
        const item = page.locator('.pdf-signatures > li').first()
        expect(await item.getAttribute('data-valid')).toBe('true')
        expect(await item.getAttribute('data-changed')).toBe('false')
        expect(await item.locator('.pdf-shown').textContent()).toContain(
          'What you see is what was signed: the document’s bytes are exactly what was signed, and nothing shown changed afterwards.',
        )
        expect(await text(page, '.pdf-result')).toContain('Nothing was added to the file after the last signature.')
        expect(await page.locator('.pdf-notes').count()).toBe(0)
      })

      it('says that validation data and a rewritten /Info added later change nothing shown, with a note', async () => {
        const withDss = await PDF.load(aliceSigned.bytes)
        const certificate = withDss.createStream({}, new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]))
        withDss.getCatalog().set('DSS', PdfDict.of({ Certs: new PdfArray([certificate]) }))
        const retitled = await PDF.load(await withDss.save({ incremental: true }))
        retitled.setTitle('Another title')
        const bytes = await retitled.save({ incremental: true })
        await dropAndWait('later.pdf', bytes)
        expect(await page.locator('.pdf-result h3').getAttribute('data-valid')).toBe('true')
        const item = page.locator('.pdf-signatures > li').first()
        expect(await item.getAttribute('data-valid')).toBe('true')
        expect(await item.getAttribute('data-changed')).toBe('false')
        expect(await item.textContent()).toContain('What you see is what was signed')
        const unsigned = page.locator('[data-unsigned-bytes]')
        expect(await unsigned.getAttribute('data-unsigned-bytes')).toBe(String(bytes.length - aliceSigned.bytes.length))
        expect(await unsigned.getAttribute('data-unsigned-changes')).toBe('false')
        expect(await unsigned.textContent()).toBe(
          `The ${bytes.length - aliceSigned.bytes.length} bytes added after the last signature change nothing shown: they hold only validation data, timestamps, signatures or metadata.`,
        )
        expect(await text(page, '.pdf-result')).not.toContain('The file was changed after the last signature')
        expect(await page.locator('.pdf-notes > li').allTextContents()).toEqual([
          'Revision 4 changed the document information (title, author, dates), which changes nothing shown.',
        ])
      })

      for (const attack of ATTACKS) {
        it(`fails Alice’s signature, in words: ${attack.name}`, async () => {
          await dropAndWait('attacked.pdf', await attack.make(aliceSigned.bytes))
          expect(await page.locator('.pdf-other-document').count()).toBe(0)
          expect(await page.locator('.pdf-result h3').getAttribute('data-valid')).toBe('false')
          const item = page.locator('.pdf-signatures > li').first()
          expect(await item.getAttribute('data-valid')).toBe('false')
          expect(await item.locator('.problems').textContent()).toMatch(attack.message)
          const words = (await item.textContent()) ?? ''
          expect(words).toContain('Not valid: Alice Example')
          expect(words).not.toContain('exactly what was signed')
          expect(words).not.toContain('What you see is what was signed')
          // Bytes an attacker added are never called harmless.
          const unsigned = page.locator('[data-unsigned-bytes]')
          if ((await unsigned.count()) > 0) {
            expect(await unsigned.getAttribute('data-unsigned-changes')).toBe('true')
            expect(await unsigned.textContent()).toMatch(/^The file was changed after the last signature: \d+ bytes/)
          }
          expect(await text(page, '.pdf-result')).not.toContain('change nothing shown')
          // A change a reader sees is said in the signature's own sentence, not only in the list of problems.
          const problems = (await item.locator('.problems').textContent()) ?? ''
          const changed = /afterwards: what you see is not what Alice Example signed/.test(problems)
          expect(await item.getAttribute('data-changed')).toBe(String(changed))
          const shown = await item.locator('.pdf-shown').textContent()
          if (changed) {
            expect(shown).toMatch(
              /^The bytes it signed are intact, but the document was changed afterwards \(revision \d+ changed .+\): what you see is not what Alice Example signed\. It is recorded on the blockchain\.$/,
            )
          } else {
            expect(shown).toBe(
              'The bytes it signed are intact, but that alone does not make it valid: see the problems below. It is recorded on the blockchain.',
            )
          }
        })

        it(`still fails it after another product countersigns the file: ${attack.name}`, async () => {
          await dropAndWait('countersigned.pdf', await signedByPoppler(await attack.make(aliceSigned.bytes)))
          expect(await page.locator('.pdf-result h3').getAttribute('data-valid')).toBe('false')
          const item = page.locator('.pdf-signatures > li').first()
          expect(await item.getAttribute('data-valid')).toBe('false')
          expect(await item.locator('.problems').textContent()).toMatch(attack.message)
          expect(await item.textContent()).not.toContain('exactly what was signed')
        })
      }
    })
  })

  // Last: it stops the chain.
  describe('when the chain is down', () => {
    it('says the blockchain cannot be reached, not that the signature is bad', async () => {
      await testChain.stop()
      const page = await open(ada.qrUrl(base))
      const verdict = page.locator('#verdict')
      expect(await verdict.getAttribute('data-state')).toBe('unavailable')
      expect(await verdict.getAttribute('role')).toBe('alert')
      expect(await text(page, 'h1')).toBe('The blockchain cannot be reached right now')
      expect(await page.locator('#verdict p').textContent()).toContain('This says nothing about the signature itself.')
      expect(await page.locator('button.retry').count()).toBe(1)
      await screenshot(page, 'verification-unavailable')
    })
  })
})

/** Runs in the page: every visible text whose colour is below 4.5:1 against the background behind it. */
function lowContrastTexts(): string[] {
  const parse = (value: string) => {
    const match = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(value)
    return match ? { rgb: [match[1], match[2], match[3]].map(Number), alpha: Number(match[4] ?? 1) } : undefined
  }
  const luminance = (rgb: number[]) => {
    const [r, g, b] = rgb.map((channel) => {
      const c = channel / 255
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    })
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
  }
  const background = (element: Element | null): number[] => {
    for (let node = element; node; node = node.parentElement) {
      const color = parse(getComputedStyle(node).backgroundColor)
      if (color && color.alpha > 0) return color.rgb
    }
    return [255, 255, 255]
  }
  const failures: string[] = []
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement
    if (!element || !node.textContent?.trim() || element.closest('.sr-only, .skip, noscript')) continue
    if (element.getClientRects().length === 0) continue
    const color = parse(getComputedStyle(element).color)
    if (!color) continue
    const [a, b] = [luminance(color.rgb), luminance(background(element))]
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
    if (ratio < 4.5) failures.push(`${ratio.toFixed(2)}: ${node.textContent.trim().slice(0, 40)}`)
  }
  return failures
}
