// Opens every configured key of the PKCS#11 token as a relayer account. A problem of configuration (the library, the
// token, the PIN, a label, a curve) throws ConfigError naming the variable, so the service refuses to start (exit 78).
import type { LocalAccount } from 'viem/accounts'
import type { Pkcs11Config } from '../config/chain-settings.ts'
import { ConfigError } from '../config/env-fields.ts'
import { isSecp256k1 } from './ec-point.ts'
import { pkcs11Account } from './pkcs11-account.ts'
import { Pkcs11Key, TokenCallError } from './pkcs11-key.ts'

export interface TokenRelayer {
  account: LocalAccount
  key: Pkcs11Key
}

export type TokenHealthListener = (relayer: { address: string; keyLabel: string }, up: boolean, reason: string) => void

export async function openPkcs11Relayers(
  settings: Pkcs11Config,
  onHealth: TokenHealthListener,
): Promise<TokenRelayer[]> {
  const opened: TokenRelayer[] = []
  try {
    for (const keyLabel of settings.keyLabels) {
      let address = ''
      const { key, publicKey } = await Pkcs11Key.open(
        { ...settings, keyLabel },
        { onHealth: (up, reason) => onHealth({ address, keyLabel }, up, reason) },
      ).catch((error: unknown) => {
        if (error instanceof TokenCallError && error.variable) {
          throw new ConfigError(`Invalid configuration:\n  ${error.variable}: ${error.message}`)
        }
        throw error
      })
      if (publicKey.type !== 'ec' || !isSecp256k1(publicKey.ecParams)) {
        key.close()
        throw new ConfigError(`Invalid configuration:\n  PKCS11_KEY_LABELS: the key "${keyLabel}" is not secp256k1`)
      }
      const account = pkcs11Account(key, publicKey.ecPoint)
      address = account.address.toLowerCase()
      opened.push({ account, key })
    }
  } catch (error) {
    for (const relayer of opened) relayer.key.close()
    throw error
  }
  return opened
}
