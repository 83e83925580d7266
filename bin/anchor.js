#!/usr/bin/env node
// Runs the TypeScript `anchor` command from a checkout: registers tsx's loader, then loads the entry point.
import { register } from 'tsx/esm/api'

register()
await import('../src/cli/anchor.ts')
