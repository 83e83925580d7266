// The soak's world, all on loopback and all its own: PostgreSQL, Redis, anvil mining a block a second behind two RPC
// endpoints (a throttling proxy first, anvil itself second), the contract with two relayer keys, an SMTP inbox, an
// https webhook receiver, three service instances in production mode, and HAProxy in front of them. `stop()` tears
// down whatever started.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import pg from 'pg'
import { type Address, createPublicClient, http, type PublicClient } from 'viem'
import { type AnvilInstance, startAnvil } from '../../src/chain/anvil.ts'
import { anvilAccount, anvilPrivateKey } from '../../src/chain/anvil-accounts.ts'
import { runDeployCommand } from '../../src/operator/deploy-command.ts'
import { type SmtpInbox, startSmtpInbox } from '../../test/auth/smtp-inbox.ts'
import { type RpcProxy, startRpcProxy } from '../../test/helpers/chain/rpc-proxy.ts'
import { startOpensslTsa } from '../../test/helpers/pdf-signing/openssl-tsa.ts'
import { provisionPdfSigningKey } from '../../test/helpers/pkcs11/pdf-signing-token.ts'
import { createSoftHsmToken } from '../../test/helpers/pkcs11/softhsm.ts'
import { freePort } from './free-port.ts'
import { type LoadBalancer, startLoadBalancer } from './load-balancer.ts'
import { type PostgresCluster, type Replication, startPostgresCluster } from './postgres-cluster.ts'
import { type PrivateRedis, startPrivateRedis } from './redis-server.ts'
import { type ServiceInstance, startServiceInstance } from './service-instance.ts'
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts'

/** Account 0 deploys and owns the contract; accounts 1 and 2 are the service's relayer keys. */
const DEPLOYER = 0
const RELAYERS = [1, 2]
const INSTANCES = 3

export interface World {
  lbUrl: string
  instances: ServiceInstance[]
  anvil: AnvilInstance
  chain: PublicClient
  contract: Address
  relayers: Address[]
  throttle: RpcProxy
  postgres: PostgresCluster
  redis: PrivateRedis
  inbox: SmtpInbox
  /** Where the setup users' webhooks deliver. */
  webhooks: WebhookReceiver
  /** The service's database (not the cluster's `postgres` one). */
  databaseUrl: string
  /** SIGKILLs instance `index`; `restartInstance` brings it back with the same settings on the same port. */
  killInstance(index: number): Promise<void>
  /** Stops instance `index` as an operator does (SIGTERM: it finishes the requests it holds). */
  stopInstance(index: number): Promise<void>
  restartInstance(index: number): Promise<void>
  /** Every instance's PID, in order: a restarted instance has a new one. */
  pids(): number[]
  /** The fleet's METRICS_TOKEN: the memory sampler reads each instance's /metrics. */
  metricsToken: string
  stop(): Promise<void>
}

/**
 * `logDir`: each process's output goes to a file there (anchor1.log, …, haproxy.log, haproxy-postgres.log).
 * `replication`: how the PostgreSQL standby follows its primary.
 */
