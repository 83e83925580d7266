// The service's image under a real engine (podman, with runc), built from the Containerfile on a stand-in for its
// official base by test/containers/images.ts (no registry is reachable here), inspected and run the way
// an operator runs it: a read-only root filesystem with one volume, the health check, a relay and its verification
// over HTTP, a graceful stop on SIGTERM, and a restart that finds its data.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVICE_IMAGE } from './images.ts'
import { podman, waitFor } from './podman.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const IMAGE = SERVICE_IMAGE
const NAME = `docanchor-image-test-${process.pid}`
const VOLUME = `${NAME}-data`
const ZERO_TX_HASH = `0x${'0'.repeat(64)}`
const SHUTDOWN_TIMEOUT_MS = 10_000

const execFileAsync = promisify(execFile)

describe('the service image', () => {
  let base: string
  let revision: string

  beforeAll(async () => {
    revision = (await execFileAsync('git', ['-C', ROOT, 'rev-parse', 'HEAD'])).stdout.trim()
  })

  afterAll(async () => {
    await podman(['rm', '-f', '-t', '0', NAME]).catch(() => {})
    await podman(['volume', 'rm', '-f', VOLUME]).catch(() => {})
  })

  it('runs as an unprivileged user, with its labels, health check and stop signal, and reports its size', async () => {
    const [inspected] = JSON.parse(await podman(['image', 'inspect', IMAGE])) as {
      Size: number
      Healthcheck?: { Test: string[] }
      Config: {
        User: string
        Labels: Record<string, string>
        StopSignal?: string
        Volumes?: Record<string, unknown>
      }
    }[]
    const { Config: config } = inspected!
    expect(config.User).toBe('node')
    expect(config.Labels).toMatchObject({
      'org.opencontainers.image.title': 'document-anchoring-service',
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.version': expect.stringMatching(/^\d+\.\d+\.\d+/),
      'org.opencontainers.image.revision': revision,
      'org.opencontainers.image.source': expect.stringMatching(/^\S+:\/\//),
    })
    expect(inspected!.Healthcheck?.Test.join(' ')).toContain('/readyz')
    expect(config.StopSignal).toBe('SIGTERM')
    expect(Object.keys(config.Volumes ?? {})).toEqual(['/data'])
    console.log(`image size: ${(inspected!.Size / 1e6).toFixed(0)} MB`)
  })

  it('holds the built service and production dependencies only: no compiler, no build tool, no secret', async () => {
    const listing = await podman([
      ...['run', '--rm', '--pull=never', '--entrypoint', 'sh', IMAGE, '-c'],
      [
        'for tool in gcc cc g++ c++ make python3 tsx vite esbuild; do command -v "$tool" && echo "tool: $tool"; done',
        'for module in tsx vite esbuild vitest typescript; do test -e "node_modules/$module" && echo "module: $module"; done',
        'test -f dist/server/server.js && echo built: server',
        'test -f dist/page/inputs.json && echo built: page',
        'test -f node_modules/pkcs11js/build/Release/pkcs11.node && echo built: pkcs11js',
        'find /app ! -perm -o=r 2>/dev/null | head -3 | sed "s/^/unreadable: /"',
        'find / -xdev \\( -name "*.key" -o -name ".env" -o -name ".npmrc" -o -name "*.p12" \\) -not -path "*/node_modules/*" 2>/dev/null | sed "s/^/secret-like: /"',
        // deploy/ stays out of the build context, and with it deploy/secrets/ (make-secrets.sh writes there).
        'find /app/deploy -type f ! -name whole-second-mtimes.mjs | sed "s/^/included: /"',
        'find /app -maxdepth 1 \\( -name "*.env" -o -name "*.pem" -o -name "*.pdf" -o -name "docs" -o -name "test" \\) | sed "s/^/included: /"',
        'echo user: $(id -u)',
      ].join('; '),
    ])
    const lines = listing.trim().split('\n')
    expect(lines.filter((line) => /^(tool|module|secret-like|unreadable|included):/.test(line))).toEqual([])
    expect(lines).toEqual(expect.arrayContaining(['built: server', 'built: page', 'built: pkcs11js', 'user: 1000']))
  })

  it('serves on a read-only root with one volume: healthy, relays and verifies, stops on SIGTERM, keeps its data', async () => {
    await podman(['volume', 'create', VOLUME])
    // The embedded defaults (PGlite and a local chain, both under /data): a container needs nothing else to try it.
    await podman([
      ...['run', '-d', '--pull=never', '--name', NAME, '--read-only', '-v', `${VOLUME}:/data`],
      ...['-p', '127.0.0.1::3000', '-e', 'NODE_ENV=development', IMAGE],
    ])
    const port = (await podman(['port', NAME, '3000/tcp'])).trim().split(':').pop()
    base = `http://127.0.0.1:${port}`
    await waitFor('ready', async () => ((await fetch(`${base}/readyz`)).ok ? true : undefined), 180_000)
    await podman(['healthcheck', 'run', NAME])

    // A signer, as the desktop application signs in: the code from the log (no SMTP server in development).
    const email = `container-${randomBytes(4).toString('hex')}@example.com`
    const post = (path: string, body: unknown, token?: string) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
        body: JSON.stringify(body),
      })
    expect((await post('/api/auth/magic-link', { email })).status).toBe(202)
    const code = await waitFor(
      'the sign-in code in the log',
      async () => new RegExp(`Sign-in code for ${email}: (\\d{6})`).exec(await podman(['logs', NAME]))?.[1],
      10_000,
    )
    const { token } = (await (await post('/api/auth/magic-link/verify', { email, code })).json()) as { token: string }
    const body = {
      compositeHash: `0x${randomBytes(32).toString('hex')}`,
      previousTxHash: ZERO_TX_HASH,
      encryptedPayload: randomBytes(60).toString('base64url'),
    }
    const relayed = await post('/api/relay', body, token)
    expect([201, 202]).toContain(relayed.status)
    const { txHash } = (await relayed.json()) as { txHash: string }
    const verified = async () => {
      const response = await fetch(`${base}/api/verify/${txHash}`)
      return response.ok ? ((await response.json()) as { compositeHash: string }) : undefined
    }
    expect((await waitFor('the relay verified', verified, 60_000)).compositeHash).toBe(body.compositeHash)

    // Nothing outside the volume can be written.
    const writes = await podman(['exec', NAME, 'sh', '-c', 'touch /app/x 2>&1; touch /data/x && echo data writable'])
    expect(writes).toContain('Read-only file system')
    expect(writes).toContain('data writable')

    const stopping = performance.now()
    await podman(['stop', '-t', '60', NAME])
    const stoppedInMs = performance.now() - stopping
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', NAME])).trim()).toBe('0')
    expect(stoppedInMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 5_000)
    console.log(`stopped on SIGTERM in ${stoppedInMs.toFixed(0)} ms`)

    await podman(['start', NAME])
    const again = (await podman(['port', NAME, '3000/tcp'])).trim().split(':').pop()
    base = `http://127.0.0.1:${again}`
    await waitFor('ready again', async () => ((await fetch(`${base}/readyz`)).ok ? true : undefined), 180_000)
    expect((await waitFor('the relay verified after a restart', verified, 30_000)).compositeHash).toBe(
      body.compositeHash,
    )
  })
})
