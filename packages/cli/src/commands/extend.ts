// `anchor extend <signed.pdf> -o <out.pdf>`: renews a signed file's long-term validation (PAdES B-LTA). It appends
// the validation data of every signature and timestamp in it (certificates, OCSP responses, CRLs), then a document
// timestamp from the service's authority, then that timestamp's validation data. Run it before the newest
// timestamp's certificate expires, and the file keeps verifying offline for as long as it is renewed.

import { type CliRun, loginServiceUrl, parseCommandArgs, readInputFile, writeJson, writeLines } from '../cli-context.ts'
import { CliError, EXIT, usageError } from '../cli-errors.ts'
import { refuseToReplace, reserveOutput } from '../output-file.ts'
import { PASSWORD_FILE_OPTION, readPasswordFile, refusePasswordOnCommandLine, wrongPassword } from '../pdf-password.ts'

export const runExtend: CliRun = async (argv, context) => {
  refusePasswordOnCommandLine(argv)
  const { values, positionals } = parseCommandArgs(argv, {
    output: { type: 'string', short: 'o' },
    service: { type: 'string' },
    json: { type: 'boolean' },
    force: { type: 'boolean' },
    ...PASSWORD_FILE_OPTION,
  })
  const [input, ...extra] = positionals
  if (!input) throw usageError('which PDF? anchor extend <signed.pdf> -o <out.pdf>')
  if (extra.length > 0) throw usageError(`unexpected argument ${extra[0]}`)
  if (!values.output) throw usageError('-o <out.pdf> is required')
  const service = await loginServiceUrl(context, values.service)
  const [{ addLongTermValidation, MAX_PDF_BYTES, readSignedPdf }, { activeLogin }, { ServiceClient }] =
    await Promise.all([import('@docanchor/client'), import('../login-state.ts'), import('../service-client.ts')])
  const login = await activeLogin(context.config, service)
  const password = await readPasswordFile(values['password-file'], context.io)
  const bytes = await readInputFile(input, MAX_PDF_BYTES)
  await refuseToReplace(input, values.output, { force: values.force ?? false, unwritten: 'nothing was extended' })
  const output = await reserveOutput(values.output, { unwritten: 'nothing was extended' })
  try {
    const client = new ServiceClient(service, login.token, { fetch: context.fetch })
    const info = await client.info()
    const result = await addLongTermValidation(bytes, { ...client.longTermValidation(info), password }).catch(
      (error: unknown) => {
        throw wrongPassword(error, password, input)
      },
    )
    try {
      await output.write(result.bytes)
    } catch (error) {
      throw new CliError(
        `${values.output} could not be written: ${(error as NodeJS.ErrnoException).code}`,
        EXIT.failed,
        'OUTPUT_UNWRITABLE',
      )
    }
    const extended = await readSignedPdf(result.bytes, { password })
    const timestamps = extended.pdfSignatures.filter((field) => field.subFilter === 'ETSI.RFC3161').length
    const signatures = extended.pdfSignatures.length - timestamps
    if (values.json) {
      writeJson(context.io, {
        output: values.output,
        signatures,
        documentTimestamps: timestamps,
        addedBytes: result.bytes.length - bytes.length,
        warnings: result.warnings,
      })
    } else {
      writeLines(context.io.stdout, [
        `Extended ${input} -> ${values.output}: validation data for ${signatures} PDF signature${signatures === 1 ? '' : 's'} and a document timestamp (${timestamps} in all)`,
        '  run `anchor extend` on it again before its newest timestamp’s certificate expires',
        ...result.warnings.map((warning) => `  warning: ${warning}`),
      ])
    }
  } finally {
    await output.release()
  }
  return 0
}
