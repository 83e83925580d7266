// The table every bench prints: each path against its floor measured in the same run, with the aim, and the
// machine's load average so that a figure taken on a busy machine says so.
import { loadavg } from 'node:os'

export interface RatioRow {
  path: string
  /** What was measured, already formatted (e.g. "412 ms, 61 MB"). */
  measured: string
  /** The floor, formatted the same way. */
  floor: string
  ratio: number
  /** The aim as text ("≤ 5×", "≥ 0.8×") and whether the ratio meets it. */
  aim: string
  met: boolean
}

export function printRatioTable(title: string, rows: readonly RatioRow[]): void {
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')
  const header = ['path', 'measured', 'floor', 'ratio', 'aim', '']
  const lines = rows.map((row) => [
    row.path,
    row.measured,
    row.floor,
    `${row.ratio.toFixed(2)}×`,
    row.aim,
    row.aim === NO_AIM ? '' : row.met ? 'ok' : 'MISSED',
  ])
  const widths = header.map((cell, column) => Math.max(cell.length, ...lines.map((line) => line[column]!.length)))
  const format = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`
  console.log(`\n${title} (load average ${load})`)
  console.log(format(header))
  console.log(format(widths.map((width) => '-'.repeat(width))))
  for (const line of lines) console.log(format(line))
}

export const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export function atMost(ratio: number, aim: number): Pick<RatioRow, 'ratio' | 'aim' | 'met'> {
  return { ratio, aim: `≤ ${aim}×`, met: ratio <= aim }
}

/** A figure printed for comparison, which no aim applies to. */
const NO_AIM = '—'

export function forComparison(ratio: number): Pick<RatioRow, 'ratio' | 'aim' | 'met'> {
  return { ratio, aim: NO_AIM, met: true }
}

export function atLeast(ratio: number, aim: number): Pick<RatioRow, 'ratio' | 'aim' | 'met'> {
  return { ratio, aim: `≥ ${aim}×`, met: ratio >= aim }
}
