// The checkout's precompiled builds (dist/, built by scripts/precompile.ts on `npm install`: the entry points and the
// verification page) and whether each still matches the sources it was built from: every source file it read must
// have the size and mtime the build recorded. A checkout, an edit or a deleted file changes one of them, and the entry
// point then runs the sources through tsx instead (and, outside production, the service builds the page itself), so
// stale code never runs. One stat per source file (a few hundred at most): a millisecond or two, against the second or
// more tsx costs. tsx, Vite and esbuild are development dependencies: a production install builds, then prunes them
// (docs/operations.md), and runs only what was built.
import { readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** Each precompiled entry point: its build directory, the entry file's name in it, and the source it bundles. */
export const PRECOMPILED_TARGETS = {
  /** The `anchor` command in the checkout (packages/cli/bin/anchor.js). */
  cli: { dir: 'dist/cli', entry: 'anchor', source: 'packages/cli/src/anchor.ts' },
  /** The service (`npm start`, bin/server.js), with the PKCS#11 token process it forks (src/pkcs11/pkcs11-key.ts). */
  server: {
    dir: 'dist/server',
    entry: 'server',
    source: 'src/server.ts',
    alsoEntries: { 'pkcs11-token-process': 'src/pkcs11/pkcs11-token-process.ts' },
  },
  /** The operator's commands: `npm run admin` (bin/admin.js) and `npm run deploy` (bin/deploy.js). */
  admin: { dir: 'dist/admin', entry: 'admin', source: 'src/operator/admin.ts' },
  deploy: { dir: 'dist/deploy', entry: 'deploy', source: 'src/operator/deploy.ts' },
}

/** The verification page (src/web/bundle-page.ts), bundled and pre-compressed (src/web/web-build-files.ts), so that
 * the service does not build it when it starts. */
export const PRECOMPILED_PAGE = { dir: 'dist/page' }

/** Every build `npm install` makes, by the name `scripts/precompile.ts` takes. */
export const PRECOMPILED_BUILDS = { ...PRECOMPILED_TARGETS, page: PRECOMPILED_PAGE }

/** The file in which a build records the sources it bundled. */
export function buildManifest(target) {
  return `${target.dir}/inputs.json`
}

/** True when the build of `target` under `root` exists and every source it recorded is unchanged. */
export function precompiledIsFresh(root, target) {
  let inputs
  try {
    inputs = /** @type {import('./precompiled-builds.d.ts').BuildInput[]} */ (
      JSON.parse(readFileSync(resolve(root, buildManifest(target)), 'utf8'))
    )
  } catch {
    return false
  }
  if (!Array.isArray(inputs) || inputs.length === 0) return false
  return inputs.every((input) => {
    const file = statSync(resolve(root, input.path), { throwIfNoEntry: false })
    // A build tool pruned after the build (`npm prune --omit=dev`) cannot have changed what it built.
    if (file === undefined) return input.path.startsWith('node_modules/')
    return file.size === input.size && file.mtimeMs === input.mtimeMs
  })
}

/** The names (keys of PRECOMPILED_BUILDS) of the builds under `root` missing or no longer matching their sources. */
export function staleBuilds(root) {
  return Object.entries(PRECOMPILED_BUILDS)
    .filter(([, build]) => !precompiledIsFresh(root, build))
    .map(([name]) => name)
}

/**
 * Runs `target` of the checkout at `root` from its build while that is fresh; otherwise registers tsx's loader and
 * the `@docanchor/source` condition (so @docanchor/client resolves to its TypeScript sources, as `node --conditions`
 * would) and runs the sources themselves.
 */
export async function runPrecompiledOrSources(target, root = fileURLToPath(new URL('..', import.meta.url))) {
  if (precompiledIsFresh(root, target)) {
    await import(pathToFileURL(resolve(root, target.dir, `${target.entry}.js`)).href)
    return
  }
  const [{ register: registerHooks }, { register }] = await Promise.all([
    import('node:module'),
    import('tsx/esm/api').catch(() => {
      throw new Error(
        `${target.dir}/ is missing or no longer matches the sources, and tsx (a development dependency) is not ` +
          'installed to run them: build with `npm ci && npm run build` before `npm prune --omit=dev`',
      )
    }),
  ])
  register()
  registerHooks('../bin/source-condition.js', import.meta.url)
  await import(pathToFileURL(resolve(root, target.source)).href)
}
