// Whether dist/cli/ (built by scripts/build-cli.ts on `npm install`) still matches the sources it was built from:
// every bundled source file must have the size and mtime the build recorded. A checkout, an edit or a deleted file
// changes one of them, and bin/anchor.js then runs the sources through tsx instead, so stale code never runs.
// One stat per source file (about a hundred): a millisecond or two, against the ~1 s tsx costs.
import { readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'

export const CLI_BUILD_DIR = 'dist/cli'
export const CLI_BUILD_MANIFEST = `${CLI_BUILD_DIR}/inputs.json`

/**
 * @typedef {{ path: string, size: number, mtimeMs: number }} BuildInput
 */

/** True when the build under `root` exists and every source it recorded is unchanged. */
export function precompiledCliIsFresh(root) {
  let inputs
  try {
    inputs = /** @type {BuildInput[]} */ (JSON.parse(readFileSync(resolve(root, CLI_BUILD_MANIFEST), 'utf8')))
  } catch {
    return false
  }
  if (!Array.isArray(inputs) || inputs.length === 0) return false
  return inputs.every((input) => {
    const file = statSync(resolve(root, input.path), { throwIfNoEntry: false })
    return file !== undefined && file.size === input.size && file.mtimeMs === input.mtimeMs
  })
}
