// The messages between the service and a token child process (see pkcs11-token-process.ts).

export type TokenRequest =
  | { type: 'open'; module: string; tokenLabel: string; pin: string; keyLabel: string }
  /** `hash`: 32 bytes, hex without 0x. */
  | { type: 'sign'; hash: string }

export type TokenReply =
  | { type: 'opened'; publicKey: TokenPublicKey }
  /** r‖s (64 bytes) for an EC key, the PKCS#1 v1.5 signature for an RSA key; hex. */
  | { type: 'signed'; signature: string }
  /** `variable`: the configuration variable at fault, when there is one. */
  | { type: 'failed'; message: string; variable?: string }

export type TokenPublicKey =
  /** DER of CKA_EC_PARAMS and CKA_EC_POINT, hex. */
  | { type: 'ec'; ecParams: string; ecPoint: string }
  /** CKA_MODULUS and CKA_PUBLIC_EXPONENT, unsigned big-endian, hex. */
  | { type: 'rsa'; modulus: string; exponent: string }
