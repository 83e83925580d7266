import cors from '@fastify/cors'
import Fastify, { type InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { setAnswerHeaders } from '../../src/api/common-headers.ts'
import { publicAnswerHeaders, registerCors } from '../../src/api/cors.ts'

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
      const corsHeaders = registerCors(ours, { origins, ...policy, maxAgeSeconds: 600 }, [])
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

  it('answers a public route, under a list of origins, as @fastify/cors does with every origin allowed', async () => {
    const library = Fastify()
    await library.register(cors, { origin: '*', ...policy, maxAge: 600 })
    library.get('/public', async () => ({ ok: true }))
    const ours = Fastify()
    const corsHeaders = registerCors(ours, { origins: ['https://verify.example'], ...policy, maxAgeSeconds: 600 }, [
      '/public',
    ])
    ours.addHook('onRequest', (request, reply, done) => {
      setAnswerHeaders(corsHeaders, request, reply)
      done()
    })
    ours.get('/public', { onRequest: publicAnswerHeaders }, async () => ({ ok: true }))
    for (const origin of [undefined, 'https://verify.example', 'https://evil.example']) {
      const request: InjectOptions = { method: 'GET', url: '/public', headers: origin ? { origin } : {} }
      const { date: _ours, ...oursHeaders } = (await ours.inject(request)).headers
      const { date: _library, ...libraryHeaders } = (await library.inject(request)).headers
      expect(oursHeaders, String(origin)).toEqual(libraryHeaders)
    }
    // A page of any origin revalidating with If-None-Match is preflighted: the preflight lets it through too.
    for (const origin of ['https://verify.example', 'https://evil.example']) {
      const preflight: InjectOptions = {
        method: 'OPTIONS',
        url: '/public',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
      }
      const { date: _ours, ...oursHeaders } = (await ours.inject(preflight)).headers
      const { date: _library, ...libraryHeaders } = (await library.inject(preflight)).headers
      expect(oursHeaders, origin).toEqual(libraryHeaders)
    }
  })
})
