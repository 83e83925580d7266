import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // anvil, PGlite and Chromium are real processes: keep parallelism within the machine's two cores.
    maxWorkers: 2,
  },
})
