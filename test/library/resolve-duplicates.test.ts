import { describe, expect, it } from 'vitest'
import type { SnippetItem } from '../../src/library/library-types.ts'
import { resolveDuplicates } from '../../src/library/resolve-duplicates.ts'
import { at, snippet } from './fixtures.ts'

const same = (a: SnippetItem, b: SnippetItem) => a.text === b.text && a.label === b.label

describe('resolveDuplicates', () => {
  it('keeps the newest change per id and reports the others as stale', () => {
    const id = crypto.randomUUID()
    const old = snippet({ id, text: 'old', updatedAt: at(1) })
    const newest = snippet({ id, text: 'new', updatedAt: at(3) })
    const deletion = { id, deletedAt: at(2) }
    const result = resolveDuplicates('snippet', [old, newest], [deletion], same)
    expect(result.upserts).toEqual([newest])
    expect(result.deletes).toEqual([])
    expect(result.skipped).toEqual([
      { kind: 'snippet', id, op: 'upsert', reason: 'stale' },
      { kind: 'snippet', id, op: 'delete', reason: 'stale' },
    ])
  })

  it('lets a deletion win a tie with an upsert, and the first of two equal upserts stay', () => {
    const id = crypto.randomUUID()
    const first = snippet({ id, text: 'first', updatedAt: at(5) })
    const second = snippet({ id, text: 'second', updatedAt: at(5) })
    expect(resolveDuplicates('snippet', [first, second], [], same).upserts).toEqual([first])
    const tie = resolveDuplicates('snippet', [first], [{ id, deletedAt: at(5) }], same)
    expect(tie.upserts).toEqual([])
    expect(tie.deletes).toEqual([{ id, deletedAt: at(5) }])
  })

  it('does not report an identical repeat as skipped', () => {
    const item = snippet()
    const result = resolveDuplicates('snippet', [item, { ...item }], [{ id: item.id, deletedAt: at(1) }], same)
    expect(result.upserts).toEqual([item])
    expect(result.skipped).toEqual([{ kind: 'snippet', id: item.id, op: 'delete', reason: 'stale' }])
  })
})
