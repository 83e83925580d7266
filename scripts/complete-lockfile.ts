// Records the optional platform builds of Biome and anvil in package-lock.json. A registry that serves only this
// platform's build (as the mirror of our build machines does) makes `npm install` leave the others out of the lock,
// and `npm ci` then refuses the lock as out of sync. With their `os`/`cpu` recorded, `npm ci` skips them on other
// platforms without fetching. Run after every `npm install` that changes the lock: `npm run lock:complete`.
import { readFileSync, writeFileSync } from 'node:fs'

interface LockEntry {
  version: string
  dev?: boolean
  optional?: boolean
  os?: string[]
  cpu?: string[]
  libc?: string[]
  optionalDependencies?: Record<string, string>
}

const PLATFORMS: Record<string, { os: string; cpu: string; libc?: string }> = {
  'android-arm64': { os: 'android', cpu: 'arm64' },
  'android-x64': { os: 'android', cpu: 'x64' },
  'darwin-arm64': { os: 'darwin', cpu: 'arm64' },
  'darwin-x64': { os: 'darwin', cpu: 'x64' },
  'darwin-amd64': { os: 'darwin', cpu: 'x64' },
  'linux-arm64': { os: 'linux', cpu: 'arm64' },
  'linux-arm64-musl': { os: 'linux', cpu: 'arm64', libc: 'musl' },
  'linux-x64-musl': { os: 'linux', cpu: 'x64', libc: 'musl' },
  'win32-arm64': { os: 'win32', cpu: 'arm64' },
  'win32-x64': { os: 'win32', cpu: 'x64' },
  'win32-amd64': { os: 'win32', cpu: 'x64' },
}
const PARENTS = ['node_modules/@biomejs/biome', 'node_modules/@foundry-rs/anvil']

const path = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(path, 'utf8')) as { packages: Record<string, LockEntry> }
const added: string[] = []
for (const parentKey of PARENTS) {
  const parent = lock.packages[parentKey]
  if (!parent) throw new Error(`${parentKey} is not in package-lock.json`)
  for (const [name, version] of Object.entries(parent.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`
    if (lock.packages[key]) continue
    const platform = PLATFORMS[name.slice(name.indexOf('-', name.indexOf('/')) + 1)]
    if (!platform) throw new Error(`unknown platform package ${name}`)
    lock.packages[key] = {
      version,
      ...(parent.dev && { dev: true }),
      optional: true,
      os: [platform.os],
      cpu: [platform.cpu],
      ...(platform.libc && { libc: [platform.libc] }),
    }
    added.push(name)
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`)
console.log(added.length > 0 ? `recorded ${added.join(', ')}` : 'the lock already records every platform build')
