import { describe, expect, it } from 'vitest'
import { readIndexedChain } from '../../src/verify/anchor-index.ts'

describe('readIndexedChain', () => {
  // The lookup's statement carries its values as literals: nothing but a hash and integers may reach it.
  it.each([
    ["0x' OR 1=1 --", 10, 10],
    [`0x${'A'.repeat(64)}`, 10, 10],
    [`0x${'a'.repeat(64)}'); DROP TABLE anchors; --`, 10, 10],
    [`0x${'a'.repeat(64)}`, Number.NaN, 10],
    [`0x${'a'.repeat(64)}`, 10, 1.5],
  ])('refuses %s (limits %s, %s) without running any statement', async (txHash, maxDepth, maxSuccessors) => {
    const statements: string[] = []
    const query = async <T>(text: string): Promise<T[]> => {
      statements.push(text)
      return []
    }
    await expect(readIndexedChain(query, txHash as `0x${string}`, { maxDepth, maxSuccessors })).rejects.toThrow(
      TypeError,
    )
    expect(statements).toEqual([])
  })
})
