// `npm run test:containers`: the image and the compose file under a real engine (podman). Slow (an image build of
// a few minutes), so it is not part of `npm test`; .ci/run runs it.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/containers/**/*.podman.ts'],
    globalSetup: ['test/containers/images.ts'],
    testTimeout: 120_000,
    hookTimeout: 900_000,
    // The images' build (test/containers/images.ts).
    teardownTimeout: 60_000,
    fileParallelism: false,
  },
})
