// Which relayer keys can sign now. A key on a token whose call failed or timed out is down until it answers a probe;
// the relayer pool gives it no new work meanwhile. Every change is logged and shown as `relayer_signer_up`.
import { Gauge, type Registry } from 'prom-client'

/** Where a token's going down and coming back is said (the service's logger). */
interface HealthLogger {
  warn(object: object, message: string): void
  info(object: object, message: string): void
}

export class SignerHealth {
  private readonly down = new Set<string>()
  private gauge: Gauge<'relayer'> | undefined

  constructor(
    private readonly addresses: readonly string[],
    private readonly log: HealthLogger,
  ) {}

  isUp(address: string): boolean {
    return !this.down.has(address.toLowerCase())
  }

  /** `reason` is the token call's error (a CKR_ name, a timeout); it never carries the PIN. */
  report(address: string, keyLabel: string, up: boolean, reason: string): void {
    const relayer = address.toLowerCase()
    if (up) {
      this.down.delete(relayer)
      this.log.info({ relayer, keyLabel }, 'relayer key signs again: back in rotation')
    } else {
      this.down.add(relayer)
      this.log.warn({ relayer, keyLabel, reason }, 'ALERT relayer key failed a token call: out of rotation')
    }
    this.gauge?.set({ relayer }, up ? 1 : 0)
  }

  /** Shows the keys' state in `registry` from now on. */
  register(registry: Registry): void {
    this.gauge = new Gauge({
      name: 'relayer_signer_up',
      help: 'Whether each relayer key can sign (1) or is out of rotation after a failed or timed-out token call (0)',
      labelNames: ['relayer'],
      registers: [registry],
    })
    for (const address of this.addresses) this.gauge.set({ relayer: address }, this.isUp(address) ? 1 : 0)
  }
}
