// A transaction PostgreSQL aborted to break a deadlock was undone whole: running it again is safe, and two of them
// rarely meet twice. Callers take their locks in one order, so a deadlock is left only to rare races.
import { hasSqlState } from './database-unavailable.ts'

/** `work` again (at most `attempts` times in all) while it fails with a deadlock (SQLSTATE 40P01). */
export async function withDeadlockRetry<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= attempts || !hasSqlState(error, '40P01')) throw error
    }
  }
}
