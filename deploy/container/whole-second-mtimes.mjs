// Drops the fraction of a second from the modification time of every file under the given directories. A copy
// between an image's stages (podman's and docker's COPY --from) keeps whole seconds only, and a precompiled build is
// used only while every source it read keeps the size and mtime it recorded (src/precompiled-builds.js): the build
// stage runs this before it builds, so that it records the times the final stage will see.
import { lstat, lutimes, readdir } from 'node:fs/promises'
import { join } from 'node:path'

async function truncate(path) {
  const stats = await lstat(path)
  const seconds = Math.floor(stats.mtimeMs / 1000)
  if (stats.mtimeMs !== seconds * 1000) await lutimes(path, stats.atime, seconds)
  if (stats.isDirectory()) {
    for (const entry of await readdir(path)) await truncate(join(path, entry))
  }
}

for (const directory of process.argv.slice(2)) await truncate(directory)
