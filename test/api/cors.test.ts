import cors from '@fastify/cors'
import Fastify, { type InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { setAnswerHeaders } from '../../src/api/common-headers.ts'
import { registerCors } from '../../src/api/cors.ts'

// The app answers CORS with its own hook (src/api/cors.ts says why); @fastify/cors, kept for this comparison, must
// not answer any request differently under the same policy.
const policy = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
  allowedHeaders: ['authorization', 'content-type', 'if-none-match'],
  exposedHeaders: ['etag', 'retry-after'],
}
const requests: InjectOptions[] = [
  { method: 'GET', url: '/x' },
  { method: 'GET', url: '/x', headers: { origin: 'https://verify.example' } },
  { method: 'GET', url: '/x', headers: { origin: 'https://evil.example' } },
  { method: 'HEAD', url: '/x', headers: { origin: 'https://verify.example' } },
  { method: 'GET', url: '/missing', headers: { origin: 'https://verify.example' } },
  {
    method: 'OPTIONS',
    url: '/x',
    headers: { origin: 'https://verify.example', 'access-control-request-method': 'POST' },
  },
  {
    method: 'OPTIONS',
    url: '/none',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'PUT' },
  },
  { method: 'OPTIONS', url: '/x' },
  { method: 'OPTIONS', url: '/x', headers: { origin: 'https://verify.example' } },
]

describe('CORS', () => {
  for (const origins of [['https://verify.example', 'https://other.example'], '*'] as const) {
    it(`answers as @fastify/cors does with origins ${JSON.stringify(origins)}`, async () => {
      const library = Fastify()
      await library.register(cors, { origin: origins === '*' ? '*' : [...origins], ...policy, maxAge: 600 })
      const ours = Fastify()
      const corsHeaders = registerCors(ours, { origins, ...policy, maxAgeSeconds: 600 })
      ours.addHook('onRequest', (request, reply, done) => {
        setAnswerHeaders(corsHeaders, request, reply)
        done()
      })
      for (const app of [library, ours]) {
        app.get('/x', async () => ({ ok: true }))
        app.post('/x', async () => ({ ok: true }))
      }
      const answer = async (app: typeof ours, request: InjectOptions) => {
        const { statusCode, headers, body } = await app.inject(request)
        const { date: _date, ...rest } = headers
        return { statusCode, headers: rest, body }
      }
      for (const request of requests) {
        expect(await answer(ours, request), JSON.stringify(request)).toEqual(await answer(library, request))
      }
    })
  }
})
