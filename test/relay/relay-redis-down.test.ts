// Redis holds only the per-user relay limit's counters: a Redis outage must not fail relays (found by the soak,
// bench/soak, while it restarted Redis: relays answered 500).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { closedPort } from '../helpers/processes/closed-port.ts'
import { newBody, postRelay } from './relay-helpers.ts'

describe('POST /api/relay while Redis is down', () => {
  let t: TestApp
  let user: SignedInUser

  beforeAll(async () => {
    const env = {
      RELAY_MONITOR_INTERVAL_MS: '0',
      RELAY_WAIT_MS: '5000',
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
    }
    t = await createTestApp({ env })
    user = await signInTestUser(t)
  })
  afterAll(async () => t?.close())

  it('relays without the per-user limit rather than failing', async () => {
    const response = await postRelay(t.app, user.headers, newBody())
    expect(response.json()).toMatchObject({ status: 'confirmed' })
    expect(response.statusCode).toBe(201)
  })
})