export async function startWorld(
  log: (line: string) => void,
  logDir: string,
  replication: Replication,
  options: {
    /** Caps the verify caches low so they fill in the first minutes: a long run's slope is then growth, not caching. */
    smallCaches?: boolean
    /** Each instance writes a V8 heap snapshot into `logDir` on SIGUSR2 (Node's --heapsnapshot-signal). */
    heapSnapshots?: boolean
  } = {},
): Promise<World> {
  const { smallCaches = false, heapSnapshots = false } = options
  const teardown: (() => Promise<unknown>)[] = []
  const stop = async () => {
    for (const step of teardown.reverse()) await step().catch((error: unknown) => log(`teardown: ${error}`))
    teardown.length = 0
  }
  try {
    const [postgres, redis, anvil, inbox, tsa, webhooks] = await Promise.all([
      startPostgresCluster(replication, join(logDir, 'haproxy-postgres.log')),
      startPrivateRedis(),
      // A loaded machine (CI shares its cores) can take far longer than anvil's usual milliseconds to answer.
      startAnvil({ blockTime: 1, readyTimeoutMs: 60_000 }),
      startSmtpInbox(),
      startOpensslTsa(),
      startWebhookReceiver(logDir),
    ])
    // Production signs PDFs with a key on a token and timestamps them at a real TSA.
    const token = createSoftHsmToken('soak')
    teardown.push(
      async () => token.remove(),
      () => tsa.close(),
    )
    const pdfKey = await provisionPdfSigningKey(token)
    teardown.push(
      () => postgres.stop(),
      () => redis.stop(),
      () => anvil.stop(),
      () => inbox.close(),
      () => webhooks.close(),
    )
    log(
      `PostgreSQL ${postgres.url} (primary and ${replication} standby behind HAProxy), Redis ${redis.url}, anvil ${anvil.rpcUrl} (--block-time 1), SMTP ${inbox.url}`,
    )
    const throttle = await startRpcProxy(anvil.rpcUrl)
    teardown.push(() => throttle.close())

    const databaseUrl = postgres.url.replace(/\/postgres$/, '/anchor')
    await createDatabase(postgres.url, 'anchor')
    const relayers = RELAYERS.map((index) => anvilAccount(index).address)
    const contract = await deployContract(anvil.rpcUrl, relayers)
    log(`DocumentAnchors ${contract}, relayers ${relayers.join(', ')}`)

    const metricsToken = randomBytes(32).toString('hex')
    const ports = await Promise.all(Array.from({ length: INSTANCES }, () => freePort()))
    const env = (port: number): Record<string, string> => ({
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      PUBLIC_URL: 'https://anchor.example',
      // HAProxy on loopback is the only proxy: the address it adds to X-Forwarded-For is the client's.
      TRUST_PROXY: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      RPC_URL: `${throttle.url},${anvil.rpcUrl}`,
      CONTRACT_ADDRESS: contract,
      RELAYER_PRIVATE_KEY: RELAYERS.map((index) => anvilPrivateKey(index)).join(','),
      JWT_SECRET: randomBytes(32).toString('hex'),
      // Production refuses to start without it; the soak reads each instance's memory there.
      METRICS_TOKEN: metricsToken,
      SMTP_URL: inbox.url,
      ...pdfKey.env,
      TSA_URL: tsa.url,
      TSA_TRUSTED_CERTIFICATES: tsa.caFile,
      // Webhooks to the soak's own https receiver on loopback, retried within the run's drain.
      NODE_EXTRA_CA_CERTS: webhooks.caFile,
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
      WEBHOOK_RETRY_DELAYS_SECONDS: '1,2,4,8,16',
      // The soak's users all come from 127.0.0.1 and sign many documents: the limits are not what it measures.
      PLANS: 'free:1000000',
      RELAY_PER_USER_PER_MINUTE: '100000',
      VERIFY_PER_IP_PER_MINUTE: '1000000',
      CODE_REQUESTS_PER_IP_PER_HOUR: '1000000',
      CODE_VERIFICATIONS_PER_IP_PER_HOUR: '1000000',
      ...(heapSnapshots && { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${logDir}` }),
      ...(smallCaches && {
        VERIFY_CACHE_MAX_ENTRIES: '200',
        VERIFY_RECEIPT_CACHE_MAX_ENTRIES: '500',
        VERIFY_LINK_CACHE_MAX_HASHES: '1000',
      }),
    })
    // One JWT secret for the fleet: a token from one instance is good on every other.
    const secret = randomBytes(32).toString('hex')
    const envs = ports.map((port) => ({ ...env(port), JWT_SECRET: secret }))
    const instances: ServiceInstance[] = []
    teardown.push(async () => {
      for (const instance of instances) await instance.process.stop()
    })
    // The first instance migrates the empty database alone; the others then start together.
    instances.push(await startServiceInstance('anchor1', envs[0]!, join(logDir, 'anchor1.log')))
    const others = await Promise.allSettled(
      envs.slice(1).map((e, i) => startServiceInstance(`anchor${i + 2}`, e, join(logDir, `anchor${i + 2}.log`))),
    )
    for (const started of others) if (started.status === 'fulfilled') instances.push(started.value)
    const failed = others.find((started) => started.status === 'rejected')
    if (failed) throw failed.reason
    log(`instances ${instances.map((instance) => instance.url).join(', ')}`)

    const lb: LoadBalancer = await startLoadBalancer(
      ports.map((port) => `127.0.0.1:${port}`),
      join(logDir, 'haproxy.log'),
    )
    teardown.push(() => lb.stop())
    log(`HAProxy ${lb.url} (deploy/haproxy.cfg)`)

    return {
      lbUrl: lb.url,
      instances,
      anvil,
      chain: createPublicClient({ transport: http(anvil.rpcUrl), pollingInterval: 100 }),
      contract,
      relayers,
      throttle,
      postgres,
      redis,
      inbox,
      webhooks,
      databaseUrl,
      async killInstance(index) {
        instances[index]!.process.child.kill('SIGKILL')
        await instances[index]!.process.exited
      },
      stopInstance: (index) => instances[index]!.process.stop(30_000),
      async restartInstance(index) {
        const { name } = instances[index]!
        instances[index] = await startServiceInstance(name, envs[index]!, join(logDir, `${name}.log`))
      },
      pids: () => instances.map((instance) => instance.process.child.pid!),
      metricsToken,
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
}

/** The runbook's way: `npm run deploy -- --rpc … --private-key-file … --relayer … --relayer …`, run in-process. */
async function deployContract(rpcUrl: string, relayers: Address[]): Promise<Address> {
  const dir = await mkdtemp(join(tmpdir(), 'anchor-soak-deploy-'))
  try {
    const keyFile = join(dir, 'deployer.key')
    await writeFile(keyFile, anvilPrivateKey(DEPLOYER), { mode: 0o600 })
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const output: string[] = []
    stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()))
    stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()))
    const argv = ['--rpc', rpcUrl, '--private-key-file', keyFile, ...relayers.flatMap((r) => ['--relayer', r])]
    const code = await runDeployCommand(argv, { stdin: new PassThrough(), stdout, stderr })
    const address = /^(0x[0-9a-fA-F]{40})$/m.exec(output.join(''))?.[1]
    if (code !== 0 || !address) throw new Error(`deploy failed:\n${output.join('')}`)
    return address as Address
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
