// The relayer and its monitor for the app's lifetime: built from the app's dependencies, started when the app is
// ready, stopped before it closes. Decorated on the app, so the relay route and tests reach the same instances.
import fp from 'fastify-plugin'
import { createRelayContext, relayerSettingsOf } from '../../relayer/create-relay-context.ts'
import { RelayMonitor } from '../../relayer/monitor.ts'
import type { RelayContext } from '../../relayer/relay-context.ts'
import { createRelayMetrics, type RelayMetrics } from '../../relayer/relay-metrics.ts'
import type { AppInstance } from '../app-types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The relayer's context: what every relayer action (src/relayer/actions/, relay.ts) works with. */
    relayer: RelayContext
    relayMonitor: RelayMonitor
    relayMetrics: RelayMetrics
  }
}

export const relayerPlugin = fp(
  async (app: AppInstance) => {
    const { config, database, chain, metrics } = app.deps
    const relayMetrics = createRelayMetrics(metrics.registry)
    chain.signerHealth?.register(metrics.registry)
    const relayer = createRelayContext({
      db: database.db,
      chain,
      ...relayerSettingsOf(config),
      log: app.log.child({ component: 'relayer' }),
      onBalance: (address, ether) => relayMetrics.balance.set({ relayer: address }, ether),
      onAnchorFailed: (reason) => relayMetrics.failedOnChain.inc({ reason }),
      onContractMissing: (missing) => relayMetrics.contractMissing.set(missing ? 1 : 0),
      onReconciled: (kind) => relayMetrics.reconciled.inc({ kind }),
    })
    if (database.kind === 'postgres') {
      database.history.onChange((change) => {
        relayer.log.warn(change, 'the database failed over (another timeline or cluster): reconciling with the chain')
        relayer.reconciliation.require('database failover')
      })
    }
    const monitor = new RelayMonitor(relayer, {
      intervalMs: config.relay.monitorIntervalMs,
      onPending: (count) => relayMetrics.pending.set(count),
    })
    app.decorate('relayer', relayer)
    app.decorate('relayMonitor', monitor)
    app.decorate('relayMetrics', relayMetrics)
    app.addHook('onReady', async () => monitor.start())
    app.addHook('preClose', async () => {
      // Requests still waiting for receipts answer 202 at once; the monitor finishes their anchors later.
      relayer.watcher.stop()
      await monitor.stop()
    })
  },
  { name: 'relayer' },
)
