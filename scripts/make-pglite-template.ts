// Part of `npm install` (the `prepare` script): makes the migrated PGlite template a new data directory starts from
// (src/db/pglite-template.ts), so that even the first `npm start` skips initdb.
import { ensurePgliteTemplateDirectory, PGLITE_CACHE_DIR } from '../src/db/pglite-template.ts'
import { createOwnerOnlyFiles, restrictToOwner } from '../src/owner-only-files.ts'

// The template holds a database: the installing user's alone, like the data directories made from it.
createOwnerOnlyFiles()
await restrictToOwner(PGLITE_CACHE_DIR)
// The archive first, then the directory unpacked from it.
await ensurePgliteTemplateDirectory()
