// What a node's or a provider's refusal of eth_sendRawTransaction says about the transaction, read from its own words.
// One table, each entry with the implementation it comes from and a text it answers (test/relay/node-errors.test.ts
// checks every example); a text no entry recognises says nothing certain and is treated as unclear.

export type NodeRefusal =
  /** The node holds this very transaction (in its pool, or mined). */
  | 'known'
  /** The nonce is below the account's next one: mined already, by this transaction or another. */
  | 'nonce-too-low'
  /** A lower nonce is missing on the node (a gap it will not queue over). */
  | 'nonce-too-high'
  /** A fee a replacement at this nonce with a higher fee could meet: replacement underpriced, below minimum or base fee. */
  | 'underpriced'
  /** The sender cannot pay gas × fee; only true of our key when its balance says so (a broken signature names another). */
  | 'insufficient-funds'
  /** Can never be mined as signed: gas below intrinsic or above the block's limit, chain id, signature, encoding, type. */
  | 'invalid'
  /** The node or provider is busy (pool full, rate limited, syncing): nothing said about the transaction. */
  | 'busy'

interface NodeErrorText {
  refusal: NodeRefusal | ((match: RegExpExecArray) => NodeRefusal)
  pattern: RegExp
  /** The implementations the words come from, and where. */
  source: string
  /** Texts it answers, as the implementations word them; the tests classify each. */
  examples: readonly string[]
}

/** Ganache states both nonces and leaves the direction to the reader. */
const ganacheNonce = (match: RegExpExecArray): NodeRefusal =>
  Number(match.groups!.tx) < Number(match.groups!.account) ? 'nonce-too-low' : 'nonce-too-high'

