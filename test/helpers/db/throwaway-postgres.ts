// A throwaway PostgreSQL database created beside the one an admin URL names, for tests and benchmarks. Free of
// Vitest, so benchmarks run outside the test runner can use it too.
import { randomBytes } from 'node:crypto'
import pg from 'pg'

export interface ThrowawayDatabase {
  url: string
  drop(): Promise<void>
}

export async function createThrowawayDatabase(adminUrl: string, prefix = 'anchor_test'): Promise<ThrowawayDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}
