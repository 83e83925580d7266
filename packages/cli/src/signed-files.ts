// The CLI's own record of what it signed: one JSON line per anchor in the config directory, naming the file signed
// (by its SHA-256 and where it was), the file written and the transaction. The service never sees file names, so
// this is what lets `anchor history` tell documents apart and `anchor sign` notice the same file signed twice (two
// anchors, two units of quota) before anything is spent.

import { createHash } from 'node:crypto'
import { appendFile, mkdir, open } from 'node:fs/promises'
import { join, resolve } from 'node:path'

export interface SignedFile {
  service: string
  /** The login's e-mail address: two people sharing a computer each have their own signatures. */
  account: string
  txHash: string
  /** SHA-256 (hex) of the file as it was before this signature. */
  inputSha256: string
  /** Absolute paths, as they were when signed. */
  input: string
  output: string
  signedAt: string
}

export const signedFilesPath = (configDir: string) => join(configDir, 'signed-files.jsonl')

/** The record is read to this size at most (about 20,000 signatures); past it, the newest lines count. */
const READ_LIMIT = 8 * 2 ** 20

export const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** Every well-formed line, oldest first; nothing when there is no record yet. A damaged line is skipped. */
export async function readSignedFiles(configDir: string): Promise<SignedFile[]> {
  let text: string
  try {
    const handle = await open(signedFilesPath(configDir), 'r')
    try {
      const { size } = await handle.stat()
      const start = Math.max(0, size - READ_LIMIT)
      const buffer = Buffer.alloc(size - start)
      await handle.read(buffer, 0, buffer.length, start)
      text = buffer.toString('utf8')
      // A read that began mid-line drops that line's end.
      if (start > 0) text = text.slice(text.indexOf('\n') + 1)
    } finally {
      await handle.close()
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const records: SignedFile[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      const value = JSON.parse(line) as Partial<SignedFile>
      if (typeof value.txHash === 'string' && typeof value.inputSha256 === 'string') records.push(value as SignedFile)
    } catch {}
  }
  return records
}

/** The newest earlier signature of the same bytes by the same account through the same service, if this CLI made one. */
export async function earlierSigning(
  configDir: string,
  { service, account, inputSha256 }: Pick<SignedFile, 'service' | 'account' | 'inputSha256'>,
): Promise<SignedFile | undefined> {
  const records = await readSignedFiles(configDir).catch(() => [])
  return records.findLast(
    (record) => record.service === service && record.account === account && record.inputSha256 === inputSha256,
  )
}

/**
 * Appends one signature. One short line written with O_APPEND, so two `anchor sign` at once each add theirs whole.
 * The directory is the login's (0700); the paths are stored absolute.
 */
export async function recordSignedFile(configDir: string, record: SignedFile): Promise<void> {
  await mkdir(configDir, { recursive: true, mode: 0o700 })
  const line = JSON.stringify({ ...record, input: resolve(record.input), output: resolve(record.output) })
  await appendFile(signedFilesPath(configDir), `${line}\n`, { mode: 0o600 })
}
