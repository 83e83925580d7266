// What the two verify benches (verify.ts, verify-hooks.ts) share: the app as they build it, the load they put on a
// target, and the messages between the measuring process and its server child.
import type { ChildProcess } from 'node:child_process'
import autocannon from 'autocannon'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { buildApp } from '../src/api/app.ts'
import type { AppInstance } from '../src/api/app-types.ts'
import { createChainClient } from '../src/chain/chain-client.ts'
import { loadConfig } from '../src/config/load-config.ts'
import type { DatabaseHandle } from '../src/db/database.ts'
import type { TestChain } from '../test/helpers/chain/anvil.ts'

export const CONNECTIONS = 100

/** The real app on `testChain` (through `rpcUrl`, a proxy's, when given), logging nothing unless given a logger. */
export function benchApp(
  database: DatabaseHandle,
  testChain: TestChain,
  env: Record<string, string> = {},
  rpcUrl = testChain.rpcUrl,
  logger = pino({ level: 'silent' }) as FastifyBaseLogger,
): Promise<AppInstance> {
  const config = loadConfig({
    JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
    LOG_LEVEL: 'silent',
    // The limiter runs on every request (its cost is measured) but never refuses one.
    VERIFY_PER_IP_PER_MINUTE: '1000000000',
    ...env,
  })
  return buildApp({
    config,
    database,
    chain: {
      client: createChainClient({ rpcUrls: [rpcUrl], chainId: testChain.chain.id, pollingIntervalMs: 20 }),
      chainId: testChain.chain.id,
      contractAddress: testChain.contract,
      relayers: [testChain.account(0)],
      publicRpcUrl: testChain.rpcUrl,
      explorerTxUrl: null,
    },
    logger,
  })
}

/** `seconds` of autocannon on `url`, with `headers` on every request; any answer but 2xx fails the bench. */
export async function load(
  url: string,
  seconds: number,
  headers: Record<string, string> = {},
): Promise<autocannon.Result> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers })
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  }
  return result
}

/** The server child's next message of `type`; rejects if the child exits first. */
export function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string } & T) => {
      if (message.type !== type) return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve(message)
    }
    const onExit = (code: number | null) => reject(new Error(`the bench server exited (${code})`))
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}
