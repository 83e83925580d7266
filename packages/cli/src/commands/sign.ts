// `anchor sign <in.pdf> -o <out.pdf> --name <name> [--email ...]`: anchors one signature through the relay and
// appends the revision with its QR code and the metadata of every signature so far. Everything that can fail (the
// arguments, the login, the password, the file, the output, the stamp's place) fails before the anchor is paid for.

import type { SignerType } from '@docanchor/client'
import {
  type CliRun,
  loginServiceUrl,
  numberOption,
  parseCommandArgs,
  readInputFile,
  writeJson,
  writeLines,
} from '../cli-context.ts'
import { CliError, EXIT, usageError } from '../cli-errors.ts'
import { displayTime } from '../display-time.ts'
import { refuseToReplace, reserveOutput } from '../output-file.ts'
import { PASSWORD_FILE_OPTION, readPasswordFile, refusePasswordOnCommandLine, wrongPassword } from '../pdf-password.ts'
import { earlierSigning, recordSignedFile, sha256Hex } from '../signed-files.ts'
import { describeStamp } from '../stamp-position.ts'

export const runSign: CliRun = async (argv, context) => {
  refusePasswordOnCommandLine(argv)
  const { values, positionals } = parseCommandArgs(argv, {
    output: { type: 'string', short: 'o' },
    name: { type: 'string' },
    email: { type: 'string' },
    unattested: { type: 'boolean' },
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
    force: { type: 'boolean' },
    again: { type: 'boolean' },
    level: { type: 'string' },
    ...PASSWORD_FILE_OPTION,
  })
  const [input, ...extra] = positionals
  if (!input) throw usageError('which PDF? anchor sign <in.pdf> -o <out.pdf> --name <name>')
  if (extra.length > 0) throw usageError(`unexpected argument ${extra[0]}`)
  if (!values.output) throw usageError('-o <out.pdf> is required')
  if (!values.name) throw usageError('--name is required')
  const level = values.level ?? 'B-LTA'
  if (level !== 'B-LTA' && level !== 'B-T') throw usageError('--level is B-LTA (the default) or B-T')
  const type = (values.type ?? (values.company ? 'company' : 'individual')) as SignerType
  if (type !== 'individual' && type !== 'company') throw usageError('--type is individual or company')
  let geo: { latitude: number; longitude: number } | null = null
  if (values.geo !== undefined) {
    const match = /^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$/.exec(values.geo)
    if (!match) throw usageError('--geo is <latitude>,<longitude>, e.g. 52.52,13.405')
    geo = { latitude: Number(match[1]), longitude: Number(match[2]) }
  }
  const service = await loginServiceUrl(context, values.service)
  // Only now, with the arguments known to be good: the PDF signer and the API client are most of the command's load.
  const [
    { anchoredSignatureCms, MAX_PDF_BYTES, MAX_STAMP_SIZE, MIN_STAMP_SIZE, signPdf, trustFromJwtClaims },
    { activeLogin },
    { ServiceClient },
    { signerIdentity },
  ] = await Promise.all([
    import('@docanchor/client'),
    import('../login-state.ts'),
    import('../service-client.ts'),
    import('../signer-identity.ts'),
  ])
  const points = 'a number of points from the lower-left corner of the page as displayed'
  const placement = {
    page: numberOption('page', values.page, (n) => Number.isInteger(n) && n >= 1, 'a page number: 1, 2, …'),
    x: numberOption('x', values.x, () => true, points),
    y: numberOption('y', values.y, () => true, points),
    size: numberOption(
      'size',
      values.size,
      (n) => n >= MIN_STAMP_SIZE && n <= MAX_STAMP_SIZE,
      `a number of points from ${MIN_STAMP_SIZE} to ${MAX_STAMP_SIZE}`,
    ),
  }

  const login = await activeLogin(context.config, service)
  const email = signerEmail(values.email, login.email, values.unattested ?? false)
  const password = await readPasswordFile(values['password-file'], context.io)
  const bytes = await readInputFile(input, MAX_PDF_BYTES)
  const inputSha256 = sha256Hex(bytes)
  await refuseToReplace(input, values.output, { force: values.force ?? false, unwritten: 'nothing was signed' })
  const account = login.email ?? ''
  if (!values.again) await refuseToSignAgain(context.config.configDir, { service, account, inputSha256 }, input)
  const output = await reserveOutput(values.output, { unwritten: 'nothing was signed' })
  try {
    const client = new ServiceClient(service, login.token, { fetch: context.fetch })
    const info = await client.info()
    // Certified before anything is anchored: a refusal (an unverified e-mail) spends nothing.
    const signer = await signerIdentity(context.config.configDir, client, login.email)
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
      password,
      attestIdentity: !values.unattested,
      verifyBaseUrl: info.verifyBaseUrl,
      chainId: info.chainId,
      contractAddress: info.contractAddress,
      anchor: (request) => client.relay(request),
      pdfSignature: async (request) =>
        client.pdfSignature(request.txHash, await anchoredSignatureCms(signer, request)).catch((error: unknown) => {
          throw new CliError(
            `the signature is anchored (transaction ${request.txHash}) but the service did not timestamp its PDF signature: ` +
              `${(error as Error).message}; nothing was written`,
            EXIT.service,
            'PDF_SIGNATURE_FAILED',
          )
        }),
      // PAdES B-LTA: validation data and a document timestamp, so the file verifies after its certificates expire.
      longTermValidation: level === 'B-LTA' ? client.longTermValidation(info) : undefined,
    }).catch((error: unknown) => {
      throw wrongPassword(error, password, input)
    })
    try {
      await output.write(result.bytes)
    } catch (error) {
      throw new CliError(
        `the signature is anchored (transaction ${result.signature.tx_hash}) but ${values.output} could not be written: ${(error as NodeJS.ErrnoException).code}`,
        EXIT.failed,
        'OUTPUT_UNWRITABLE',
      )
    }
    const recorded = await recordSignedFile(context.config.configDir, {
      service,
      account,
      txHash: result.signature.tx_hash,
      inputSha256,
      input,
      output: values.output,
      signedAt: new Date().toISOString(),
    }).then(
      () => [],
      (error: unknown) => [
        `not added to this computer's list of signed files: ${(error as NodeJS.ErrnoException).code}`,
      ],
    )
    report(context, input, values.output, result, values.json ?? false, recorded)
  } finally {
    await output.release()
  }
  return 0
}

