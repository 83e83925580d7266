import { describe, expect, it } from 'vitest'
import { classifyNodeError, NODE_ERROR_TEXTS } from '../../src/relayer/node-errors.ts'

/**
 * What each node's words mean, written out: the table under test (NODE_ERROR_TEXTS) must not be what decides the
 * expectation. One line per example the table cites, so a new example there fails until it is listed here too.
 */
const READINGS: [text: string, refusal: ReturnType<typeof classifyNodeError>][] = [
  ['already known', 'known'],
  ['ALREADY_EXISTS: already known', 'known'],
  ['AlreadyKnown', 'known'],
  ['Known transaction: 0x02eaf2dee254f26633ce56eed7e889bed5e079d2b63b3d3d1f49619f6e516553', 'known'],
  ['Known transaction', 'known'],
  ['transaction already imported', 'known'],
  ["the tx doesn't have the correct nonce. account has nonce of: 52 tx has nonce of: 48", 'nonce-too-low'],
  ['nonce too low: next nonce 7, tx nonce 5', 'nonce-too-low'],
  ['nonce too low', 'nonce-too-low'],
  ['INTERNAL_ERROR: nonce too low', 'nonce-too-low'],
  [
    "Nonce too low. Expected nonce to be 1 but got 0. Note that transactions can't be queued when automining.",
    'nonce-too-low',
  ],
  ['Transaction nonce too low. Expected nonce to be at least 3 but got 1.', 'nonce-too-low'],
  ['OldNonce, Current nonce: 9, nonce of rejected tx: 8', 'nonce-too-low'],
  [
    "Nonce too high. Expected nonce to be 1 but got 4. Note that transactions can't be queued when automining.",
    'nonce-too-high',
  ],
  ['NonceGap, Future nonce. Expected nonce: 12', 'nonce-too-high'],
  ['Transaction nonce is too distant from current sender nonce', 'nonce-too-high'],
  ['nonce too far in future', 'nonce-too-high'],
  ['replacement transaction underpriced', 'underpriced'],
  [
    'Replacement transaction underpriced. A gasPrice/maxFeePerGas of at least 3300000000 is necessary to replace the existing transaction with nonce 0.',
    'underpriced',
  ],
  ['INTERNAL_ERROR: could not replace existing tx', 'underpriced'],
  ['ReplacementNotAllowed', 'underpriced'],
  ['transaction underpriced', 'underpriced'],
  ['transaction gas price below minimum: gas tip cap 1, minimum needed 1000000', 'underpriced'],
  ['FEE_TOO_LOW: underpriced', 'underpriced'],
  [
    'FeeTooLow, MaxFeePerGas too low. MaxFeePerGas: 7, BaseFee: 8, MaxPriorityFeePerGas:1, Block number: 5',
    'underpriced',
  ],
  ['Gas price below current base fee', 'underpriced'],
  ['transaction priority fee below minimum required priority fee 100', 'underpriced'],
  ['max fee per gas less than block base fee', 'underpriced'],
  ['Transaction maxFeePerGas (1) is too low for the next block, which has a baseFeePerGas of 765701563', 'underpriced'],
  ['Transaction gas price is 1, which is below the minimum of 1000', 'underpriced'],
  [
    'insufficient funds for gas * price + value: balance 0, tx cost 63000000000000, overshot 63000000000000',
    'insufficient-funds',
  ],
  ['Insufficient funds for gas * price + value', 'insufficient-funds'],
  [
    "Sender doesn't have enough funds to send tx. The max upfront cost is: 63000000000000 and the sender's balance is: 0.",
    'insufficient-funds',
  ],
  ['Upfront cost exceeds account balance', 'insufficient-funds'],
  ['InsufficientFunds, Account balance: 0, cumulative cost: 840000000000000', 'insufficient-funds'],
  ['intrinsic gas too low: gas 20000, minimum needed 21000', 'invalid'],
  ['intrinsic gas too high -- tx.gas_limit > env.block.gas_limit', 'invalid'],
  ['INTERNAL_ERROR: IntrinsicGas', 'invalid'],
  ['Transaction requires at least 21000 gas but got 20000', 'invalid'],
  ['Intrinsic gas exceeds gas limit', 'invalid'],
  ['transaction invalid, IntrinsicGasTooLow: Gas limit is too low.', 'invalid'],
  ['exceeds block gas limit', 'invalid'],
  ['transaction gas limit too high (cap: 16777216, tx: 30000000)', 'invalid'],
  ['Transaction gas limit is 1000000000 and exceeds transaction gas cap of 16777216', 'invalid'],
  ['Transaction gas limit exceeds block gas limit', 'invalid'],
  ['INTERNAL_ERROR: gas limit is too high', 'invalid'],
  ['GasLimitExceeded, Gas limit: 30000000, gas limit of rejected tx: 40000000', 'invalid'],
  ['invalid chain id for signer', 'invalid'],
  ['only replay-protected (EIP-155) transactions allowed over RPC', 'invalid'],
  ['Trying to send a raw transaction with an invalid chainId. The expected chainId is 31337', 'invalid'],
  ['Trying to send an incompatible EIP-155 transaction, signed for another chain.', 'invalid'],
  ['Invalid chain id (31338) for chain with id 31337.', 'invalid'],
  ['Wrong chainId', 'invalid'],
  ['transaction invalid, InvalidTxChainId: Expected 1, got 5.', 'invalid'],
  ['invalid sender: invalid transaction v, r, s values', 'invalid'],
  ['INVALID: invalid sender', 'invalid'],
  ['invalid transaction signature', 'invalid'],
  ['Invalid signature v value', 'invalid'],
  ['transaction invalid, InvalidTxSignature: Signature is invalid.', 'invalid'],
  ['failed to recover sender', 'invalid'],
  ['Failed to decode transaction', 'invalid'],
  ['Could not decode transaction: invalid RLP (safeSlice): end slice of Buffer out-of-bounds', 'invalid'],
  ['Invalid RLP.', 'invalid'],
  ['oversized data: transaction size 200000, limit 131072', 'invalid'],
  ['transaction type not supported: tx type 3 not supported by this pool', 'invalid'],
  ['max priority fee per gas higher than max fee per gas', 'invalid'],
  ['txpool is full', 'busy'],
  ['daily request count exceeded, request rate limited', 'busy'],
  ['exceeded project rate limit', 'busy'],
  ['Too Many Requests', 'busy'],
  [
    'Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message.',
    'busy',
  ],
  ['25/second request limit reached - reduce calls per second or upgrade your account at quicknode.com', 'busy'],
  ['header not found', 'busy'],
  ['over rate limit', 'busy'],
  ['No nodes available', 'busy'],
  ['Initial sync is still in progress', 'busy'],
]

