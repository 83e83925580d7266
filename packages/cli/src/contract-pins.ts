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

/** The valid pins, and how many entries were not pins (ignored, and dropped when the file is next written). */
export interface ReadPins {
  pins: ContractPin[]
  ignored: number
}

/**
 * The pins file. A file that is not JSON with a `pins` list is damaged as a whole (it must not silently trust nothing
 * or something else); one entry that is not a valid pin (a hand edit, an older version's) is ignored on its own, so
 * it never makes the other pins unusable.
 */
export async function readPins(configDir: string): Promise<ReadPins> {
  let text: string
  try {
    text = await readFile(pinsFile(configDir), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { pins: [], ignored: 0 }
    throw error
  }
  let value: { pins?: unknown }
  try {
    value = JSON.parse(text)
  } catch {
    value = {}
  }
  if (!Array.isArray(value.pins)) {
    throw new CliError(`${pinsFile(configDir)} is damaged: fix or delete it`, EXIT.input, 'PINS_DAMAGED')
  }
  const pins = value.pins.filter(isPin)
  return { pins, ignored: value.pins.length - pins.length }
}

/** What a command says about entries readPins ignored; undefined when there are none. */
export function ignoredPinsNote(configDir: string, ignored: number): string | undefined {
  if (ignored === 0) return undefined
  return `note: ${ignored} entr${ignored === 1 ? 'y' : 'ies'} of ${pinsFile(configDir)} ${ignored === 1 ? 'is' : 'are'} not a valid pin and ${ignored === 1 ? 'was' : 'were'} ignored`
}

function isPin(value: unknown): value is ContractPin {
  const pin = value as Partial<ContractPin>
  return (
    typeof pin === 'object' &&
    pin !== null &&
    Number.isSafeInteger(pin.chainId) &&
    pin.chainId! >= 1 &&
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
