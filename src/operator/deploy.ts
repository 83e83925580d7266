// Entry point of `npm run deploy -- --rpc <url> --private-key-file <file> [--relayer <address>]...`.
import { runDeployCommand } from './deploy-command.ts'

process.exitCode = await runDeployCommand(process.argv.slice(2), process)
