// The HTTP request metrics, counted in place and exported through the prom-client registry. prom-client's labelled
// Histogram hashes a response's label values and checks them against its label names on every observation (measured:
// the largest share of the app's per-request work on a cached verification); here each route keeps one series per
// method and status, found without hashing, and a response adds to its bucket counts. At a scrape the series become
// `http_request_duration_seconds` (a histogram) and `http_requests_total` (its counts, as a counter), in the text the
// registry writes for any metric.
import type { Metric, MetricValue, MetricValueWithName, Registry } from 'prom-client'

export type HttpLabels = Record<'method' | 'route' | 'status', string>

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

/** One route, method and status: responses per duration bucket (not cumulative), their total and their count. */
export class HttpSeries {
  readonly #inBucket = new Float64Array(DURATION_BUCKETS.length + 1)
  #sum = 0
  #count = 0

  constructor(readonly labels: HttpLabels) {}

  observe(seconds: number): void {
    let bucket = 0
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++
    this.#inBucket[bucket]! += 1
    this.#sum += seconds
    this.#count += 1
  }

  /** The series as Prometheus histogram samples: cumulative buckets up to +Inf, then sum and count. */
  histogramValues(name: string): MetricValueWithName<string>[] {
    let cumulative = 0
    const buckets = [...DURATION_BUCKETS, '+Inf' as const].map((bound, index) => {
      cumulative += this.#inBucket[index]!
      return { metricName: `${name}_bucket`, labels: { le: bound, ...this.labels }, value: cumulative }
    })
    return [
      ...buckets,
      { metricName: `${name}_sum`, labels: this.labels, value: this.#sum },
      { metricName: `${name}_count`, labels: this.labels, value: this.#count },
    ]
  }

  get count(): number {
    return this.#count
  }

  reset(): void {
    this.#inBucket.fill(0)
    this.#sum = 0
    this.#count = 0
  }
}

/** Every series made so far, registered as the two metrics; `series` finds one, made on first use. */
export class HttpMetrics {
  readonly #all: HttpSeries[] = []
  readonly #byLabels = new Map<string, HttpSeries>()

  constructor(registry: Registry) {
    const exported = (name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue<string>[]) =>
      ({
        name,
        help,
        type,
        aggregator: 'sum',
        // prom-client's types declare `type` a numeric enum; its registry writes (and expects) the type's name.
        get: async () => ({
          name,
          help,
          type,
          aggregator: 'sum',
          values: values(),
        }),
        // `registry.resetMetrics()` zeroes every series, as it would prom-client's own metrics.
        reset: () => {
          for (const series of this.#all) series.reset()
        },
      }) as unknown as Metric
    registry.registerMetric(
      exported('http_request_duration_seconds', 'HTTP request latency by route template and status', 'histogram', () =>
        this.#all.flatMap((series) => series.histogramValues('http_request_duration_seconds')),
      ),
    )
    registry.registerMetric(
      exported('http_requests_total', 'HTTP requests by route template and status', 'counter', () =>
        this.#all.map((series) => ({ labels: series.labels, value: series.count })),
      ),
    )
  }

  /** Not for a hot path: callers keep the series they use (metrics.ts, `routeSeries`). */
  series(labels: HttpLabels): HttpSeries {
    const key = `${labels.method} ${labels.route} ${labels.status}`
    let series = this.#byLabels.get(key)
    if (series === undefined) {
      series = new HttpSeries(labels)
      this.#all.push(series)
      this.#byLabels.set(key, series)
    }
    return series
  }
}
