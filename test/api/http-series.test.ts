import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { HttpMetrics } from '../../src/api/http-series.ts'

describe('the HTTP metrics series', () => {
  it('write a Prometheus histogram and its counts as a counter', async () => {
    const registry = new Registry()
    const http = new HttpMetrics(registry)
    const ok = http.series({ method: 'GET', route: '/api/info', status: '200' })
    const missing = http.series({ method: 'GET', route: 'unmatched', status: '404' })
    // On a bound, in a middle bucket, past the last bound.
    for (const seconds of [0.001, 0.003, 0.003, 20]) ok.observe(seconds)
    missing.observe(0.0002)

    const lines = (await registry.metrics()).split('\n')
    const labels = 'method="GET",route="/api/info",status="200"'
    const bucket = (le: string) =>
      lines.find((line) => line.startsWith(`http_request_duration_seconds_bucket{le="${le}",${labels}} `))
    expect(lines).toContain('# TYPE http_request_duration_seconds histogram')
    expect(lines).toContain('# TYPE http_requests_total counter')
    expect(bucket('0.001')).toMatch(/ 1$/)
    expect(bucket('0.0025')).toMatch(/ 1$/)
    expect(bucket('0.005')).toMatch(/ 3$/)
    expect(bucket('10')).toMatch(/ 3$/)
    expect(bucket('+Inf')).toMatch(/ 4$/)
    expect(lines).toContain(`http_request_duration_seconds_sum{${labels}} 20.007`)
    expect(lines).toContain(`http_request_duration_seconds_count{${labels}} 4`)
    expect(lines).toContain(`http_requests_total{${labels}} 4`)
    expect(lines).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1')
    // Every bound, in order, for each series.
    const bounds = lines
      .filter((line) => line.startsWith('http_request_duration_seconds_bucket{') && line.includes(labels))
      .map((line) => /le="([^"]+)"/.exec(line)![1])
    expect(bounds).toEqual([
      '0.001',
      '0.0025',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '10',
      '+Inf',
    ])

    registry.resetMetrics()
    const reset = (await registry.metrics()).split('\n')
    expect(reset).toContain(`http_request_duration_seconds_count{${labels}} 0`)
    expect(reset).toContain(`http_requests_total{${labels}} 0`)
    expect(reset).toContain(`http_request_duration_seconds_bucket{le="+Inf",${labels}} 0`)
  })
})
