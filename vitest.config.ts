import { playwright } from '@vitest/browser-playwright'
import { defaultClientConditions, defaultServerConditions } from 'vite'
import { configDefaults, defineConfig } from 'vitest/config'

// In the repository @docanchor/client resolves to its TypeScript sources (no build step on install); the tarball
// resolves to its compiled dist/. See packages/client/package.json's `exports`.
const SOURCE_CONDITION = '@docanchor/source'

export default defineConfig({
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
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
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          // Needs the service its browser project starts (packages/client/test/browser-service.ts).
          exclude: [...configDefaults.exclude, 'packages/client/test/api/in-browser.test.ts'],
          provide: { runtime: 'node' },
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        // The client package's tests again, in headless Chromium, proving it runs on Web APIs alone. Debian's
        // chromium is used as installed: nothing here downloads a browser.
        extends: true,
        optimizeDeps: { include: ['zod', 'fast-check', '@libpdf/core', 'qrcode', 'pdf-lib'] },
        test: {
          name: 'browser',
          provide: { runtime: 'browser' },
          include: [
            'packages/client/test/formats/**/*.test.ts',
            'packages/client/test/pdf/portable-signing.test.ts',
            'packages/client/test/api/in-browser.test.ts',
          ],
          globalSetup: ['packages/client/test/browser-service.ts'],
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
