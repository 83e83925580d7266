// The anchor a PDF signature belongs to, as a signed attribute of its CMS: chain id, contract, transaction hash and
// composite hash. Signed with the signer's key, it ties the PDF signature to one anchor without trusting /Reason or
// /Name, which any client writes. Its identifier is below this project's arc (signer-profile.ts).
//
//   AnchorReference ::= SEQUENCE {
//     chainId        INTEGER,
//     contract       OCTET STRING (SIZE (20)),
//     txHash         OCTET STRING (SIZE (32)),
//     compositeHash  OCTET STRING (SIZE (32)) }
import { Integer, OctetString, Sequence } from 'asn1js'
import { Attribute, type SignerInfo } from 'pkijs'
import { fromHex, toHex } from '../formats/hex.ts'
import { buffer } from './cms/der.ts'
import { ANCHOR_ATTRIBUTE_OID } from './signer-profile.ts'

export interface AnchorReference {
  chainId: number
  /** `0x` + 40 hex digits, lower case. */
  contract: string
  /** `0x` + 64 hex digits, lower case. */
  txHash: string
  /** `0x` + 64 hex digits, lower case. */
  compositeHash: string
}

const strip = (hex: string) => hex.replace(/^0x/i, '').toLowerCase()

export function anchorAttribute(reference: AnchorReference): Attribute {
  const octets = (hex: string, length: number) => {
    const bytes = fromHex(strip(hex))
    if (bytes.length !== length) throw new Error(`expected ${length} bytes, found ${bytes.length}`)
    return new OctetString({ valueHex: buffer(bytes) })
  }
  return new Attribute({
    type: ANCHOR_ATTRIBUTE_OID,
    values: [
      new Sequence({
        value: [
          new Integer({ value: reference.chainId }),
          octets(reference.contract, 20),
          octets(reference.txHash, 32),
          octets(reference.compositeHash, 32),
        ],
      }),
    ],
  })
}

/** The anchor a signer's signed attributes name; null when they name none or not in this form. */
export function readAnchorAttribute(signerInfo: SignerInfo): AnchorReference | null {
  const attribute = signerInfo.signedAttrs?.attributes.find((candidate) => candidate.type === ANCHOR_ATTRIBUTE_OID)
  if (attribute?.values.length !== 1) return null
  const value = attribute.values[0]
  if (!(value instanceof Sequence) || value.valueBlock.value.length !== 4) return null
  const [chainId, contract, txHash, compositeHash] = value.valueBlock.value
  const hex = (item: unknown, length: number) =>
    item instanceof OctetString && item.valueBlock.valueHexView.length === length
      ? `0x${toHex(new Uint8Array(item.valueBlock.valueHexView))}`
      : null
  if (!(chainId instanceof Integer)) return null
  const fields = { contract: hex(contract, 20), txHash: hex(txHash, 32), compositeHash: hex(compositeHash, 32) }
  if (fields.contract === null || fields.txHash === null || fields.compositeHash === null) return null
  const chain = chainId.valueBlock.valueDec
  if (!Number.isSafeInteger(chain) || chain <= 0) return null
  return { chainId: chain, contract: fields.contract, txHash: fields.txHash, compositeHash: fields.compositeHash }
}
