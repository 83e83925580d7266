// An event outlives the process that recorded it: the service is killed (SIGKILL) after an anchor is confirmed and
// before its webhook delivery is attempted, and the restarted service delivers it, once, under the same id.

import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'
import { newBody } from '../relay/relay-helpers.ts'
import { createServerUser, httpRelay, type ServerProcess, serverEnv, spawnServer } from '../relay/relay-process.ts'

describe('a webhook delivery across a crash (SIGKILL)', () => {
  let chain: TestChain
  let dataDir: string
  let database: TestDatabase | undefined
  let server: ServerProcess | undefined
  let receiver: Server
  const received: IncomingHttpHeaders[] = []

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'webhook-crash-'))
    chain = await startTestChain()
    database = process.env.DATABASE_URL ? await createTestDatabase() : undefined
    receiver = createServer((request, response) => {
      received.push(request.headers)
      request.resume().on('end', () => response.writeHead(204).end())
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  })
  afterAll(async () => {
    await server?.kill('SIGKILL')
    receiver?.closeAllConnections()
    receiver?.close()
    await database?.close()
    await chain?.stop()
    await rm(dataDir, { recursive: true, force: true })
  })

  it('is delivered once by the restarted service, under the event’s id', async () => {
    const user = await createServerUser(dataDir, database)
    const env = { ...serverEnv(chain, dataDir, database), RELAY_WAIT_MS: '5000' }
    // The first process never gets to deliver: its dispatcher's first look is ten minutes away.
    server = await spawnServer({ ...env, WEBHOOK_DISPATCH_INTERVAL_MS: '600000' })
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    const registered = await fetch(`${server.url}/api/webhooks`, {
      method: 'POST',
      headers: { authorization: user.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ url: hookUrl }),
    })
    expect(registered.status).toBe(201)
    const relayed = await httpRelay(server.url, user.authorization, newBody())
    expect(relayed.status).toBe(201)
    await server.kill('SIGKILL')
    expect(received).toEqual([])

    server = await spawnServer({ ...env, WEBHOOK_DISPATCH_INTERVAL_MS: '100' })
    await expect.poll(() => received.length, { timeout: 15_000 }).toBe(1)
    // Several more looks of the dispatcher: nothing is delivered twice.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(received).toHaveLength(1)
    const events = await fetch(`${server.url}/api/events`, { headers: { authorization: user.authorization } })
    const [event] = (await events.json()).events
    expect(event).toMatchObject({ type: 'anchor.confirmed', data: { txHash: relayed.json.txHash } })
    expect(received[0]!['webhook-id']).toBe(event.id)
  }, 120_000)
})
