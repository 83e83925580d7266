// anchorFromReceipt against logs encoded by viem from the compiled contract's ABI: the event the contract emits is the
// one the client reads, and look-alikes (another contract, a reverted call, a log of another shape) are not anchors.
import { encodeAbiParameters, encodeEventTopics, toEventSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import { documentAnchorsAbi } from '../../../../src/chain/document-anchors-artifact.ts'
import { anchorFromReceipt, DOCUMENT_ANCHORED_TOPIC, type ReceiptLike } from '../../src/chain/anchored-event.ts'

const event = documentAnchorsAbi.find((item) => item.type === 'event' && item.name === 'DocumentAnchored')!
const CONTRACT = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
const COMPOSITE = `0x${'ab'.repeat(32)}` as const
const PREVIOUS = `0x${'00'.repeat(32)}` as const
const SIGNER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

function receipt(overrides: Partial<ReceiptLike> = {}, address = CONTRACT): ReceiptLike {
  const topics = encodeEventTopics({
    abi: [event],
    eventName: 'DocumentAnchored',
    args: { compositeHash: COMPOSITE, previousTxHash: PREVIOUS, signer: SIGNER },
  })
  return {
    transactionHash: `0x${'CD'.repeat(32)}`,
    blockNumber: 7n,
    transactionIndex: 2,
    status: 'success',
    logs: [{ address, topics: topics as string[], data: encodeAbiParameters([{ type: 'uint256' }], [1_767_225_600n]) }],
    ...overrides,
  }
}

describe('DOCUMENT_ANCHORED_TOPIC', () => {
  it("is the compiled contract's DocumentAnchored selector", () => {
    expect(DOCUMENT_ANCHORED_TOPIC).toBe(toEventSelector(event))
  })
})

describe('anchorFromReceipt', () => {
  it('reads the anchor of the given contract, every hex lower-case', () => {
    expect(anchorFromReceipt(receipt(), CONTRACT.toUpperCase().replace('0X', '0x'))).toEqual({
      txHash: `0x${'cd'.repeat(32)}`,
      compositeHash: COMPOSITE,
      previousTxHash: PREVIOUS,
      signer: SIGNER.toLowerCase(),
      timestamp: 1_767_225_600,
      blockNumber: 7n,
      transactionIndex: 2,
    })
  })

  it('error: the same event from another contract is not an anchor', () => {
    expect(anchorFromReceipt(receipt({}, SIGNER), CONTRACT)).toBeUndefined()
  })

  it('error: a reverted transaction holds no anchor', () => {
    expect(anchorFromReceipt(receipt({ status: 'reverted' }), CONTRACT)).toBeUndefined()
  })

  it('error: a log with the topic but not the shape is skipped', () => {
    const [log] = receipt().logs
    expect(
      anchorFromReceipt(receipt({ logs: [{ ...log!, topics: log!.topics.slice(0, 3) }] }), CONTRACT),
    ).toBeUndefined()
    expect(anchorFromReceipt(receipt({ logs: [{ ...log!, data: '0x' }] }), CONTRACT)).toBeUndefined()
  })
})
