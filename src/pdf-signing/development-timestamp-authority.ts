// The embedded default's time-stamping authority, in-process: RFC 3161 tokens signed with the development TSA
// certificate (development-certificates.ts). Production configures real authorities (TSA_URL); this one exists so
// that `npm start` makes B-T signatures without any network.

import { buildSignedData, CMS_OID, type CmsSigner, commonName, contentInfoDer } from '@docanchor/client'
import { Integer, OctetString } from 'asn1js'
import { AlgorithmIdentifier, MessageImprint, TSTInfo } from 'pkijs'
import { serialNumber } from './issue-certificate.ts'
import type { TimestampAuthority } from './timestamp-authority.ts'

/** The policy the development TSA states: an arc of 2.999, which ITU-T reserves for examples. */
const DEVELOPMENT_POLICY = '2.999.3161.1'

export function developmentTimestampAuthority(signer: CmsSigner): TimestampAuthority {
  const authority = commonName(signer.certificates[0]!)
  return {
    // The development CA, which certified the TSA.
    roots: signer.certificates.slice(-1),
    issuedByService: signer.certificates.slice(0, 1),
    async timestamp(imprint) {
      const time = new Date()
      const info = new TSTInfo({
        version: 1,
        policy: DEVELOPMENT_POLICY,
        messageImprint: new MessageImprint({
          hashAlgorithm: new AlgorithmIdentifier({ algorithmId: CMS_OID.sha256 }),
          hashedMessage: new OctetString({ valueHex: new Uint8Array(imprint).buffer }),
        }),
        // Minimal DER, as a certificate's serial: a leading zero byte (1 token in 256 before) is a malformed INTEGER
        // to BouncyCastle, and iText refused the file.
        serialNumber: new Integer({ valueHex: serialNumber() }),
        genTime: time,
      })
      const content = new Uint8Array(info.toSchema().toBER(false))
      const signedData = await buildSignedData({
        signer,
        contentType: CMS_OID.tstInfo,
        messageDigest: new Uint8Array(await crypto.subtle.digest('SHA-256', content)),
        content,
      })
      return { der: contentInfoDer(signedData), time, authority }
    },
  }
}
