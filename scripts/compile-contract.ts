// `npm run compile:contract`: recompiles DocumentAnchors.sol and rewrites the committed artifacts.
import { writeFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { compileDocumentAnchors, jsonArtifactPath, tsArtifactPath } from './contract-artifacts.ts'

const { json, ts } = await compileDocumentAnchors()
await writeFile(jsonArtifactPath, json)
await writeFile(tsArtifactPath, ts)
for (const path of [jsonArtifactPath, tsArtifactPath]) console.log(`wrote ${relative(process.cwd(), path)}`)
