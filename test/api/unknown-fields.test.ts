// One rule for unknown body fields on every route: 400 VALIDATION_FAILED naming the field (issue 14, point 9).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, signInTestUser, type TestApp } from '../helpers/app.ts'
import { newBody } from '../relay/relay-helpers.ts'

describe('unknown body fields', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' } })
  })
  afterAll(() => t.close())

  it('are refused with their path on every route that takes a body', async () => {
    const user = await signInTestUser(t)
    const routes: { method: 'POST' | 'PUT'; url: string; body: Record<string, unknown>; path: string }[] = [
      { method: 'POST', url: '/api/relay', body: { ...newBody(), note: 'x' }, path: 'note' },
      { method: 'POST', url: '/api/auth/magic-link', body: { email: 'a@example.com', next: '/' }, path: 'next' },
      {
        method: 'POST',
        url: '/api/auth/magic-link/verify',
        body: { email: 'a@example.com', code: '123456', remember: true },
        path: 'remember',
      },
      {
        method: 'POST',
        url: '/api/auth/exchange',
        body: { code: 'a'.repeat(43), code_verifier: 'b'.repeat(43), state: 'x' },
        path: 'state',
      },
      { method: 'PUT', url: '/api/library/sync', body: { signatures: {}, extra: [] }, path: 'extra' },
      {
        method: 'PUT',
        url: '/api/library/sync',
        body: { snippets: { upsert: [], replace: true } },
        path: 'snippets.replace',
      },
    ]
    for (const route of routes) {
      const { method, url, body } = route
      const response = await t.app.inject({ method, url, payload: body, headers: user.headers })
      expect({ url: route.url, status: response.statusCode }).toEqual({ url: route.url, status: 400 })
      expect(response.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        errors: [{ path: route.path, message: expect.stringContaining('unknown field') }],
      })
    }
  })
})
