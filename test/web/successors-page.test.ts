// The verification page when anchors flood a document's successors (issue 38, item 8), in headless Chromium against
// the real service: with VERIFY_MAX_SUCCESSORS at 2, three anchors made before the real countersignature fill the
// list; the page says how many more there are and, on request, shows them, the real countersignature among them.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/api/app.ts'
import type { AppInstance } from '../../src/api/app-types.ts'
import { testConfig } from '../helpers/app.ts'
import { startTestChain, type TestChain, testChainContext } from '../helpers/chain/anvil.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'
import { launchChromium, type OpenedPage, openPage } from './helpers/chromium.ts'
import { type Signature, sign } from './helpers/signed-chain.ts'

const NOW = Math.floor(Date.now() / 1000)

describe('the verification page with more successors than it lists', () => {
  let testChain: TestChain
  let database: TestDatabase
  let app: AppInstance
  let browser: Browser
  let base: string
  let scratch: string
  let opened: OpenedPage | undefined
  let document: Signature
  let real: Signature

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'web-successors-'))
    ;[testChain, database, browser] = await Promise.all([startTestChain(), createTestDatabase(), launchChromium()])
    app = await buildApp({
      config: testConfig({ VERIFY_MAX_SUCCESSORS: '2', VERIFY_CACHE_TTL_SECONDS: '0' }, scratch),
      database: database.handle,
      chain: testChainContext(testChain),
      logger: pino({ level: 'silent' }) as FastifyBaseLogger,
    })
    base = await app.listen({ host: '127.0.0.1', port: 0 })
    const db = database.handle.db
    const signer = (name: string, email: string) => ({
      type: 'individual' as const,
      name,
      email,
      trust: 'email' as const,
      verified: true,
    })
    document = await sign(testChain, db, {
      documentHash: 'ab'.repeat(32),
      signer: signer('Ada Lovelace', 'ada@example.com'),
      timestamp: NOW - 600,
    })
    for (let i = 0; i < 3; i++) {
      await sign(
        testChain,
        db,
        { documentHash: 'cd'.repeat(32), signer: signer(`Spam ${i}`, 'spam@example.com'), timestamp: NOW - 500 },
        { previousTxHash: document.txHash },
      )
    }
    real = await sign(
      testChain,
      db,
      { documentHash: 'ef'.repeat(32), signer: signer('Grace Hopper', 'grace@example.com'), timestamp: NOW - 300 },
      { previousTxHash: document.txHash },
    )
    expect((await fetch(`${base}/v/warm-up`)).status).toBe(200)
  }, 120_000)

  afterAll(async () => {
    await opened?.page.context().close()
    await browser?.close()
    await app?.close()
    await database?.close()
    await testChain?.stop()
    if (scratch) await rm(scratch, { recursive: true, force: true })
  })

  it('says how many more there are, and shows them on request, the real countersignature among them', async () => {
    opened = await openPage(browser, document.qrUrl(base))
    const { page } = opened
    expect(await page.locator('#verdict').getAttribute('data-state')).toBe('verified')
    // The test chain is anvil's 31337, the embedded default's: the page says it is no public record.
    expect(await page.locator('p.development-chain').textContent()).toMatch(/^Chain 31337 is a development chain/)
    const later = page.locator('h3:has-text("Signed after this one") ~ ol.chain > li')
    expect(await later.count()).toBe(2)
    expect(await page.locator('h3:has-text("Signed after this one") ~ p').first().textContent()).toBe(
      '4 later signatures continue from this one: the chain branches, so copies of the document differ.',
    )
    expect(await page.locator('p.more-successors').textContent()).toMatch(/^2 more not listed above/)
    expect(await page.locator('ol.chain').last().textContent()).not.toContain(real.txHash)
    await page.locator('button.more-successors').click()
    await expect.poll(() => later.count()).toBe(4)
    expect(await later.last().textContent()).toContain(real.txHash)
  }, 60_000)
})
