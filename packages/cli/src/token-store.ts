// The stored login: the service's JWT in the user's config directory, readable by the user alone (0600).

import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface StoredLogin {
  service: string
  email: string
  token: string
  expiresAt: string
}

export const tokenFile = (configDir: string) => join(configDir, 'token.json')

export async function readStoredLogin(configDir: string): Promise<StoredLogin | undefined> {
  let text: string
  try {
    text = await readFile(tokenFile(configDir), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const value = JSON.parse(text) as Partial<StoredLogin>
    if (typeof value.token === 'string' && typeof value.service === 'string') return value as StoredLogin
  } catch {}
  return undefined
}

export async function saveStoredLogin(configDir: string, login: StoredLogin): Promise<void> {
  await mkdir(configDir, { recursive: true, mode: 0o700 })
  const file = tokenFile(configDir)
  const temp = `${file}.${process.pid}.tmp`
  // Created 0600 from the start (and chmod in case a umask widened it), then renamed over the old file.
  await writeFile(temp, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 })
  await chmod(temp, 0o600)
  await rename(temp, file)
}

export async function deleteStoredLogin(configDir: string): Promise<void> {
  await rm(tokenFile(configDir), { force: true })
}