describe('classifyNodeError', () => {
  for (const [text, refusal] of READINGS) {
    it(`reads "${text.slice(0, 70)}" as ${refusal}`, () => {
      expect(classifyNodeError(text)).toBe(refusal)
    })
  }

  it('is given every example the table cites, and each is decided by the entry that cites it', () => {
    const cited = NODE_ERROR_TEXTS.flatMap((entry) => entry.examples)
    expect(READINGS.map(([text]) => text)).toEqual(cited)
    for (const entry of NODE_ERROR_TEXTS) {
      for (const example of entry.examples) {
        expect(NODE_ERROR_TEXTS.find((candidate) => candidate.pattern.test(example))).toBe(entry)
      }
    }
  })

  it("reads both directions of Ganache's nonce message", () => {
    expect(
      classifyNodeError("the tx doesn't have the correct nonce. account has nonce of: 52 tx has nonce of: 48"),
    ).toBe('nonce-too-low')
    expect(classifyNodeError("the tx doesn't have the correct nonce. account has nonce of: 3 tx has nonce of: 7")).toBe(
      'nonce-too-high',
    )
  })

  it('knows nothing of words no entry recognises: the caller treats them as unclear', () => {
    for (const text of ['', 'execution reverted', 'Internal error', 'upstream connect error', 'something new']) {
      expect(classifyNodeError(text)).toBeUndefined()
    }
  })
})
