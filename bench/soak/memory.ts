// Every instance's memory through the soak: resident set and V8 heap in use, read from its /metrics (prom-client's
// process_resident_memory_bytes and nodejs_heap_size_used_bytes) every few seconds, per process (a restarted instance
// is a new series). The slope, by least squares over each process's samples after its first minutes (start-up and
// warm caches are not a leak), is what a long run holds under a bound.
import type { World } from './world.ts'

const SAMPLE_EVERY_MS = 10_000
/** Samples of a process's first minutes are start-up and cache filling, not growth. */
export const WARM_UP_MS = 5 * 60_000
/** The bound a run of 30 minutes or more holds each process's heap slope under (docs/operations.md). */
export const HEAP_SLOPE_BOUND_MB_PER_HOUR = 20

interface Sample {
  at: number
  rss: number
  heap: number
}

export interface MemorySeries {
  instance: string
  pid: number
  samples: Sample[]
}

export class MemorySampler {
  private readonly series = new Map<string, MemorySeries>()
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly world: World,
    private readonly metricsToken: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), SAMPLE_EVERY_MS)
    void this.sample()
  }

  stop(): MemorySeries[] {
    clearInterval(this.timer)
    return [...this.series.values()]
  }

  private async sample(): Promise<void> {
    const pids = this.world.pids()
    await Promise.all(
      this.world.instances.map(async (instance, i) => {
        const response = await fetch(`${instance.url}/metrics`, {
          headers: { authorization: `Bearer ${this.metricsToken}` },
          signal: AbortSignal.timeout(5_000),
        }).catch(() => undefined)
        if (response?.status !== 200) return
        const text = await response.text()
        const rss = gauge(text, 'process_resident_memory_bytes')
        const heap = gauge(text, 'nodejs_heap_size_used_bytes')
        if (rss === undefined || heap === undefined) return
        const key = `${instance.name}:${pids[i]}`
        let series = this.series.get(key)
        if (!series) {
          series = { instance: instance.name, pid: pids[i]!, samples: [] }
          this.series.set(key, series)
        }
        series.samples.push({ at: Date.now(), rss, heap })
      }),
    )
  }
}

export interface MemorySlope {
  instance: string
  pid: number
  minutes: number
  rssStartMb: number
  rssEndMb: number
  /** Undefined when the process lived too briefly past its warm-up. */
  rssMbPerHour: number | undefined
  heapMbPerHour: number | undefined
}

export function memorySlopes(series: MemorySeries[]): MemorySlope[] {
  return series.map(({ instance, pid, samples }) => {
    const first = samples[0]!
    const last = samples.at(-1)!
    const settled = samples.filter((sample) => sample.at - first.at >= WARM_UP_MS)
    const mb = (bytes: number) => bytes / 1024 / 1024
    return {
      instance,
      pid,
      minutes: (last.at - first.at) / 60_000,
      rssStartMb: mb(first.rss),
      rssEndMb: mb(last.rss),
      rssMbPerHour: slopePerHour(settled.map((s) => [s.at, mb(s.rss)])),
      heapMbPerHour: slopePerHour(settled.map((s) => [s.at, mb(s.heap)])),
    }
  })
}

/** Least-squares slope of (ms, value) points, per hour; undefined with fewer than ten points. */
function slopePerHour(points: [number, number][]): number | undefined {
  if (points.length < 10) return undefined
  const n = points.length
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n
  let covariance = 0
  let variance = 0
  for (const [x, y] of points) {
    covariance += (x - meanX) * (y - meanY)
    variance += (x - meanX) ** 2
  }
  return (covariance / variance) * 3_600_000
}

function gauge(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}
