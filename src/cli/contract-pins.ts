// The DocumentAnchors contracts the user pinned (`anchor pin`): trust anchors for `anchor verify --rpc` that need no
// service. Kept beside the stored login, one JSON file, written whole and renamed so it is never half-written.

import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Address, isAddress } from 'viem'
import { CliError, EXIT } from './cli-errors.ts'

export interface ContractPin {
  chainId: number
  /** Lower-case. */
  contract: Address
  /** Where the user took it from: `--chain-id` by hand, or a service's /api/info. */
  source: string
  pinnedAt: string
}

const pinsFile = (configDir: string) => join(configDir, 'pins.json')

export async function readPins(configDir: string): Promise<ContractPin[]> {
  let text: string
  try {
    text = await readFile(pinsFile(configDir), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  let value: { pins?: unknown }
  try {
    value = JSON.parse(text)
  } catch {
    value = {}
  }
  // A damaged file must not silently trust nothing or something else: say so and let the user mend it.
  if (!Array.isArray(value.pins) || !value.pins.every(isPin)) {
    throw new CliError(`${pinsFile(configDir)} is damaged: fix or delete it`, EXIT.input, 'PINS_DAMAGED')
  }
  return value.pins
}

function isPin(value: unknown): value is ContractPin {
  const pin = value as Partial<ContractPin>
  return (
    typeof pin === 'object' &&
    pin !== null &&
    Number.isSafeInteger(pin.chainId) &&
    typeof pin.contract === 'string' &&
    isAddress(pin.contract) &&
    pin.contract === pin.contract.toLowerCase() &&
    typeof pin.source === 'string' &&
    typeof pin.pinnedAt === 'string'
  )
}

export async function writePins(configDir: string, pins: readonly ContractPin[]): Promise<void> {
  await mkdir(configDir, { recursive: true, mode: 0o700 })
  const file = pinsFile(configDir)
  const temp = `${file}.${process.pid}.tmp`
  await writeFile(temp, `${JSON.stringify({ pins }, null, 2)}\n`, { mode: 0o600 })
  await rename(temp, file)
}
