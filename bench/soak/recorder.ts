// Every request the soak sends, with its kind, start, latency and status (0: no HTTP answer at all).
export interface Sample {
  kind: string
  startedAt: number
  ms: number
  status: number
  /** Why there was no HTTP answer (status 0): the network error's code. */
  error?: string
}

export interface Answer<T = unknown> {
  status: number
  body: T
  /** Given by the balancer's cache, which adds an Age header (the service never sends one). */
  cached: boolean
}

export class Recorder {
  readonly samples: Sample[] = []

  constructor(private readonly baseUrl: string) {}

  /** Sends one request to the balancer (or `base`), records it, and never throws: a lost connection is status 0. */
  async send<T = Record<string, unknown>>(
    kind: string,
    method: string,
    path: string,
    options: { token?: string; body?: unknown; base?: string; record?: boolean } = {},
  ): Promise<Answer<T>> {
    const startedAt = Date.now()
    const t0 = performance.now()
    let answer: Answer<T>
    let error: string | undefined
    try {
      const response = await fetch(`${options.base ?? this.baseUrl}${path}`, {
        method,
        headers: {
          ...(options.token && { authorization: `Bearer ${options.token}` }),
          ...(options.body !== undefined && { 'content-type': 'application/json' }),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(60_000),
      })
      const text = await response.text()
      let body: unknown = text
      try {
        body = text === '' ? undefined : JSON.parse(text)
      } catch {}
      answer = { status: response.status, body: body as T, cached: response.headers.has('age') }
    } catch (failure) {
      const cause = (failure as Error).cause as { code?: string; message?: string } | undefined
      error = cause?.code ?? cause?.message ?? (failure as Error).name
      answer = { status: 0, body: undefined as T, cached: false }
    }
    if (options.record !== false) {
      this.samples.push({ kind, startedAt, ms: performance.now() - t0, status: answer.status, error })
    }
    return answer
  }
}
