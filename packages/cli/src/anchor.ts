// Entry point of the `anchor` command (bin/anchor.js runs it, bundled).
import { runAnchorCommand } from './anchor-command.ts'
import { loadCliConfigFromProcess } from './cli-config.ts'

process.exitCode = await runAnchorCommand(process.argv.slice(2), { io: process, config: loadCliConfigFromProcess() })
