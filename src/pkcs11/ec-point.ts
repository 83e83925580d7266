// Reads a token's secp256k1 public key: CKA_EC_PARAMS must name the curve, CKA_EC_POINT holds the point.
import type { Address, Hex } from 'viem'
import { publicKeyToAddress } from 'viem/accounts'

/** DER of the object identifier 1.3.132.0.10 (secp256k1), as CKA_EC_PARAMS carries it. */
const SECP256K1_OID_DER = '06052b8104000a'
/** An uncompressed point: 0x04, then x and y of 32 bytes each. */
const UNCOMPRESSED_POINT = /^04[0-9a-f]{128}$/

export function isSecp256k1(ecParams: string): boolean {
  return ecParams.toLowerCase() === SECP256K1_OID_DER
}

/**
 * The address of the key whose CKA_EC_POINT is `ecPoint` (hex). PKCS#11 wraps the point in a DER OCTET STRING
 * (04 41 then the 65 bytes); some libraries give the bare point, which is taken as well.
 */
export function addressOfEcPoint(ecPoint: string): Address {
  const value = ecPoint.toLowerCase()
  const point = value.startsWith('0441') && value.length === 134 ? value.slice(4) : value
  if (!UNCOMPRESSED_POINT.test(point)) throw new Error('CKA_EC_POINT is not an uncompressed secp256k1 point')
  return publicKeyToAddress(`0x${point}` as Hex)
}
