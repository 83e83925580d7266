// What the CA signs (a signer's certificate, its revocation list, an OCSP response) is signed the same way: SHA-256
// with the CA key's algorithm, over the structure's to-be-signed DER, by whatever holds the key (WebCrypto for the
// embedded default, the PKCS#11 token in production).
import { CMS_OID, type CmsSigner } from '@docanchor/client'
import { BitString } from 'asn1js'
import { AlgorithmIdentifier } from 'pkijs'

export function caSignatureAlgorithm(ca: CmsSigner): AlgorithmIdentifier {
  return new AlgorithmIdentifier({
    algorithmId: ca.key.keyType === 'ec' ? CMS_OID.ecdsaWithSha256 : CMS_OID.sha256WithRsa,
  })
}

/** The signature over `tbs`, as an X.509, CRL or OCSP structure carries it. */
export async function caSignatureValue(ca: CmsSigner, tbs: Uint8Array): Promise<BitString> {
  return new BitString({ valueHex: (await ca.key.sign(tbs)).slice().buffer })
}
