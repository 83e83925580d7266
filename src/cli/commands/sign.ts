// `anchor sign <in.pdf> -o <out.pdf> --name <name> [--email ...]`: anchors one signature through the relay and
// appends the revision with its QR code and the metadata of every signature so far.

import { rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { SignerType } from '@docanchor/client'
import { type CliRun, numberOption, parseCommandArgs, readInputFile, serviceUrl, writeJson } from '../cli-context.ts'
import { CliError, EXIT, usageError } from '../cli-errors.ts'
import { describeStamp } from '../stamp-position.ts'

export const runSign: CliRun = async (argv, context) => {
  const { values, positionals } = parseCommandArgs(argv, {
    output: { type: 'string', short: 'o' },
    name: { type: 'string' },
    email: { type: 'string' },
    type: { type: 'string' },
    company: { type: 'string' },
    position: { type: 'string' },
    geo: { type: 'string' },
    page: { type: 'string' },
    x: { type: 'string' },
    y: { type: 'string' },
    size: { type: 'string' },
    service: { type: 'string' },
    json: { type: 'boolean' },
  })
  const [input, ...extra] = positionals
  if (!input) throw usageError('which PDF? anchor sign <in.pdf> -o <out.pdf> --name <name>')
  if (extra.length > 0) throw usageError(`unexpected argument ${extra[0]}`)
  if (!values.output) throw usageError('-o <out.pdf> is required')
  if (!values.name) throw usageError('--name is required')
  const type = (values.type ?? (values.company ? 'company' : 'individual')) as SignerType
  if (type !== 'individual' && type !== 'company') throw usageError('--type is individual or company')
  let geo: { latitude: number; longitude: number } | null = null
  if (values.geo !== undefined) {
    const match = /^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$/.exec(values.geo)
    if (!match) throw usageError('--geo is <latitude>,<longitude>, e.g. 52.52,13.405')
    geo = { latitude: Number(match[1]), longitude: Number(match[2]) }
  }
  const placement = {
    page: numberOption('page', values.page, (n) => Number.isInteger(n) && n >= 1),
    x: numberOption('x', values.x, () => true),
    y: numberOption('y', values.y, () => true),
    size: numberOption('size', values.size, (n) => n >= 36 && n <= 1000),
  }

  const service = serviceUrl(context, values.service)
  // Only now, with the arguments known to be good: the PDF signer and the API client are most of the command's load.
  const [{ signPdf, trustFromJwtClaims }, { activeLogin }, { ServiceClient }] = await Promise.all([
    import('@docanchor/client'),
    import('../login-state.ts'),
    import('../service-client.ts'),
  ])
  const login = await activeLogin(context.config, service)
  const email = values.email ?? login.email
  if (!email) throw usageError('--email is required')
  const bytes = await readInputFile(input)
  const client = new ServiceClient(service, login.token, { fetch: context.fetch })
  const info = await client.info()

  const result = await signPdf(bytes, {
    signer: {
      type,
      name: values.name,
      email,
      company: values.company ?? null,
      position: values.position ?? null,
      ...trustFromJwtClaims({ trust: login.trust, verified: login.verified }),
    },
    geo,
    placement,
    verifyBaseUrl: info.verifyBaseUrl,
    chainId: info.chainId,
    contractAddress: info.contractAddress,
    anchor: (request) => client.relay(request),
  })

  // Written beside the target and renamed, so a failure never leaves half a PDF (and -o may be the input).
  const temp = join(dirname(values.output), `.${Date.now()}-${process.pid}.anchor.tmp`)
  try {
    await writeFile(temp, result.bytes)
    await rename(temp, values.output)
  } catch (error) {
    await rm(temp, { force: true })
    throw new CliError(
      `the signature is anchored (transaction ${result.signature.tx_hash}) but ${values.output} could not be written: ${(error as NodeJS.ErrnoException).code}`,
      EXIT.failed,
      'OUTPUT_UNWRITABLE',
    )
  }
  const position = result.signatures.length
  if (values.json) {
    writeJson(context.io, {
      output: values.output,
      position,
      txHash: result.signature.tx_hash,
      compositeHash: result.signature.composite_hash,
      documentHash: result.signature.doc_hash,
      qrUrl: result.qrUrl,
      stamp: result.stamp,
      signature: result.signature,
    })
  } else {
    context.io.stdout.write(
      `Signed ${input} -> ${values.output} (signature ${position}, by ${result.signature.signer_name})\n` +
        `  transaction ${result.signature.tx_hash}\n` +
        `  QR code on ${describeStamp(result.stamp)}\n` +
        `  ${result.qrUrl}\n`,
    )
  }
  return 0
}
