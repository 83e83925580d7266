// Types of src/precompiled-builds.js, which stays plain JavaScript because the bin scripts load it before any loader.
export interface BuildInput {
  path: string
  size: number
  mtimeMs: number
}
export interface PrecompiledBuild {
  /** Build directory, relative to the checkout. */
  dir: string
}
export interface PrecompiledTarget extends PrecompiledBuild {
  /** The entry file's name in `dir`, without `.js`. */
  entry: string
  /** The source file it bundles, relative to the checkout. */
  source: string
  /** Further entry files the build makes beside it (a child process's), by name, from their sources. */
  alsoEntries?: Record<string, string>
}
export const PRECOMPILED_TARGETS: {
  cli: PrecompiledTarget
  server: PrecompiledTarget
  admin: PrecompiledTarget
  deploy: PrecompiledTarget
}
export const PRECOMPILED_PAGE: PrecompiledBuild
export const PRECOMPILED_BUILDS: typeof PRECOMPILED_TARGETS & { page: PrecompiledBuild }
export function buildManifest(target: PrecompiledBuild): string
export function precompiledIsFresh(root: string, target: PrecompiledBuild): boolean
export function staleBuilds(root: string): (keyof typeof PRECOMPILED_BUILDS)[]
/** `root` defaults to this checkout. */
export function runPrecompiledOrSources(target: PrecompiledTarget, root?: string): Promise<void>
