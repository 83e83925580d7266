// Values every part of the product shares (service, CLI, verification page, desktop app): import them by name.

/** The previousTxHash of a document's first signature: the root of every anchor chain. */
export const ZERO_TX_HASH: `0x${string}` = `0x${'0'.repeat(64)}`

/** Most characters the base64url ciphertext of a payload may have: what still fits the QR code's budget. */
export const QR_CIPHERTEXT_LIMIT = 2048

/** anvil's and Hardhat's chain id: a development chain on one machine (the service's embedded default), no public record. */
export const DEVELOPMENT_CHAIN_ID = 31337
