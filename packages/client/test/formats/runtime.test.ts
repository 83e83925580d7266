/// <reference types="vite/client" />
// Guards the claim the browser run rests on: nothing the package ships needs more than Web APIs and its
// dependencies (DEPENDENCIES), and these tests really ran where their Vitest project says (Node or Chromium).

import { describe, expect, inject, it } from 'vitest'

declare module 'vitest' {
  interface ProvidedContext {
    runtime: 'node' | 'browser'
  }
}

const sources = import.meta.glob<string>('../../src/**/*.ts', { query: '?raw', import: 'default', eager: true })
const DEPENDENCIES = ['zod', '@libpdf/core', 'qrcode', 'pkijs', 'asn1js']

describe('format tests runtime', () => {
  it('runs in the environment its project names', () => {
    if (inject('runtime') === 'browser') {
      expect(typeof document).toBe('object')
      expect(navigator.userAgent).toMatch(/Chrome\//)
    } else {
      expect(typeof document).toBe('undefined')
      expect(typeof globalThis.process?.versions?.node).toBe('string')
    }
  })

  it('has the Web APIs the formats use', () => {
    expect(typeof crypto.subtle.encrypt).toBe('function')
    expect(typeof crypto.getRandomValues).toBe('function')
    expect(typeof TextEncoder).toBe('function')
  })
})

describe('@docanchor/client sources', () => {
  it('import only their own modules and the package dependencies', () => {
    expect(Object.keys(sources)).toEqual(
      expect.arrayContaining(['../../src/index.ts', '../../src/api/anchor-client.ts', '../../src/pdf/sign-pdf.ts']),
    )
    const all: string[] = []
    for (const [path, source] of Object.entries(sources)) {
      for (const [, specifier] of source.matchAll(/^(?:import|export)\s[^'"]*?from\s+'([^']+)'/gm)) {
        all.push(specifier!)
        const own = /^\.\.?\/(?:[a-z]+\/){0,2}[a-z0-9-]+\.ts$/.test(specifier!)
        expect(own || DEPENDENCIES.includes(specifier!), `${path} imports ${specifier}`).toBe(true)
      }
    }
    // Proves the pattern finds imports at all.
    expect(all).toEqual(expect.arrayContaining([...DEPENDENCIES, './errors.ts', '../formats/hex.ts']))
  })

  it('uses no Node globals', () => {
    for (const [path, source] of Object.entries(sources)) {
      expect(source, path).not.toMatch(/\bBuffer\b|\bprocess\b|\brequire\(|\b__dirname\b|import\(/)
    }
  })
})
