// What a verifier needs to check anchors against the chain without trusting this service.
import { z } from 'zod'
import { certificatePem } from '../../pdf-signing/certificates.ts'
import { statusUrlsOf } from '../../pdf-signing/signer-certificate.ts'
import { SERVICE_VERSION } from '../../version.ts'
import type { AppInstance } from '../app-types.ts'
import { READ_ONLY_RPC_PATH } from './public-rpc.ts'

const InfoSchema = z.object({
  chainId: z.number().int(),
  contractAddress: z.string(),
  relayers: z.array(z.string()),
  publicRpcUrl: z.string().nullable(),
  explorerTxUrl: z.string().nullable(),
  verifyBaseUrl: z.string(),
  pdfSigning: z
    .object({
      certificates: z
        .array(z.string())
        .describe('PEM: the CA that certifies signers first, then its chain up to the root'),
      ocspUrl: z.string().describe('The CA’s OCSP responder (RFC 6960), named in every signer certificate'),
      crlUrl: z.string().describe('The CA’s revocation list (DER), named in every signer certificate'),
      timestampCertificates: z
        .array(z.string())
        .describe(
          'PEM: the roots the time-stamping authorities’ tokens chain to, for verifiers to trust for timestamps',
        ),
    })
    .describe('The CA whose certificates name the signers of PDF signatures (PAdES), for verifiers to trust or pin'),
  version: z.string(),
})

export async function infoRoutes(app: AppInstance): Promise<void> {
  const { chain, config } = app.deps
  // Computed once: none of it changes while the process runs.
  const info: z.infer<typeof InfoSchema> = {
    chainId: chain.chainId,
    contractAddress: chain.contractAddress.toLowerCase(),
    relayers: chain.relayers.map((account) => account.address.toLowerCase()),
    // The embedded chain is read through the service's own read-only route, never at anvil's port.
    publicRpcUrl:
      chain.publicRpcUrl ?? (chain.embeddedRpcUrl === undefined ? null : `${config.publicUrl}${READ_ONLY_RPC_PATH}`),
    explorerTxUrl: chain.explorerTxUrl,
    verifyBaseUrl: config.verifyBaseUrl,
    pdfSigning: {
      certificates: app.signerAuthority.certificates.map(certificatePem),
      ocspUrl: statusUrlsOf(config.publicUrl).ocsp,
      crlUrl: statusUrlsOf(config.publicUrl).crl,
      timestampCertificates: app.signerAuthority.timestampRoots.map(certificatePem),
    },
    version: SERVICE_VERSION,
  }
  app.get('/api/info', { schema: { tags: ['verify'], response: { 200: InfoSchema } } }, async () => info)
}
