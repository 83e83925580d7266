import { playwright } from '@vitest/browser-playwright'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // anvil, PGlite and Chromium are real processes: keep parallelism within the machine's two cores.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          provide: { runtime: 'node' },
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        // The format tests again, in headless Chromium, proving src/formats runs on Web APIs alone. Debian's
        // chromium is used as installed: nothing here downloads a browser.
        extends: true,
        optimizeDeps: { include: ['zod', 'fast-check'] },
        test: {
          name: 'browser',
          provide: { runtime: 'browser' },
          include: ['test/formats/**/*.test.ts'],
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: {
                executablePath: '/usr/bin/chromium',
                args: [
                  '--headless',
                  '--no-sandbox',
                  '--disable-gpu',
                  '--disable-background-networking',
                  '--disable-component-update',
                ],
              },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
})
