// Every metric the shipped alert rules (deploy/prometheus/alerts.yml) name is one the real service exposes at
// /metrics: a renamed series would otherwise leave an alert that can never fire.
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { createTestApp, type TestApp } from '../helpers/app.ts'

const RULES_FILE = new URL('../../deploy/prometheus/alerts.yml', import.meta.url)
const RUNBOOK = new URL('../../docs/operations.md', import.meta.url)

/** Series Prometheus itself attaches to every scrape target; no service exposes them. */
const SCRAPE_SERIES = new Set(['up'])

const PROMQL_KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
])

interface RuleFile {
  groups: { name: string; rules: { alert: string; expr: string }[] }[]
}

/** The metric names a PromQL expression selects: what is left after strings, matchers, ranges, groupings and calls. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/[a-zA-Z_][a-zA-Z0-9_]*\s*\(/g, '(')
  const names = stripped.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? []
  return [...new Set(names.filter((name) => !PROMQL_KEYWORDS.has(name)))]
}

/** Names of every series in a Prometheus text exposition, histograms with their _bucket, _sum and _count. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>()
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match
    names.add(name!)
    if (type === 'histogram' || type === 'summary') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`)
    }
  }
  return names
}

describe('deploy/prometheus/alerts.yml', () => {
  let testApp: TestApp
  let exposed: Set<string>
  let rules: { alert: string; expr: string }[]

  beforeAll(async () => {
    testApp = await createTestApp()
    const response = await testApp.app.inject({ method: 'GET', url: '/metrics' })
    expect(response.statusCode).toBe(200)
    exposed = exposedNames(response.body)
    const file = parse(await readFile(RULES_FILE, 'utf8')) as RuleFile
    rules = file.groups.flatMap((group) => group.rules)
  })

  afterAll(async () => {
    await testApp?.close()
  })

  it('has exactly the alerts the runbook documents', async () => {
    // The rows of the runbook's alert table: "| `AlertName` | means | do |".
    const runbook = await readFile(RUNBOOK, 'utf8')
    const documented = [...runbook.matchAll(/^\| `([A-Z][A-Za-z]+)` +\|/gm)].map((match) => match[1]!)
    expect(documented.length).toBeGreaterThan(4)
    expect(rules.map((rule) => rule.alert).sort()).toEqual(documented.sort())
  })

  it('names in every expression only series the service exposes', () => {
    for (const rule of rules) {
      const names = metricNames(rule.expr)
      expect(names.length, rule.alert).toBeGreaterThan(0)
      const unknown = names.filter((name) => !exposed.has(name) && !SCRAPE_SERIES.has(name))
      expect(unknown, `${rule.alert} names series /metrics does not expose`).toEqual([])
    }
  })

  it('finds the metric names in an expression and would catch a misspelt one', () => {
    const names = metricNames(
      'sum by (instance) (rate(relay_outcome_total{job="anchor", outcome="pending"}[10m])) > 0.1 or up{job="a"} == 0',
    )
    expect(names).toEqual(['relay_outcome_total', 'up'])
    expect(exposed.has('relay_outcome_total')).toBe(false)
    expect(exposed.has('relay_outcomes_total')).toBe(true)
  })
})
