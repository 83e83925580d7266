// How an entry point is bundled, for the checkout's precompiled builds (precompile.ts) and the `anchor` command's
// package (bundle-cli-package.ts) alike.
import type { BuildOptions } from 'esbuild'

/**
 * ESM for Node, code split at dynamic imports: each `anchor` command is its own chunk, so `--help` loads none of them.
 * node20: the oldest Node the service and the tests still run on (past its end of life, see the README).
 */
export const ENTRY_BUNDLE_OPTIONS = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
} as const satisfies BuildOptions
