import { describe, expect, it } from 'vitest'
import { classifyNodeError, NODE_ERROR_TEXTS } from '../../src/relayer/node-errors.ts'

describe('classifyNodeError', () => {
  for (const entry of NODE_ERROR_TEXTS) {
    for (const example of entry.examples) {
      it(`reads "${example.slice(0, 70)}" (${entry.source.slice(0, 40)}…)`, () => {
        const expected =
          typeof entry.refusal === 'function' ? entry.refusal(entry.pattern.exec(example)!) : entry.refusal
        expect(classifyNodeError(example)).toBe(expected)
        // The entry itself decides, not an earlier one that happens to match as well.
        const first = NODE_ERROR_TEXTS.find((candidate) => candidate.pattern.test(example))
        expect(first).toBe(entry)
      })
    }
  }

  it("reads both directions of Ganache's nonce message", () => {
    expect(
      classifyNodeError("the tx doesn't have the correct nonce. account has nonce of: 52 tx has nonce of: 48"),
    ).toBe('nonce-too-low')
    expect(classifyNodeError("the tx doesn't have the correct nonce. account has nonce of: 3 tx has nonce of: 7")).toBe(
      'nonce-too-high',
    )
  })

  it('knows nothing of words no entry recognises: the caller treats them as unclear', () => {
    for (const text of ['', 'execution reverted', 'Internal error', 'upstream connect error', 'something new']) {
      expect(classifyNodeError(text)).toBeUndefined()
    }
  })
})
