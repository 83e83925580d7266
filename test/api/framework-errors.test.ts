// Errors raised by Fastify's router and Node's HTTP parser are problem bodies too (issue 14, points 2, 5, 6).
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, signInTestUser, type TestApp } from '../helpers/app.ts'

/** Sends raw bytes and collects everything the server answers until it closes the connection. */
function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port })
    let answer = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => (answer += chunk))
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
    socket.end(bytes)
  })
}

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

function parseRaw(text: string): RawResponse {
  const [head = '', body = ''] = text.split('\r\n\r\n')
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  )
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

function expectProblem(response: { headers: Record<string, unknown>; body: string }, status: number, code: string) {
  expect(String(response.headers['content-type'])).toContain('application/problem+json')
  expect(JSON.parse(response.body)).toMatchObject({ type: 'about:blank', status, code })
}

describe('framework-level errors', () => {
  let t: TestApp
  let port: number
  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' } })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    port = (t.app.server.address() as { port: number }).port
  })
  afterAll(() => t.close())

  it('answers a path parameter over the length limit with 414 URI_TOO_LONG, without echoing it', async () => {
    const marker = `x${'a'.repeat(300)}`
    const response = await t.app.inject(`/api/verify/${marker}`)
    expect(response.statusCode).toBe(414)
    expectProblem(response, 414, 'URI_TOO_LONG')
    expect(response.body).not.toContain(marker)
  })

  it('answers a malformed percent escape with 400 MALFORMED_REQUEST, without echoing it', async () => {
    for (const url of ['/api/verify/%ZZsecret', '/v/%']) {
      const response = await t.app.inject(url)
      expect(response.statusCode).toBe(400)
      expectProblem(response, 400, 'MALFORMED_REQUEST')
      expect(response.body).not.toContain('%ZZ')
      expect(response.body).not.toContain('secret')
    }
  })

  it('answers a text/plain body on a JSON route with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const user = await signInTestUser(t)
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/relay',
      headers: { ...user.headers, 'content-type': 'text/plain' },
      payload: 'hello',
    })
    expect(response.statusCode).toBe(415)
    expectProblem(response, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it('answers headers over 16 KB with 431 HEADERS_TOO_LARGE', async () => {
    const secret = `s3cr3t${'h'.repeat(20_000)}`
    const response = parseRaw(
      await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${secret}\r\n\r\n`),
    )
    expect(response.status).toBe(431)
    expectProblem(response, 431, 'HEADERS_TOO_LARGE')
    expect(response.body).not.toContain('s3cr3t')
  })

  it('answers a malformed request line with 400 MALFORMED_REQUEST', async () => {
    const response = parseRaw(await rawRequest(port, 'GARBAGE\r\n\r\n'))
    expect(response.status).toBe(400)
    expectProblem(response, 400, 'MALFORMED_REQUEST')
  })

  it('answers conflicting Content-Length and Transfer-Encoding with 400 MALFORMED_REQUEST', async () => {
    const response = parseRaw(
      await rawRequest(
        port,
        'POST /api/auth/magic-link HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
          'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ),
    )
    expect(response.status).toBe(400)
    expectProblem(response, 400, 'MALFORMED_REQUEST')
  })
})

describe('answers Node’s HTTP server would give by itself', () => {
  let t: TestApp
  let port: number
  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', HSTS_MAX_AGE_SECONDS: '0' } })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    port = (t.app.server.address() as { port: number }).port
  })
  afterAll(() => t.close())

  it('answers an HTTP/1.1 request without Host with 400 MALFORMED_REQUEST and the common headers', async () => {
    const response = parseRaw(await rawRequest(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'))
    expect(response.status).toBe(400)
    expectProblem(response, 400, 'MALFORMED_REQUEST')
    expect(JSON.parse(response.body).detail).toBe('An HTTP/1.1 request must carry a Host header')
    expect(response.headers['x-content-type-options']).toBe('nosniff')
    // HTTP/1.0 needs none.
    expect(parseRaw(await rawRequest(port, 'GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(200)
  })

  it('answers a request with two Host headers with 400 MALFORMED_REQUEST, as HAProxy does (issue 38)', async () => {
    const response = parseRaw(
      await rawRequest(
        port,
        'GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n',
      ),
    )
    expect(response.status).toBe(400)
    expectProblem(response, 400, 'MALFORMED_REQUEST')
    expect(JSON.parse(response.body).detail).toBe('A request must carry one Host header, not several')
  })

  it('answers an Expect other than 100-continue through Fastify: 417 EXPECTATION_FAILED, the common headers', async () => {
    const response = parseRaw(
      await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: teapot\r\nConnection: close\r\n\r\n'),
    )
    expect(response.status).toBe(417)
    expectProblem(response, 417, 'EXPECTATION_FAILED')
    expect(response.headers['x-content-type-options']).toBe('nosniff')
    expect(response.headers.connection).toBe('close')
    // Answered by Fastify like every request: counted in the route's series.
    const metrics = (await t.app.inject('/metrics')).body
    expect(metrics).toMatch(/^http_requests_total\{method="GET",route="\/healthz",status="417"\} 1$/m)
    // HTTP/1.0 knows no expectations: its Expect is ignored.
    expect(parseRaw(await rawRequest(port, 'GET /healthz HTTP/1.0\r\nExpect: teapot\r\n\r\n')).status).toBe(200)
  })

  it('answers CONNECT with 405 METHOD_NOT_ALLOWED instead of closing the connection', async () => {
    const response = parseRaw(
      await rawRequest(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
    )
    expect(response.status).toBe(405)
    expectProblem(response, 405, 'METHOD_NOT_ALLOWED')
    expect(response.headers['x-content-type-options']).toBe('nosniff')
    expect(response.body).not.toContain('example.com')
  })
})
