import { defineConfig } from 'drizzle-kit'

// Migrations are generated from src/db/schema.ts and applied by the service at start (src/db/migrate.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './drizzle',
})
