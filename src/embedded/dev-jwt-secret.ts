// The embedded mode's JWT secret: random, generated on the first start and kept under the data directory so that
// tokens survive a restart. Production always configures JWT_SECRET instead.
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

export async function loadOrCreateDevJwtSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'jwt-secret')
  try {
    return (await readFile(file, 'utf8')).trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const secret = randomBytes(48).toString('base64url')
  await mkdir(dirname(file), { recursive: true })
  // 'wx' fails if another process created it meanwhile; then theirs wins.
  await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error
  })
  return (await readFile(file, 'utf8')).trim()
}
