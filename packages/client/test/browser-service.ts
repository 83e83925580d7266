// Global setup of the Chromium run: the real service as `npm start` runs it (a child process with embedded PGlite
// and anvil), open to any origin, and a session signed in through a real SMTP inbox, so that the API client's
// browser tests talk to it.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { startSmtpInbox } from '../../../test/auth/smtp-inbox.ts'
import { startServerProcess } from '../../../test/helpers/processes/server-process.ts'
import { createAnchorClient } from '../src/api/anchor-client.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    anchorService: { url: string; token: string; email: string }
  }
}

const EMAIL = 'browser@example.com'

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'docanchor-browser-service-'))
  const inbox = await startSmtpInbox()
  const server = await startServerProcess({
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    CORS_ORIGINS: '*',
    SMTP_URL: inbox.url,
  })
  try {
    const api = createAnchorClient({ baseUrl: server.url })
    await api.requestCode(EMAIL)
    const { token } = await api.verifyCode(EMAIL, await inbox.nextCode(EMAIL))
    project.provide('anchorService', { url: server.url, token, email: EMAIL })
  } catch (error) {
    await server.stop()
    throw error
  }
  return async () => {
    await server.stop()
    await inbox.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}