// The first entry that matches decides: the order keeps "replacement transaction underpriced" before "underpriced",
// "GasLimitExceeded" before a provider's "limit exceeded". Sources read at: go-ethereum 02b73d4, besu 3fd224e, reth
// 7b3432d, edr a81dc28, ganache 547c900, foundry 2a5df2c, Erigon's and Nethermind's pool files; "seen" means answered
// by that node here (anvil 1.7.1, hardhat 3.18.0 / EDR 0.22.0, ganache 7.9.2).
export const NODE_ERROR_TEXTS: readonly NodeErrorText[] = [
  // The node holds this very transaction.
  {
    refusal: 'known',
    pattern: /\balready known\b|ALREADY_EXISTS|^AlreadyKnown\b|OwnNonceAlreadyUsed/i,
    source:
      'geth core/txpool/errors.go ErrAlreadyKnown; reth; Erigon "ALREADY_EXISTS: already known"; Nethermind ' +
      'AcceptTxResult AlreadyKnown (older releases) and "already known"',
    examples: ['already known', 'ALREADY_EXISTS: already known', 'AlreadyKnown'],
  },
  {
    refusal: 'known',
    pattern: /^known transaction\b/i,
    source: 'Hardhat 3 / EDR crates/mem_pool (seen); Besu RpcErrorType "Known transaction"',
    examples: [
      'Known transaction: 0x02eaf2dee254f26633ce56eed7e889bed5e079d2b63b3d3d1f49619f6e516553',
      'Known transaction',
    ],
  },
  {
    refusal: 'known',
    pattern: /transaction already imported|was already imported/i,
    source: 'anvil crates/anvil/src/eth/error (seen)',
    examples: ['transaction already imported'],
  },

  // Nonces.
  {
    refusal: ganacheNonce,
    pattern: /doesn't have the correct nonce\. account has nonce of: (?<account>\d+) tx has nonce of: (?<tx>\d+)/i,
    source:
      'Ganache 7 packages/ethereum/ethereum/src/transaction-pool.ts (seen: its answer to a re-send of a mined one)',
    examples: ["the tx doesn't have the correct nonce. account has nonce of: 52 tx has nonce of: 48"],
  },
  {
    refusal: 'nonce-too-low',
    pattern: /nonce too low|^OldNonce\b|nonce has already been used/i,
    source:
      'geth core/error.go ErrNonceTooLow; reth; anvil (seen); Erigon "INTERNAL_ERROR: nonce too low"; Hardhat/EDR ' +
      '(seen; and "Transaction nonce too low" without automine); Besu "Nonce too low"; Nethermind OldNonce',
    examples: [
      'nonce too low: next nonce 7, tx nonce 5',
      'nonce too low',
      'INTERNAL_ERROR: nonce too low',
      "Nonce too low. Expected nonce to be 1 but got 0. Note that transactions can't be queued when automining.",
      'Transaction nonce too low. Expected nonce to be at least 3 but got 1.',
      'OldNonce, Current nonce: 9, nonce of rejected tx: 8',
    ],
  },
  {
    refusal: 'nonce-too-high',
    pattern: /nonce too high|^NonceGap\b|nonce (is )?too (far|distant)|NonceTooFarInFuture|gapped nonce/i,
    source:
      'Hardhat/EDR under automine (seen); geth blob pool "nonce too high: tx nonce …, gapped nonce …"; Nethermind ' +
      'NonceGap and "nonce too far in future"; Besu "Nonce too high" and "… nonce is too distant …"',
    examples: [
      "Nonce too high. Expected nonce to be 1 but got 4. Note that transactions can't be queued when automining.",
      'NonceGap, Future nonce. Expected nonce: 12',
      'Transaction nonce is too distant from current sender nonce',
      'nonce too far in future',
    ],
  },

  // Fees: a replacement at the same nonce with a higher fee is what moves it.
  {
    refusal: 'underpriced',
    pattern: /replacement transaction underpriced|could not replace existing tx|^ReplacementNotAllowed\b/i,
    source:
      'geth ErrReplaceUnderpriced; anvil; reth; Hardhat/EDR (seen); Besu; Erigon "INTERNAL_ERROR: could not ' +
      'replace existing tx"; Nethermind ReplacementNotAllowed',
    examples: [
      'replacement transaction underpriced',
      'Replacement transaction underpriced. A gasPrice/maxFeePerGas of at least 3300000000 is necessary to replace ' +
        'the existing transaction with nonce 0.',
      'INTERNAL_ERROR: could not replace existing tx',
      'ReplacementNotAllowed',
    ],
  },
  {
    refusal: 'underpriced',
    pattern: /underpriced|fee too low|^FeeTooLow|gas price below|price below minimum|below minimum required/i,
    source:
      'geth "transaction gas price below minimum: …" (since 1.15.9) and ErrUnderpriced; reth; Ganache 7 (also its ' +
      'answer to a re-send of a pending one); Erigon "FEE_TOO_LOW: underpriced"; Nethermind FeeTooLow; Besu "Gas ' +
      'price below configured minimum gas price"',
    examples: [
      'transaction underpriced',
      'transaction gas price below minimum: gas tip cap 1, minimum needed 1000000',
      'FEE_TOO_LOW: underpriced',
      'FeeTooLow, MaxFeePerGas too low. MaxFeePerGas: 7, BaseFee: 8, MaxPriorityFeePerGas:1, Block number: 5',
      'Gas price below current base fee',
      'transaction priority fee below minimum required priority fee 100',
    ],
  },
  {
    refusal: 'underpriced',
    pattern:
      /max fee per gas less than block base fee|\((\d+)\) is too low for the next block|which is below the minimum of/i,
    source: 'anvil (seen); Hardhat/EDR (seen: maxFeePerGas and gasPrice forms, and the minimum gas price)',
    examples: [
      'max fee per gas less than block base fee',
      'Transaction maxFeePerGas (1) is too low for the next block, which has a baseFeePerGas of 765701563',
      'Transaction gas price is 1, which is below the minimum of 1000',
    ],
  },

  // Funds: only a refusal when our own balance says so.
  {
    refusal: 'insufficient-funds',
    pattern: /insufficient funds|doesn't have enough funds|upfront cost exceeds account balance|^InsufficientFunds\b/i,
    source:
      'geth core/error.go ErrInsufficientFunds; reth; anvil (seen); Ganache (seen); Erigon; Hardhat/EDR (seen); Besu ' +
      '"Upfront cost exceeds account balance"; Nethermind InsufficientFunds',
    examples: [
      'insufficient funds for gas * price + value: balance 0, tx cost 63000000000000, overshot 63000000000000',
      'Insufficient funds for gas * price + value',
      "Sender doesn't have enough funds to send tx. The max upfront cost is: 63000000000000 and the sender's " +
        'balance is: 0.',
      'Upfront cost exceeds account balance',
      'InsufficientFunds, Account balance: 0, cumulative cost: 840000000000000',
    ],
  },

  // Never minable as signed.
  {
    refusal: 'invalid',
    pattern:
      /intrinsic ?gas|requires at least \d+ gas|gas floor of|insufficient gas for floor data gas cost|IntrinsicGasTooLow/i,
    source:
      'geth ErrIntrinsicGas and the floor data gas; reth; anvil (seen, both directions); Ganache (seen); Erigon ' +
      '"INTERNAL_ERROR: IntrinsicGas"; Hardhat/EDR (seen); Besu "Intrinsic gas exceeds gas limit"; Nethermind',
    examples: [
      'intrinsic gas too low: gas 20000, minimum needed 21000',
      'intrinsic gas too high -- tx.gas_limit > env.block.gas_limit',
      'INTERNAL_ERROR: IntrinsicGas',
      'Transaction requires at least 21000 gas but got 20000',
      'Intrinsic gas exceeds gas limit',
      'transaction invalid, IntrinsicGasTooLow: Gas limit is too low.',
    ],
  },
  {
    refusal: 'invalid',
    pattern:
      /exceeds (the )?block gas limit|exceeds transaction gas cap|gas limit (is too high|too high|cap exceeded)|exceeds max transaction gas limit|^GasLimitExceeded\b|gas limit reached/i,
    source:
      'geth ErrGasLimit and the Osaka cap; reth; Ganache (seen); Erigon; Hardhat/EDR (seen); Besu; Nethermind ' +
      'GasLimitExceeded',
    examples: [
      'exceeds block gas limit',
      'transaction gas limit too high (cap: 16777216, tx: 30000000)',
      'Transaction gas limit is 1000000000 and exceeds transaction gas cap of 16777216',
      'Transaction gas limit exceeds block gas limit',
      'INTERNAL_ERROR: gas limit is too high',
      'GasLimitExceeded, Gas limit: 30000000, gas limit of rejected tx: 40000000',
    ],
  },
  {
    refusal: 'invalid',
    pattern: /chain ?id|only replay-protected|EIP-155 transaction/i,
    source:
      'geth "invalid sender: invalid chain id for signer …" and the EIP-155 rule; anvil (seen); reth; Erigon; ' +
      'Hardhat/EDR (seen); Ganache (seen); Besu "Wrong chainId"; Nethermind InvalidTxChainId',
    examples: [
      'invalid chain id for signer',
      'only replay-protected (EIP-155) transactions allowed over RPC',
      'Trying to send a raw transaction with an invalid chainId. The expected chainId is 31337',
      'Trying to send an incompatible EIP-155 transaction, signed for another chain.',
      'Invalid chain id (31338) for chain with id 31337.',
      'Wrong chainId',
      'transaction invalid, InvalidTxChainId: Expected 1, got 5.',
    ],
  },
  {
    refusal: 'invalid',
    pattern:
      /invalid (transaction )?(sender|signature)|InvalidTxSignature|failed to recover sender|FailedToResolveSender/i,
    source: 'geth ErrInvalidSender; reth; Erigon "INVALID: invalid sender"; Ganache; Hardhat/EDR; Besu; Nethermind',
    examples: [
      'invalid sender: invalid transaction v, r, s values',
      'INVALID: invalid sender',
      'invalid transaction signature',
      'Invalid signature v value',
      'transaction invalid, InvalidTxSignature: Signature is invalid.',
      'failed to recover sender',
    ],
  },
  {
    refusal: 'invalid',
    pattern:
      /decode|invalid rlp|^RLPTooLong|oversized data|transaction too large|type not supported|unsupported transaction type|invalid transaction type|initcode|priority fee per gas higher than max fee|nonce has max value|negative value/i,
    source:
      'anvil "Failed to decode transaction" (seen); Ganache "Could not decode transaction: …" (seen); reth; ' +
      'Nethermind "Invalid RLP."; geth oversized data, type and fee-cap rules; Erigon RLPTooLong; Besu',
    examples: [
      'Failed to decode transaction',
      'Could not decode transaction: invalid RLP (safeSlice): end slice of Buffer out-of-bounds',
      'Invalid RLP.',
      'oversized data: transaction size 200000, limit 131072',
      'transaction type not supported: tx type 3 not supported by this pool',
      'max priority fee per gas higher than max fee per gas',
    ],
  },

  // The node or provider is busy: nothing said about this transaction.
  {
    refusal: 'busy',
    pattern:
      /pool is full|sub-pool is full|limit exceeded|rate limit|request limit|too many requests|capacity|credits limited|no nodes available|header not found|syncing|sync is still in progress|not yet in sync|already reserved|replace pending|mining has already started|spammer|payment required/i,
    source:
      'geth "txpool is full", "address already reserved", "future transaction tries to replace pending"; reth; ' +
      'Erigon "spammer"; Nethermind "node is syncing"; Besu "Initial sync is still in progress"; Ganache ' +
      '"transaction can\'t be replaced, mining has already started"; providers: Infura -32005 and 429, Alchemy 429, ' +
      'QuickNode -32007, Ankr -32055, op-geth "over rate limit"',
    examples: [
      'txpool is full',
      'daily request count exceeded, request rate limited',
      'exceeded project rate limit',
      'Too Many Requests',
      'Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ' +
        'ignore this message.',
      '25/second request limit reached - reduce calls per second or upgrade your account at quicknode.com',
      'header not found',
      'over rate limit',
      'No nodes available',
      'Initial sync is still in progress',
    ],
  },
]

/** The refusal the node's words state, or undefined when no entry recognises them (an unclear answer). */
export function classifyNodeError(message: string): NodeRefusal | undefined {
  for (const entry of NODE_ERROR_TEXTS) {
    const match = entry.pattern.exec(message)
    if (match) return typeof entry.refusal === 'function' ? entry.refusal(match) : entry.refusal
  }
  return undefined
}
