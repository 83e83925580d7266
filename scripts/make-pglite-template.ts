// Part of `npm install` (the `prepare` script): makes the migrated PGlite template a new data directory starts from
// (src/db/pglite-template.ts), so that even the first `npm start` skips initdb.
import { ensurePgliteTemplateDirectory } from '../src/db/pglite-template.ts'

// The archive first, then the directory unpacked from it.
await ensurePgliteTemplateDirectory()
