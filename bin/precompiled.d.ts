// Types of bin/precompiled.js, which stays plain JavaScript because the bin scripts load it before any loader.
export interface BuildInput {
  path: string
  size: number
  mtimeMs: number
}
export interface PrecompiledTarget {
  /** Build directory, relative to the checkout. */
  dir: string
  /** The entry file's name in `dir`, without `.js`. */
  entry: string
  /** The source file it bundles, relative to the checkout. */
  source: string
}
export const PRECOMPILED_TARGETS: { cli: PrecompiledTarget; server: PrecompiledTarget }
export function buildManifest(target: PrecompiledTarget): string
export function precompiledIsFresh(root: string, target: PrecompiledTarget): boolean
/** `root` defaults to this checkout. */
export function runPrecompiledOrSources(target: PrecompiledTarget, root?: string): Promise<void>
