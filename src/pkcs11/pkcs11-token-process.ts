// Runs in a child process of its own, one per token key: PKCS#11 calls are synchronous native calls, and a call that
// hangs inside the token's library can only be stopped by killing the process that made it. The parent sends the
// token's details over IPC (never argv or the environment, so the PIN shows up in no process listing) and then one
// request at a time; this process answers each with a result or an error that names the configuration variable.
import { endianness } from 'node:os'
import pkcs11js from 'pkcs11js'
import type { TokenPublicKey, TokenReply, TokenRequest } from './pkcs11-token-protocol.ts'

const pkcs11 = new pkcs11js.PKCS11()
let session: Buffer | undefined
let privateKey: Buffer | undefined
/** The open key's kind and, for RSA, its modulus length in bytes (the signature's). */
let keyKind: { type: 'ec' } | { type: 'rsa'; bytes: number } | undefined
/** The answer to the first open: two signing calls may each ask to open a fresh process. */
let opened: TokenReply | undefined

function reply(message: TokenReply): void {
  process.send!(message)
}

/** The first token whose label is `label`; PKCS#11 pads labels with spaces to 32 bytes. */
function findSlot(label: string): Buffer | undefined {
  for (const slot of pkcs11.C_GetSlotList(true)) {
    if (pkcs11.C_GetTokenInfo(slot).label.trim() === label) return slot
  }
  return undefined
}

function findObject(handle: Buffer, objectClass: number, label: string): Buffer | undefined {
  pkcs11.C_FindObjectsInit(handle, [
    { type: pkcs11js.CKA_CLASS, value: objectClass },
    { type: pkcs11js.CKA_LABEL, value: label },
  ])
  const found = pkcs11.C_FindObjects(handle, 2)
  pkcs11.C_FindObjectsFinal(handle)
  if (found.length > 1)
    throw new ConfigProblem('PKCS11_KEY_LABELS', `more than one key on the token is labelled "${label}"`)
  return found[0]
}

class ConfigProblem extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message)
  }
}

function open(request: Extract<TokenRequest, { type: 'open' }>): TokenReply {
  opened ??= openToken(request)
  return opened
}

function openToken(request: Extract<TokenRequest, { type: 'open' }>): TokenReply {
  try {
    pkcs11.load(request.module)
  } catch {
    throw new ConfigProblem('PKCS11_MODULE', `cannot load the PKCS#11 library ${request.module}`)
  }
  pkcs11.C_Initialize()
  const slot = findSlot(request.tokenLabel)
  if (!slot) throw new ConfigProblem('PKCS11_TOKEN_LABEL', `no token labelled "${request.tokenLabel}"`)
  session = pkcs11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION)
  try {
    pkcs11.C_Login(session, pkcs11js.CKU_USER, request.pin)
  } catch (error) {
    const code = (error as { code?: number }).code
    // Another process of this token already logged the user in: the session is usable as it is.
    if (code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) {
      throw new ConfigProblem(
        'PKCS11_PIN',
        code === pkcs11js.CKR_PIN_INCORRECT ? 'the PIN is wrong' : 'the token refused the PIN',
      )
    }
  }
  privateKey = findObject(session, pkcs11js.CKO_PRIVATE_KEY, request.keyLabel)
  const publicKey = findObject(session, pkcs11js.CKO_PUBLIC_KEY, request.keyLabel)
  if (!privateKey || !publicKey) {
    throw new ConfigProblem('PKCS11_KEY_LABELS', `no key pair labelled "${request.keyLabel}" on the token`)
  }
  return { type: 'opened', publicKey: publicKeyOf(session, publicKey) }
}

function publicKeyOf(handle: Buffer, publicKey: Buffer): TokenPublicKey {
  const [keyType] = pkcs11.C_GetAttributeValue(handle, publicKey, [{ type: pkcs11js.CKA_KEY_TYPE }])
  if (ulong(keyType!.value as Buffer) === pkcs11js.CKK_RSA) {
    const [modulus, exponent] = pkcs11.C_GetAttributeValue(handle, publicKey, [
      { type: pkcs11js.CKA_MODULUS },
      { type: pkcs11js.CKA_PUBLIC_EXPONENT },
    ])
    keyKind = { type: 'rsa', bytes: (modulus!.value as Buffer).length }
    return {
      type: 'rsa',
      modulus: (modulus!.value as Buffer).toString('hex'),
      exponent: (exponent!.value as Buffer).toString('hex'),
    }
  }
  const [params, point] = pkcs11.C_GetAttributeValue(handle, publicKey, [
    { type: pkcs11js.CKA_EC_PARAMS },
    { type: pkcs11js.CKA_EC_POINT },
  ])
  keyKind = { type: 'ec' }
  return {
    type: 'ec',
    ecParams: (params!.value as Buffer).toString('hex'),
    ecPoint: (point!.value as Buffer).toString('hex'),
  }
}

/** A CK_ULONG attribute's value, in the machine's byte order and width (8 bytes on 64-bit Linux). */
function ulong(value: Buffer): number {
  const little = endianness() === 'LE'
  if (value.length === 8) return Number(little ? value.readBigUInt64LE() : value.readBigUInt64BE())
  return little ? value.readUInt32LE() : value.readUInt32BE()
}

/** DER of DigestInfo for SHA-256 up to its digest (RFC 8017 9.2): what CKM_RSA_PKCS signs with the hash after it. */
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex')

function sign(hash: string): TokenReply {
  if (!session || !privateKey || !keyKind) throw new Error('the token is not open')
  const digest = Buffer.from(hash, 'hex')
  if (keyKind.type === 'rsa') {
    pkcs11.C_SignInit(session, { mechanism: pkcs11js.CKM_RSA_PKCS }, privateKey)
    const data = Buffer.concat([SHA256_DIGEST_INFO, digest])
    const signature = pkcs11.C_Sign(session, data, Buffer.alloc(keyKind.bytes))
    return { type: 'signed', signature: signature.toString('hex') }
  }
  pkcs11.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, privateKey)
  const signature = pkcs11.C_Sign(session, digest, Buffer.alloc(64))
  return { type: 'signed', signature: signature.toString('hex') }
}

process.on('message', (request: TokenRequest) => {
  try {
    reply(request.type === 'open' ? open(request) : sign(request.hash))
  } catch (error) {
    if (error instanceof ConfigProblem) reply({ type: 'failed', variable: error.variable, message: error.message })
    else {
      // The library's own message (a CKR_ name and the function); it never carries the PIN.
      reply({ type: 'failed', message: error instanceof Error ? error.message : String(error) })
    }
  }
})
process.on('disconnect', () => process.exit(0))
