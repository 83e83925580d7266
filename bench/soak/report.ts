// The soak's report: load held by kind, each fault's recovery, the invariants; as Markdown tables, printed and
// optionally written between the markers of docs/operations.md.
import { execFileSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import type { FaultResult } from './faults.ts'
import type { Invariant } from './invariants.ts'
import type { MemorySlope } from './memory.ts'
import type { Sample } from './recorder.ts'

const START = '<!-- soak-report:start -->'
const END = '<!-- soak-report:end -->'

export interface ReportInput {
  command: string
  seconds: number
  startedAt: number
  samples: Sample[]
  faults: FaultResult[]
  invariants: Invariant[]
  /** Per instance process: resident memory and heap slopes (after each process's first 5 minutes). */
  memory: MemorySlope[]
  machine: string
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

export function renderReport(input: ReportInput): string {
  const kinds = [...new Set(input.samples.map((sample) => sample.kind))].sort()
  const load = kinds.map((kind) => {
    const samples = input.samples.filter((sample) => sample.kind === kind)
    const latencies = samples.map((sample) => sample.ms).sort((a, b) => a - b)
    const ok = samples.filter((sample) => sample.status > 0 && sample.status < 500).length
    const failed = samples.length - ok
    return `| ${kind} | ${samples.length} | ${(samples.length / input.seconds).toFixed(2)} | ${((ok / samples.length) * 100).toFixed(1)} % | ${failed} | ${percentile(latencies, 0.5).toFixed(0)} | ${percentile(latencies, 0.99).toFixed(0)} |`
  })
  const seconds = (from: number, to: number | undefined) =>
    to === undefined ? 'not recovered' : `${((to - from) / 1000).toFixed(1)} s`
  const failed = input.samples.filter((sample) => sample.status === 0 || sample.status >= 500)
  const faults = input.faults.map((fault) => {
    const end = fault.recoveredAt ?? Number.POSITIVE_INFINITY
    const during = failed.filter((sample) => sample.startedAt + sample.ms >= fault.startedAt && sample.startedAt <= end)
    return `| ${fault.name} | ${((fault.startedAt - input.startedAt) / 1000).toFixed(0)} s | ${seconds(fault.startedAt, fault.healedAt)} | ${seconds(fault.startedAt, fault.recoveredAt)} | ${during.length} |`
  })
  const invariants = input.invariants.map(
    (invariant) =>
      `| ${invariant.accepted ? 'lost with the database' : invariant.ok ? 'pass' : '**FAIL**'} | ${invariant.name} | ${invariant.detail} |`,
  )
  const perHour = (value: number | undefined) => (value === undefined ? 'too short' : `${value.toFixed(1)} MB/h`)
  const memory = input.memory.map(
    (slope) =>
      `| ${slope.instance} (pid ${slope.pid}) | ${slope.minutes.toFixed(1)} min | ${slope.rssStartMb.toFixed(0)} → ${slope.rssEndMb.toFixed(0)} MB | ${perHour(slope.rssMbPerHour)} | ${perHour(slope.heapMbPerHour)} |`,
  )
  return [
    `\`${input.command}\`: ${input.seconds} s of workload through HAProxy to 3 instances; ${input.machine}.`,
    '',
    '| kind | requests | req/s | answered < 500 | 5xx or no answer | p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...load,
    '',
    '| fault | at | condition lasted | full recovery after | 5xx until recovered |',
    '|---|---:|---:|---:|---:|',
    ...faults,
    '',
    '| instance process | sampled | resident memory | resident slope | heap slope |',
    '|---|---:|---:|---:|---:|',
    ...memory,
    '',
    '| | invariant | detail |',
    '|---|---|---|',
    ...invariants,
  ].join('\n')
}

export async function writeReportInto(file: string, report: string): Promise<void> {
  const text = await readFile(file, 'utf8')
  const start = text.indexOf(START)
  const end = text.indexOf(END)
  if (start < 0 || end < start) throw new Error(`${file} has no ${START} … ${END} markers`)
  await writeFile(file, `${text.slice(0, start + START.length)}\n${report}\n${text.slice(end)}`)
  // Aligned as the linter wants Markdown tables, so that the written page passes `npm run lint`.
  execFileSync('npx', ['biome', 'format', '--write', file], { stdio: 'ignore' })
}
