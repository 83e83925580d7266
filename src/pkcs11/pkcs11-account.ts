// A relayer account whose key stays on a PKCS#11 token: a viem custom account, so the relayer signs through it as it
// does through a local key. The token signs the 32-byte hash with CKM_ECDSA and returns r‖s; Ethereum wants the low
// `s` form and the recovery id, which this module derives (the recovery id by recovering against the token's key).
import {
  type Address,
  type Hex,
  hashMessage,
  hashTypedData,
  keccak256,
  recoverAddress,
  type Signature,
  serializeSignature,
  serializeTransaction,
} from 'viem'
import { type LocalAccount, toAccount } from 'viem/accounts'
import { addressOfEcPoint } from './ec-point.ts'

/** The order of secp256k1's group. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

export interface HashSigner {
  /** r‖s over a 32-byte hash (hex without 0x), as the token returns it. */
  sign(hash: string): Promise<string>
}

export function pkcs11Account(signer: HashSigner, ecPoint: string): LocalAccount {
  const address = addressOfEcPoint(ecPoint)
  const signHash = (hash: Hex) => recoverableSignature(signer, hash, address)
  return toAccount({
    address,
    async signMessage({ message }) {
      return serializeSignature(await signHash(hashMessage(message)))
    },
    async signTypedData(typedData) {
      return serializeSignature(await signHash(hashTypedData(typedData)))
    },
    async signTransaction(transaction, options) {
      const serializer = options?.serializer ?? serializeTransaction
      const signature = await signHash(keccak256(await serializer(transaction)))
      return serializer(transaction, signature)
    },
  })
}

/** The token's signature in Ethereum's form: low `s`, and the recovery id that yields `address`. */
async function recoverableSignature(signer: HashSigner, hash: Hex, address: Address): Promise<Signature> {
  const raw = await signer.sign(hash.slice(2))
  if (!/^[0-9a-f]{128}$/i.test(raw)) throw new Error('the token returned a signature that is not 64 bytes')
  const r = BigInt(`0x${raw.slice(0, 64)}`)
  let s = BigInt(`0x${raw.slice(64)}`)
  // (r, s) and (r, n - s) are both valid; Ethereum accepts only the lower s (EIP-2).
  if (s > CURVE_ORDER / 2n) s = CURVE_ORDER - s
  const toHex = (value: bigint) => `0x${value.toString(16).padStart(64, '0')}` as Hex
  for (const yParity of [0, 1]) {
    const signature = { r: toHex(r), s: toHex(s), yParity }
    const recovered = await recoverAddress({ hash, signature })
    if (recovered.toLowerCase() === address.toLowerCase()) return signature
  }
  throw new Error('the token signature does not recover to the token key: wrong key or mechanism')
}