/**
 * The same bytes signed through the same service before (as this computer's record says) would be a second anchor and
 * a second unit of quota for one document: said before anything is spent, and done only with --again.
 */
async function refuseToSignAgain(configDir: string, signing: Parameters<typeof earlierSigning>[1], input: string) {
  const earlier = await earlierSigning(configDir, signing)
  if (!earlier) return
  throw new CliError(
    `you already signed this same file (${input}) on ${displayTime(earlier.signedAt)}, writing ${earlier.output} ` +
      `(transaction ${earlier.txHash}); signing it again anchors a second signature and spends another unit of your ` +
      `quota. To countersign, sign the signed file instead; to sign this one again anyway, add --again`,
    EXIT.input,
    'ALREADY_SIGNED',
  )
}

/**
 * The e-mail address the signature states. The service attests the account that relays it, so another address
 * would be shown by every verifier as a mismatch: refused, unless the signer asks for no attestation at all.
 */
function signerEmail(flag: string | undefined, account: string | undefined, unattested: boolean): string {
  if (flag === undefined) {
    if (!account) throw usageError('--email is required: the login names no e-mail address')
    return account
  }
  if (account !== undefined && !unattested && flag.trim().toLowerCase() !== account.toLowerCase()) {
    throw new CliError(
      `--email ${flag} is not the address you are logged in with (${account}): the service attests ${account}, so ` +
        `every verifier would show this signature's identity as a MISMATCH. Leave --email out, or add --unattested ` +
        `to sign as ${flag} without the service's attestation (verifiers then show the identity as claimed)`,
      EXIT.input,
      'EMAIL_NOT_ACCOUNT',
    )
  }
  return flag
}

type SignResult = Awaited<ReturnType<typeof import('@docanchor/client').signPdf>>

function report(
  context: Parameters<CliRun>[1],
  input: string,
  output: string,
  result: SignResult,
  json: boolean,
  localWarnings: string[],
) {
  const position = result.signatures.length
  const warnings = [...result.warnings, ...localWarnings]
  if (json) {
    writeJson(context.io, {
      output,
      position,
      txHash: result.signature.tx_hash,
      compositeHash: result.signature.composite_hash,
      documentHash: result.signature.doc_hash,
      qrUrl: result.qrUrl,
      stamp: result.stamp,
      signature: result.signature,
      warnings,
    })
  } else {
    writeLines(context.io.stdout, [
      `Signed ${input} -> ${output} (signature ${position}, by ${result.signature.signer_name})`,
      `  transaction ${result.signature.tx_hash}`,
      `  QR code on ${describeStamp(result.stamp)}`,
      `  ${result.qrUrl}`,
      ...warnings.map((warning) => `  warning: ${warning}`),
    ])
  }
}
