// Debian's Chromium driven by playwright-core: nothing here downloads a browser.
import { type Browser, type BrowserContextOptions, chromium, type Page, type Request } from 'playwright-core'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
]

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
}

export interface OpenedPage {
  page: Page
  /** Every request the page made, in order. */
  requests: Request[]
  /** Console errors and uncaught exceptions: a clean page has none. */
  errors: string[]
  close(): Promise<void>
}

/** A fresh context (no shared cache or storage) in Berlin time with British English dates, a phone-sized screen. */
export async function openPage(
  browser: Browser,
  url: string,
  options: BrowserContextOptions & { waitForVerdict?: boolean } = {},
): Promise<OpenedPage> {
  const { waitForVerdict = true, ...contextOptions } = options
  const context = await browser.newContext({
    timezoneId: 'Europe/Berlin',
    locale: 'en-GB',
    viewport: { width: 390, height: 844 },
    ...contextOptions,
  })
  // Under the test's own timeout, so a step that never ends fails naming what it waited for.
  context.setDefaultTimeout(20_000)
  const page = await context.newPage()
  const requests: Request[] = []
  const errors: string[] = []
  page.on('request', (request) => requests.push(request))
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(url)
  if (waitForVerdict) await page.locator('#verdict[data-state]').waitFor()
  return { page, requests, errors, close: () => context.close() }
}
