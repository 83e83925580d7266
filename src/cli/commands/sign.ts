// `anchor sign <in.pdf> -o <out.pdf> --name <name> [--email ...]`: anchors one signature through the relay and
// appends the revision with its QR code and the metadata of every signature so far.

import { rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { trustFromJwtClaims } from '../../formats/anchor-payload.ts'
import type { SignerType } from '../../formats/field-rules.ts'
import { signPdf } from '../../pdf/sign-pdf.ts'
import { type CliCommand, parseCommandArgs, readInputFile, serviceUrl, writeJson } from '../cli-context.ts'
import { CliError, EXIT, usageError } from '../cli-errors.ts'
import { activeLogin } from '../login-state.ts'
import { ServiceClient } from '../service-client.ts'

const usage = `anchor sign <in.pdf> -o <out.pdf> --name <name> [--email <address>]
            [--type individual|company] [--company <name>] [--position <title>] [--geo <lat>,<lng>]
            [--page <n>] [--x <pt>] [--y <pt>] [--size <pt>] [--service <url>] [--json]

  --email     defaults to the e-mail address of the login
  --page      page for the QR code, from 1 (default 1)
  --x, --y    lower-left corner of the QR code in points (default: bottom right, left of earlier codes)
  --size      side of the QR code in points (default 96)`

function number(name: string, value: string | undefined, check: (n: number) => boolean): number | undefined {
  if (value === undefined) return undefined
  const parsed = Number(value)
  if (value.trim() === '' || !Number.isFinite(parsed) || !check(parsed))
    throw usageError(`--${name} ${value} is not valid`)
  return parsed
}

export const signCommand: CliCommand = {
  summary: 'anchor a signature and append it to a PDF as a QR code and metadata',
  usage,
  async run(argv, context) {
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
      page: number('page', values.page, (n) => Number.isInteger(n) && n >= 1),
      x: number('x', values.x, () => true),
      y: number('y', values.y, () => true),
      size: number('size', values.size, (n) => n >= 36 && n <= 1000),
    }

    const service = serviceUrl(context, values.service)
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
          `  QR code on page ${result.stamp.page} at (${result.stamp.x}, ${result.stamp.y}), ${result.stamp.size} pt\n` +
          `  ${result.qrUrl}\n`,
      )
    }
    return 0
  },
}
