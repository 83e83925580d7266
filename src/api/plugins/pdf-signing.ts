// The service's signer CA for the app's lifetime (src/pdf-signing/): opened from the configuration when the app is
// built, so a key or certificate that cannot certify stops the start; its token process closed with the app.
import fp from 'fastify-plugin'
import { openSignerAuthority } from '../../pdf-signing/open-signer-authority.ts'
import { createPdfSigningMetrics, type PdfSigningMetrics } from '../../pdf-signing/pdf-signing-metrics.ts'
import type { SignerAuthority } from '../../pdf-signing/signer-authority.ts'
import type { AppInstance } from '../app-types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    signerAuthority: SignerAuthority
    pdfSigningMetrics: PdfSigningMetrics
  }
}

export const pdfSigningPlugin = fp(
  async (app: AppInstance) => {
    const { config, metrics } = app.deps
    const pdfMetrics = createPdfSigningMetrics(metrics.registry)
    const log = app.log.child({ component: 'pdf-signing' })
    const opened = await openSignerAuthority(config, {
      onAttempt: (url, outcome, reason) => {
        const authority = new URL(url).host
        pdfMetrics.timestampRequests.inc({ authority, outcome })
        if (outcome === 'failed') log.warn({ authority, reason }, 'a time-stamping authority failed')
      },
      onKeyHealth: (up, reason) => {
        pdfMetrics.keyUp.set(up ? 1 : 0)
        log[up ? 'info' : 'error']({ reason }, up ? 'the signer CA key signs again' : 'the signer CA key is down')
      },
    })
    pdfMetrics.keyUp.set(1)
    pdfMetrics.certificateExpiry.set(Math.floor(opened.notAfter.getTime() / 1000))
    app.decorate('signerAuthority', opened.authority)
    app.decorate('pdfSigningMetrics', pdfMetrics)
    app.addHook('onClose', async () => opened.close())
  },
  { name: 'pdf-signing' },
)
