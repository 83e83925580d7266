// The container tests' global setup: the images they run, built once. Stand-ins for the official images the
// Containerfile and deploy/compose.yaml name (no registry is reachable here), the service's image from the
// Containerfile, and the demonstration's image beside it (deploy/container/demo.Containerfile).
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { podman, podmanEnv } from './podman.ts'

export const SERVICE_IMAGE = 'localhost/docanchor:test'
export const DEMO_IMAGE = 'localhost/docanchor-demo:test'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const execFileAsync = promisify(execFile)

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(0)} s`

export default async function buildImages(): Promise<void> {
  for (const script of ['stand-in-node-image.sh', 'stand-in-service-images.sh']) {
    await execFileAsync(`${ROOT}/test/containers/${script}`, [], { env: podmanEnv(), maxBuffer: 16 * 1024 * 1024 })
  }
  const version = (await import('../../package.json', { with: { type: 'json' } })).default.version
  const revision = (await execFileAsync('git', ['-C', ROOT, 'rev-parse', 'HEAD'])).stdout.trim()
  // The machine's CA bundle, for a network whose egress inspects TLS (this one's does): a build secret, not a layer.
  const caBundle = [process.env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt'].find(
    (file) => file !== undefined && existsSync(file),
  )
  let started = performance.now()
  await podman(
    [
      ...['build', '--pull=never', '--format', 'docker', '-t', SERVICE_IMAGE],
      ...['--build-arg', `VERSION=${version}`, '--build-arg', `REVISION=${revision}`],
      ...['--build-arg', `SOURCE_URL=file://${ROOT}`],
      ...(caBundle ? ['--secret', `id=ca_certificates,src=${caBundle}`] : []),
      ROOT,
    ],
    { timeoutMs: 840_000 },
  )
  console.log(`podman build of the service's image: ${seconds(started)}`)
  started = performance.now()
  await podman(
    [
      ...['build', '--pull=never', '--format', 'docker', '-t', DEMO_IMAGE],
      ...['--build-arg', `SERVICE_IMAGE=${SERVICE_IMAGE}`, '-f', `${ROOT}/deploy/container/demo.Containerfile`],
      `${ROOT}/deploy/container`,
    ],
    { timeoutMs: 600_000 },
  )
  console.log(`podman build of the demonstration's image: ${seconds(started)}`)
}
