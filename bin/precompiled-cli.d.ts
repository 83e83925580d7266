// Types of bin/precompiled-cli.js, which stays plain JavaScript because bin/anchor.js loads it before any loader.
export interface BuildInput {
  path: string
  size: number
  mtimeMs: number
}
export const CLI_BUILD_DIR: string
export const CLI_BUILD_MANIFEST: string
export function precompiledCliIsFresh(root: string): boolean
