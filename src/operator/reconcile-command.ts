// `npm run admin -- reconcile`: the relayer's reconciliation with the chain (src/relayer/actions/reconcile.ts), run by
// an operator with the fleet stopped, to see what the database forgot (after a restore) before starting it again, or
// to check that it knows everything the relayer keys did. Instances also run it by themselves at start and after a
// failover.
import type { ReconcileReport } from '../relayer/actions/reconcile.ts'

export const reconcileUsage = `usage: admin reconcile

Looks up every DocumentAnchored event of the relayer keys since the last mined anchor the database knows, records
those the database forgot (without their ciphertext, which only the lost rows held), and raises each key's nonce row
past every nonce the chain consumed. Uses the service's settings: DATABASE_URL, RPC_URL, CONTRACT_ADDRESS and the
relayer keys (RELAYER_PRIVATE_KEY or the PKCS#11 token). Run it with the instances stopped: they reconcile by
themselves when they start.`

export interface ReconcileIo {
  stdout: NodeJS.WritableStream
  open(): Promise<{ reconcile(): Promise<ReconcileReport>; close(): Promise<void> }>
}

export async function runReconcileCommand(io: ReconcileIo): Promise<number> {
  const target = await io.open()
  try {
    io.stdout.write(`${describeReport(await target.reconcile())}\n`)
    return 0
  } finally {
    await target.close()
  }
}

function describeReport(report: ReconcileReport): string {
  const lines = [
    `blocks ${report.fromBlock}–${report.toBlock}: ${report.events} anchors of the relayer keys on chain`,
    `recovered ${report.recovered} (unknown to the database: recorded without ciphertext or owner)`,
    `adopted ${report.adopted} (an anchor of the database re-attached to the transaction the chain mined)`,
  ]
  if (report.doubled > 0) {
    lines.push(`ALERT ${report.doubled} composite hashes anchored twice by the relayer keys (see the log)`)
  }
  for (const raised of report.raised) {
    lines.push(`nonce row of ${raised.relayer} raised from ${raised.from} to ${raised.to}`)
  }
  for (const { relayer, until } of report.unmined) {
    lines.push(`transactions of ${relayer} still in the node's pool: run it again once its nonce reaches ${until}`)
  }
  return lines.join('\n')
}
