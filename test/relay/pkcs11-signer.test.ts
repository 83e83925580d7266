// The PKCS#11 signer against a real SoftHSM2 token: addresses from the token's keys, signatures the chain accepts,
// refusals that name the variable at fault, and a hung token call that takes only its own key out of rotation.
import { rmSync, writeFileSync } from 'node:fs'
import { parseTransaction, recoverMessageAddress, recoverTransactionAddress, type TransactionSerialized } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Pkcs11Config } from '../../src/config/chain-settings.ts'
import { ConfigError } from '../../src/config/env-fields.ts'
import { openPkcs11Relayers } from '../../src/pkcs11/pkcs11-relayers.ts'
import { createSoftHsmToken, SOFTHSM_MODULE, type SoftHsmToken } from '../helpers/pkcs11/softhsm.ts'

const HALF_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n / 2n

let token: SoftHsmToken
let settings: Pkcs11Config

beforeAll(() => {
  token = createSoftHsmToken()
  token.addKey('relayer-a')
  token.addKey('relayer-b')
  token.addKey('not-ethereum', 'EC:prime256v1')
  // The token library finds its store through the environment, which the token processes inherit.
  Object.assign(process.env, token.env, token.hangingModule().env)
  settings = {
    module: SOFTHSM_MODULE,
    tokenLabel: token.tokenLabel,
    pin: token.pin,
    keyLabels: ['relayer-a', 'relayer-b'],
    callTimeoutMs: 5_000,
    probeIntervalMs: 100,
  }
})
afterAll(() => token.remove())

async function configProblem(overrides: Partial<Pkcs11Config>): Promise<string> {
  const error = await openPkcs11Relayers({ ...settings, ...overrides }, () => {}).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(ConfigError)
  return (error as Error).message
}

describe('PKCS#11 signer', () => {
  it('signs transactions and messages that recover to the token key, always with low s', async () => {
    const relayers = await openPkcs11Relayers(settings, () => {})
    try {
      const [a, b] = relayers.map((relayer) => relayer.account)
      expect(a!.address).not.toBe(b!.address)
      const signed = await Promise.all(
        Array.from({ length: 16 }, (_, nonce) =>
          (nonce % 2 === 0 ? a! : b!).signTransaction({
            type: 'eip1559',
            chainId: 31337,
            to: a!.address,
            nonce,
            gas: 21_000n,
            maxFeePerGas: 2_000_000_000n,
            maxPriorityFeePerGas: 1_000_000_000n,
            value: 0n,
          }),
        ),
      )
      for (const [nonce, raw] of signed.entries()) {
        const sender = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized })
        expect(sender).toBe((nonce % 2 === 0 ? a! : b!).address)
        expect(BigInt(parseTransaction(raw).s!)).toBeLessThanOrEqual(HALF_ORDER)
      }
      const signature = await a!.signMessage({ message: 'anchor' })
      expect(await recoverMessageAddress({ message: 'anchor', signature })).toBe(a!.address)
    } finally {
      for (const relayer of relayers) relayer.key.close()
    }
  })

  it('refuses a wrong PIN naming PKCS11_PIN, without the PIN', async () => {
    const message = await configProblem({ pin: '999999' })
    expect(message).toContain('PKCS11_PIN')
    expect(message).not.toContain('999999')
  })

  it('names the variable of a missing label, an unreadable module, an unknown token and a key of another curve', async () => {
    expect(await configProblem({ keyLabels: ['relayer-a', 'nobody'] })).toMatch(/PKCS11_KEY_LABELS: .*"nobody"/)
    expect(await configProblem({ module: '/nonexistent/libpkcs11.so' })).toContain('PKCS11_MODULE')
    expect(await configProblem({ tokenLabel: 'other' })).toContain('PKCS11_TOKEN_LABEL')
    expect(await configProblem({ keyLabels: ['not-ethereum'] })).toMatch(/PKCS11_KEY_LABELS: .*not secp256k1/)
  })

  it('takes a key whose call hangs out of rotation, keeps the other signing, and brings it back', async () => {
    const hanging = token.hangingModule()
    const events: string[] = []
    const relayers = await openPkcs11Relayers(
      { ...settings, module: hanging.module, callTimeoutMs: 1_000 },
      (relayer, up) => events.push(`${relayer.keyLabel} ${up ? 'up' : 'down'}`),
    )
    try {
      const [a, b] = relayers
      const hash = 'ab'.repeat(32)
      writeFileSync(hanging.flagFile, 'relayer-a')
      const [hung, other] = await Promise.allSettled([a!.key.sign(hash), b!.key.sign(hash)])
      expect(hung).toMatchObject({
        status: 'rejected',
        reason: { message: expect.stringMatching(/did not answer sign/) },
      })
      expect(other).toMatchObject({ status: 'fulfilled', value: expect.stringMatching(/^[0-9a-f]{128}$/) })
      expect(a!.key.up).toBe(false)
      expect(b!.key.up).toBe(true)
      expect(events).toEqual(['relayer-a down'])
      rmSync(hanging.flagFile)
      await expect.poll(() => a!.key.up, { timeout: 20_000 }).toBe(true)
      expect(events).toEqual(['relayer-a down', 'relayer-a up'])
      expect(await a!.key.sign(hash)).toMatch(/^[0-9a-f]{128}$/)
    } finally {
      for (const relayer of relayers) relayer.key.close()
    }
  })
})
