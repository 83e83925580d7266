// podman for the container tests, configured by test/containers/containers.conf (runc, no default ulimits), and the
// wait their checks share.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CONTAINERS_CONF = fileURLToPath(new URL('./containers.conf', import.meta.url))

/** The environment podman runs with here: the process's, with the tests' containers.conf and Docker's image format
 * (OCI's drops HEALTHCHECK). */
export function podmanEnv(): NodeJS.ProcessEnv {
  return { ...process.env, CONTAINERS_CONF, BUILDAH_FORMAT: 'docker' }
}

/** Runs `podman …` and resolves with its standard output and error together; rejects with both on failure. */
export function podman(args: string[], options: { timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'podman',
      args,
      { env: podmanEnv(), timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`podman ${args.join(' ')} failed: ${error.message}\n${stderr}`))
        else resolve(stdout + stderr)
      },
    )
  })
}

/** Resolves with what `probe` gives once it gives something (a throw counts as nothing yet), asking every `everyMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
