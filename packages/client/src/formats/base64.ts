// Standard base64 (RFC 4648 §4), as PEM bodies and the API's DER fields carry it. The QR URL's strict base64url is
// base64url.ts.

export function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0))
}

export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}
