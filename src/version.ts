import { createRequire } from 'node:module'

/** The service's version, from package.json. */
export const SERVICE_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string })
  .version
