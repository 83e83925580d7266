// The `anchor` command: a table of subcommands and one place that turns failures into messages and exit codes.
// Another subcommand (serve, deploy) is one more entry in the table. A command's module is imported only when it
// runs: `anchor --help`, `anchor <command> --help` and a mistyped name load none of them.

import type { PdfError } from '@docanchor/client'
import cliPackage from '../package.json' with { type: 'json' }
import { type CliCommand, type CliContext, displaySafeIo, writeJson } from './cli-context.ts'
import { CliError, EXIT } from './cli-errors.ts'

export const anchorCommands: Record<string, CliCommand> = {
  login: {
    summary: 'sign in with a code sent by e-mail; keeps the token in your config directory (0600)',
    usage: 'anchor login [--email <address>] [--service <url>]',
    load: async () => (await import('./commands/login.ts')).runLogin,
  },
  logout: {
    summary: 'revoke the stored login and delete it',
    usage: 'anchor logout',
    load: async () => (await import('./commands/logout.ts')).runLogout,
  },
  pin: {
    summary: 'pin a DocumentAnchors contract for `anchor verify --rpc`',
    usage: `anchor pin <address> --chain-id <id>        pin a DocumentAnchors contract you have checked yourself
       anchor pin --from-service [--service <url>]  pin the contract the service names in /api/info
       anchor pin --list [--json]
       anchor pin --remove <address> [--chain-id <id>]

Pinned contracts are what \`anchor verify --rpc\` trusts when neither --contract nor a service is given; a contract
named only inside a PDF never is.`,
    load: async () => (await import('./commands/pin.ts')).runPin,
  },
  sign: {
    summary: 'anchor a signature and append it to a PDF as a QR code and metadata',
    usage: `anchor sign <in.pdf> -o <out.pdf> --name <name> [--email <address> [--unattested]]
            [--type individual|company] [--company <name>] [--position <title>] [--geo <lat>,<lng>]
            [--page <n>] [--x <pt>] [--y <pt>] [--size <pt>] [--password-file <file>] [--service <url>] [--json]
            [--force] [--again] [--level B-LTA|B-T]

  --email          defaults to the e-mail address of the login; another address is refused, since the service
                   attests the login's and verifiers would show a mismatch
  --unattested     sign with --email as stated, without the service's attestation (shown as claimed)
  --page           page for the QR code, from 1 (default 1)
  --x, --y         lower-left corner of the stamp (the QR code and its caption under it) in points from the
                   lower-left corner of the page as it is displayed (rotation and crop box applied); default: bottom
                   right, left of earlier stamps
  --size           side of the QR code in points, 36 to 1000 (default 96; the caption adds a fifth below it)
  --password-file  file holding the password of a PDF that needs one to open (- reads stdin); an owner password
                   alone needs none
  --force          replace an existing <out.pdf> (never the input itself)
  --again          sign a file this computer has already signed through the same service (a second anchor, and a
                   second unit of quota, for the same document)
  --level          B-LTA (default): after the signature, the certificates' revocation status and a document
                   timestamp, so the file verifies offline after they expire (renew with \`anchor extend\`);
                   B-T: the timestamped signature alone, to extend later

Nothing is anchored (and nothing spent) when the PDF, the output path, the login or the QR code's place is wrong.`,
    load: async () => (await import('./commands/sign.ts')).runSign,
  },
  extend: {
    summary: 'renew a signed PDF’s long-term validation: validation data and a new document timestamp',
    usage: `anchor extend <signed.pdf> -o <out.pdf> [--password-file <file>] [--service <url>] [--json] [--force]

Appends the certificates and revocation status of every signature and timestamp in the file, then a document
timestamp of the service's time-stamping authority (PAdES B-LTA). \`anchor sign\` does this once; run \`anchor extend\`
on the file again before its newest timestamp's certificate expires, and it keeps verifying offline for as long as
it is renewed. Nothing it adds changes what a reader shows, so every signature stays valid.`,
    load: async () => (await import('./commands/extend.ts')).runExtend,
  },
  account: {
    summary: 'export everything the service holds about your account, choose its e-mails, or delete it',
    usage: `anchor account export [-o <file>] [--service <url>]
       anchor account notifications [--countersigned on|off] [--service <url>]
       anchor account delete --confirm <your e-mail address> [--service <url>]

  export  the account, its sessions, anchors and library as one JSON document: to stdout, or to a file readable
          by you alone with -o (the service allows a few exports an hour)
  notifications  shows or sets the e-mails you get: --countersigned on sends one when someone signs a document
          after you (off unless you turn it on)
  delete  deletes the account, its sessions and library; its anchors stay on the chain, with the details the
          service kept of them erased. The service wants a sign-in of the last few minutes: \`anchor login\` first`,
    load: async () => (await import('./commands/account.ts')).runAccount,
  },
  history: {
    summary: 'list the anchors of your login, newest first',
    usage: `anchor history [--limit <n>] [--all] [--json] [--service <url>]

  --limit  anchors to show, 1 to 100 (default 20)
  --all    every anchor, page after page
  --json   the anchors as JSON, one array`,
    load: async () => (await import('./commands/history.ts')).runHistory,
  },
  events: {
    summary: 'what happened to your anchors: confirmed, final, reorged, failed, countersigned',
    usage: `anchor events [--after <cursor>] [--follow] [--json] [--service <url>]

  --after   start past this cursor (a run prints the next one on stderr)
  --follow  keep asking every few seconds and print what comes, until interrupted (Ctrl-C)
  --json    one event per line, as JSON (the body a webhook delivery carries, with its id)`,
    load: async () => (await import('./commands/events.ts')).runEvents,
  },
  webhooks: {
    summary: 'the endpoints the service sends your events to',
    usage: `anchor webhooks add <url> [--events <type,...>] [--description <text>] [--json]
       anchor webhooks list [--json]
       anchor webhooks remove | test | rotate | attempts [--json] <id>
       anchor webhooks replay <id> (--event <evt_…> | --since <ISO time>)

  add       registers an endpoint (every event type unless --events names some) and prints its secret, once
  test      sends it a webhook.test event
  rotate    prints a new secret, once; the previous one signs beside it for 24 hours
  attempts  its delivery attempts, newest first: the answer's status, or timeout, refused, error
  replay    delivers again what failed: one event, or every event since a time`,
    load: async () => (await import('./commands/webhooks.ts')).runWebhooks,
  },
  verify: {
    summary: 'check every signature of a PDF, or the anchor a QR URL names',
    usage: `anchor verify <file.pdf | QR URL> [--json] [--service <url>] [--rpc <url> [--contract <address>]]
              [--qr-url <url>]... [--password-file <file>]

  --rpc       read the anchors from this JSON-RPC endpoint instead of trusting the service
  --contract  the DocumentAnchors address for --rpc; without it, the configured service's contract (--service,
              ANCHOR_URL or the stored login), else the contracts pinned with \`anchor pin\`, else the default
              service's (the one plain verify asks). A contract named only in the PDF is refused: anyone can
              deploy one.
  --qr-url    a QR URL printed on the page, for signatures whose metadata (version 1) has none
  --password-file  file holding the password of a PDF that needs one to open (- reads stdin)

Each signature's identity is attested (the service attests the account that anchored it), claimed (no attestation:
the signer's application's word) or MISMATCH (the service attests another account): name, company and position are
never attested. Exit code 0 only when every signature verifies, no identity is a mismatch and nothing was added after
the last one.`,
    load: async () => (await import('./commands/verify.ts')).runVerify,
  },
}

