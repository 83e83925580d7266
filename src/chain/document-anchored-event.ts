import { toEventSelector } from 'viem'
import { documentAnchorsAbi } from './document-anchors-artifact.ts'

/** topic0 of `DocumentAnchored`: how its logs are found, and a constant the contract's code carries (PUSH32). */
export const DOCUMENT_ANCHORED_TOPIC = toEventSelector(
  documentAnchorsAbi.find((item) => item.type === 'event' && item.name === 'DocumentAnchored')!,
)
