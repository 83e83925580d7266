// The CLI prints the QR code's position the way a person reads it (issue 14, point 3).
import { describe, expect, it } from 'vitest'
import { describeStamp } from '../src/stamp-position.ts'

describe('describeStamp', () => {
  it('rounds coordinates and size to at most one decimal, without floating-point noise', () => {
    expect(describeStamp({ page: 1, x: 489.71400000000006, y: 24, size: 96, height: 116.16 })).toBe(
      'page 1 at (489.7, 24), 96 pt (116.2 pt tall with its caption)',
    )
    expect(describeStamp({ page: 2, x: 50, y: 600.05000000001, size: 72.25, height: 87.42 })).toBe(
      'page 2 at (50, 600.1), 72.3 pt (87.4 pt tall with its caption)',
    )
  })
})
