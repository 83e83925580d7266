// Limits counted in fixed windows aligned to the clock start counting again at every window's edge: a test that counts
// a few requests across instances first waits out an edge that is too near.
import { setTimeout as sleep } from 'node:timers/promises'

/** Resolves at once, unless the current `windowMs` window ends within `marginMs`; then just after its end. */
export async function clearOfWindowEdge(windowMs: number, marginMs = 2_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs)
  if (left < marginMs) await sleep(left + 10)
}
