// A signer certificate of the service's CA for a fresh key of the user's, as `anchor sign` asks for one, through the
// app's own route.
import { certificationRequest, makeSignerKey } from '@docanchor/client'
import { expect } from 'vitest'
import type { AppInstance } from '../../../src/api/app-types.ts'

export interface IssuedSignerCertificate {
  certificate: string
  serialNumber: string
  notAfter: string
}

export async function issueSignerCertificate(
  app: AppInstance,
  headers: Record<string, string>,
): Promise<IssuedSignerCertificate> {
  const csr = Buffer.from(await certificationRequest(await makeSignerKey(), 'signer')).toString('base64')
  const issued = await app.inject({ method: 'POST', url: '/api/signer-certificates', headers, payload: { csr } })
  expect(issued.statusCode, issued.body).toBe(201)
  return issued.json()
}
