// Text shown as text: controls, bidirectional formatting and invisible characters are written as <U+XXXX>; only the
// first two are refused in new payloads (scripts and emoji sequences join with invisible ones).
import { describe, expect, it } from 'vitest'
import { escapeDisplayControls, firstDisplayControl } from '../../src/formats/display-text.ts'

describe('escapeDisplayControls', () => {
  it('shows invisible characters, so that two names that look alike do not read alike (issue 38)', () => {
    expect(escapeDisplayControls('Ali\u200Bce')).toBe('Ali<U+200B>ce')
    expect(escapeDisplayControls('\uFEFFAda\u2060 Love\u200Flace\u00AD')).toBe(
      '<U+FEFF>Ada<U+2060> Love<U+200F>lace<U+00AD>',
    )
    expect(escapeDisplayControls('Mallory \u202Eyrollam\n', { keepNewlines: true })).toBe('Mallory <U+202E>yrollam\n')
    expect(escapeDisplayControls('Zoë 李 Ωμέγα')).toBe('Zoë 李 Ωμέγα')
  })

  it('refuses in new payloads only controls and bidirectional formatting, not joiners', () => {
    expect(firstDisplayControl('Mallory \u202Eyrollam')).toBe('U+202E')
    expect(firstDisplayControl('می\u200Cخواهم')).toBeUndefined()
    expect(firstDisplayControl('Ali\u200Bce')).toBeUndefined()
  })
})
