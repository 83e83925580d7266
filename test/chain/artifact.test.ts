import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import {
  compileDocumentAnchors,
  jsonArtifactPath,
  sourcePath,
  tsArtifactPath,
} from '../../scripts/contract-artifacts.ts'

describe('DocumentAnchors artifacts', () => {
  it('match a fresh compile byte for byte (run `npm run compile:contract` after changing the contract)', async () => {
    const fresh = await compileDocumentAnchors()
    expect(await readFile(jsonArtifactPath, 'utf8')).toBe(fresh.json)
    expect(await readFile(tsArtifactPath, 'utf8')).toBe(fresh.ts)
  })

  it('come from the compiler version the contract pins', async () => {
    const pragma = /^pragma solidity (\d+\.\d+\.\d+);$/m.exec(await readFile(sourcePath, 'utf8'))?.[1]
    const { solcVersion } = JSON.parse(await readFile(jsonArtifactPath, 'utf8')) as { solcVersion: string }
    expect(pragma).toBeDefined()
    expect(solcVersion.startsWith(`${pragma}+`)).toBe(true)
  })
})
