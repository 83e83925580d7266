// `anchor pin`: the DocumentAnchors contracts `anchor verify --rpc` may trust without --contract or a service.

import { type Address, isAddress } from 'viem'
import { type CliRun, numberOption, parseCommandArgs, serviceUrl, writeJson, writeLines } from '../cli-context.ts'
import { usageError } from '../cli-errors.ts'
import { type ContractPin, ignoredPinsNote, readPins, writePins } from '../contract-pins.ts'
import { displayTime } from '../display-time.ts'
import { ServiceClient } from '../service-client.ts'

/** At most this many pins: a list that long is a mistake, not a trust decision. */
const MAX_PINS = 100

export const runPin: CliRun = async (argv, context) => {
  const { values, positionals } = parseCommandArgs(argv, {
    'chain-id': { type: 'string' },
    'from-service': { type: 'boolean' },
    service: { type: 'string' },
    list: { type: 'boolean' },
    remove: { type: 'string' },
    json: { type: 'boolean' },
  })
  const { configDir } = context.config
  const { pins, ignored } = await readPins(configDir)
  const note = ignoredPinsNote(configDir, ignored)
  if (note) context.io.stderr.write(`${note}${values.list ? '' : '; this command writes the file without it'}\n`)
  const chainId = numberOption(
    'chain-id',
    values['chain-id'],
    (n) => Number.isSafeInteger(n) && n >= 1,
    'a chain id: a whole number from 1',
  )
  const [address, ...extra] = positionals
  if (extra.length > 0) throw usageError(`unexpected argument ${extra[0]}`)

  if (values.list) {
    if (values.json) writeJson(context.io, { pins })
    else {
      const lines = pins.map(
        (pin) => `${pin.contract} on chain ${pin.chainId} (${pin.source}, ${displayTime(pin.pinnedAt)})`,
      )
      writeLines(context.io.stdout, lines.length > 0 ? lines : ['No contracts pinned.'])
    }
    return 0
  }

  if (values.remove !== undefined) {
    const contract = values.remove.toLowerCase()
    const kept = pins.filter((pin) => pin.contract !== contract || (chainId !== undefined && pin.chainId !== chainId))
    if (kept.length === pins.length) throw usageError(`${values.remove} is not pinned`)
    await writePins(configDir, kept)
    context.io.stdout.write(`Unpinned ${contract}.\n`)
    return 0
  }

  let pin: ContractPin
  const pinnedAt = new Date().toISOString()
  if (values['from-service']) {
    if (address !== undefined) throw usageError('--from-service takes no address')
    const url = serviceUrl(context, values.service)
    const info = await new ServiceClient(url, undefined, { fetch: context.fetch }).info()
    pin = {
      chainId: info.chainId,
      contract: info.contractAddress.toLowerCase() as Address,
      source: `service ${url}`,
      pinnedAt,
    }
  } else {
    if (address === undefined || !isAddress(address)) throw usageError('which contract? anchor pin <address>')
    if (chainId === undefined) throw usageError('--chain-id is required: a contract address means nothing alone')
    pin = { chainId, contract: address.toLowerCase() as Address, source: 'by hand', pinnedAt }
  }
  if (pins.some((known) => known.chainId === pin.chainId && known.contract === pin.contract)) {
    context.io.stdout.write(`${pin.contract} on chain ${pin.chainId} is already pinned.\n`)
    return 0
  }
  if (pins.length >= MAX_PINS) throw usageError(`at most ${MAX_PINS} contracts can be pinned; remove some first`)
  await writePins(configDir, [...pins, pin])
  context.io.stdout.write(`Pinned ${pin.contract} on chain ${pin.chainId}.\n`)
  return 0
}