function overview(): string {
  const names = Object.keys(anchorCommands)
  const width = Math.max(...names.map((name) => name.length))
  return [
    'usage: anchor <command> [options]',
    '',
    ...names.map((name) => `  ${name.padEnd(width)}  ${anchorCommands[name]!.summary}`),
    '',
    'The service is --service <url>, else ANCHOR_URL, else the one `anchor login --service <url>` chose, else',
    'http://127.0.0.1:3000. ANCHOR_TOKEN overrides the stored login. `anchor <command> --help` shows the options of a',
    'command; `anchor --version` the version.',
  ].join('\n')
}

/** What the user can do about each kind of unusable PDF. */
const PDF_ADVICE: Record<PdfError['code'], string> = {
  ERR_NOT_PDF: '',
  ERR_PDF_PASSWORD: '; give it in a file with --password-file <file> (never on the command line)',
  ERR_PDF_DAMAGED: '; a repaired copy may work (qpdf in.pdf repaired.pdf), but signatures in it will not verify',
  ERR_PDF_UNSUPPORTED: '',
  ERR_PDF_MODIFIED: '; `anchor verify` on it shows every change (sign the version that was signed instead)',
}

async function describeFailure(error: unknown): Promise<CliError> {
  if (error instanceof CliError) return error
  // Any other failure came from a command that has loaded @docanchor/client already, so this import costs nothing.
  const { FormatError, PdfError } = await import('@docanchor/client')
  if (error instanceof PdfError) {
    return new CliError(`${error.message}${PDF_ADVICE[error.code]}`, EXIT.input, error.code)
  }
  if (error instanceof FormatError) return new CliError(error.message, EXIT.input, error.code)
  return new CliError(`unexpected error: ${(error as Error).message}`, EXIT.failed, 'INTERNAL')
}

/** Runs `anchor <argv>`; resolves with the exit code. */
export async function runAnchorCommand(argv: readonly string[], given: CliContext): Promise<number> {
  const [name, ...rest] = argv
  const context = { ...given, io: displaySafeIo(given.io) }
  const { io } = context
  if (name === '--version' || name === '-V') {
    io.stdout.write(`anchor ${cliPackage.version}\n`)
    return EXIT.ok
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    ;(name === undefined ? io.stderr : io.stdout).write(`${overview()}\n`)
    return name === undefined ? EXIT.input : EXIT.ok
  }
  const command = anchorCommands[name]
  if (!command) {
    io.stderr.write(`anchor: unknown command ${JSON.stringify(name)}\n\n${overview()}\n`)
    return EXIT.input
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`usage: ${command.usage}\n`)
    return EXIT.ok
  }
  try {
    const run = await command.load()
    return await run(rest, context)
  } catch (error) {
    const failure = await describeFailure(error)
    io.stderr.write(`anchor ${name}: ${failure.message}\n`)
    if (failure.code === 'USAGE') io.stderr.write(`usage: ${command.usage}\n`)
    if (rest.includes('--json')) writeJson(io, { error: { code: failure.code, message: failure.message } })
    return failure.exitCode
  }
}
