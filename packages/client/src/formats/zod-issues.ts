// Turns Zod issues into the formats' field issues (`s.e: not a valid e-mail address`), so every parser reports
// failures the same way whatever the schema library says by default.

import type { z } from 'zod'
import type { FieldIssue } from './errors.ts'

type ErrorMap = NonNullable<Parameters<z.ZodType['safeParse']>[1]>['error']

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

const ARTICLES: Record<string, string> = { object: 'an object', array: 'an array', integer: 'an integer' }

/** Per-parse error map for the messages schemas do not set themselves (wrong type, missing field). */
export const fieldErrorMap: ErrorMap = (issue) => {
  // Whatever the schema (an enum reports `invalid_value`), an undefined input is a missing field.
  if (issue.input === undefined) return 'is required'
  if (issue.code === 'invalid_type') {
    const expected = ARTICLES[issue.expected] ?? `a ${issue.expected}`
    return `expected ${expected}, got ${describe(issue.input)}`
  }
  return undefined
}

export function formatPath(path: readonly PropertyKey[], root: string): string {
  let out = ''
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`
    else out += out === '' ? String(segment) : `.${String(segment)}`
  }
  return out === '' ? root : out
}

/** The issues of a failed parse, unknown keys reported one per key at their own path. */
export function toFieldIssues(error: z.ZodError, root: string): [FieldIssue, ...FieldIssue[]] {
  const issues: FieldIssue[] = []
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        issues.push({ field: formatPath([...issue.path, key], root), reason: 'unknown field' })
    } else {
      issues.push({ field: formatPath(issue.path, root), reason: issue.message })
    }
  }
  const [first, ...rest] = issues
  return first ? [first, ...rest] : [{ field: root, reason: 'invalid' }]
}
