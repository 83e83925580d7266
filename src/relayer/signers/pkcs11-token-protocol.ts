// The messages between the service and a token child process (see pkcs11-token-process.ts).

export type TokenRequest =
  | { type: 'open'; module: string; tokenLabel: string; pin: string; keyLabel: string }
  /** `hash`: 32 bytes, hex without 0x. */
  | { type: 'sign'; hash: string }

export type TokenReply =
  /** DER of CKA_EC_PARAMS and CKA_EC_POINT, hex. */
  | { type: 'opened'; ecParams: string; ecPoint: string }
  /** r‖s, 64 bytes, hex. */
  | { type: 'signed'; signature: string }
  /** `variable`: the configuration variable at fault, when there is one. */
  | { type: 'failed'; message: string; variable?: string }
