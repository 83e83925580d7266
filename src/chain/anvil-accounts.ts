// The development accounts every fresh anvil chain funds, derived from anvil's default mnemonic. Their keys are
// public knowledge: fit for the embedded development chain and tests, never for a real one.
import { pbkdf2Sync } from 'node:crypto'
import { bytesToHex, type Hex } from 'viem'
import { HDKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'

export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'
/** anvil funds this many accounts (10,000 ETH each) unless told otherwise. */
export const ANVIL_ACCOUNT_COUNT = 10

const keys = new Map<number, Hex>()
const accounts = new Map<number, PrivateKeyAccount>()
let parentKey: HDKey | undefined

/**
 * BIP-39's seed of a mnemonic without passphrase: 2,048 rounds of PBKDF2-HMAC-SHA512, run by Node's native crypto.
 * viem's mnemonicToAccount runs the same rounds in JavaScript, which cost every embedded start ~150 ms on the 2-core
 * machine (against ~5 ms).
 */
function mnemonicSeed(mnemonic: string): Uint8Array {
  return pbkdf2Sync(mnemonic.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512')
}

export function anvilPrivateKey(index: number): Hex {
  if (!Number.isInteger(index) || index < 0 || index >= ANVIL_ACCOUNT_COUNT) {
    throw new Error(`anvil funds accounts 0 to ${ANVIL_ACCOUNT_COUNT - 1}, not ${index}`)
  }
  let key = keys.get(index)
  if (!key) {
    // The mnemonic's seed (2,048 rounds of PBKDF2) is computed once; each account is then one cheap child derivation
    // below m/44'/60'/0'/0, anvil's default path.
    parentKey ??= HDKey.fromMasterSeed(mnemonicSeed(ANVIL_MNEMONIC)).derive("m/44'/60'/0'/0")
    const { privateKey } = parentKey.deriveChild(index)
    if (!privateKey) throw new Error(`could not derive anvil account ${index}`)
    key = bytesToHex(privateKey)
    keys.set(index, key)
  }
  return key
}

export function anvilAccount(index: number): PrivateKeyAccount {
  let account = accounts.get(index)
  if (!account) {
    account = privateKeyToAccount(anvilPrivateKey(index))
    accounts.set(index, account)
  }
  return account
}
