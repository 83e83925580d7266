// The public surface of @docanchor/client: what an application imports. Everything here runs on Web APIs alone
// (fetch, WebCrypto, streams), so the same build serves Node 22+, browsers and an Electron renderer.

export {
  AnchorApiError,
  AnchorNetworkError,
  AnchorNotConfirmedError,
  type ProblemFieldError,
} from './api/anchor-api-error.ts'
export {
  type AnchorClient,
  type AnchorClientOptions,
  type CallOptions,
  createAnchorClient,
  type OAuthProvider,
  pdfSignatureCms,
  type RelayOptions,
} from './api/anchor-client.ts'
export type {
  AccountEvent,
  AccountExport,
  AnchorPage,
  AnchorState,
  ChainEntry,
  CreatedWebhook,
  EventPage,
  Library,
  LibrarySignature,
  LibrarySnippet,
  LibraryStatus,
  LibrarySyncBody,
  LibrarySyncResult,
  Me,
  Notifications,
  PdfSignatureResult,
  RelayBody,
  RelayResult,
  ServiceInfo,
  SignerCertificateResult,
  SignInResult,
  User,
  VerifyResult,
  WebhookAttemptPage,
  WebhookEndpoint,
} from './api/api-schemas.ts'
export { type CertifiedSigner, certifiedSigner } from './api/certified-signer.ts'
export { createPkcePair, type PkcePair } from './api/pkce.ts'
export { serviceLongTermValidation } from './api/service-validation.ts'
export {
  type AnchoredEvent,
  anchorFromReceipt,
  DOCUMENT_ANCHORED_TOPIC,
  type ReceiptLike,
} from './chain/anchored-event.ts'
export {
  type AnchorGeo,
  type AnchorPayload,
  type AnchorPayloadInput,
  type AnchorSigner,
  assertFitsQrBudget,
  buildAnchorPayload,
  generateSalt,
  type JwtTrustClaims,
  type ParseAnchorPayloadOptions,
  parseAnchorPayload,
  serializeAnchorPayload,
  trustFromJwtClaims,
  validateAnchorPayload,
} from './formats/anchor-payload.ts'
export { fromBase64Url, toBase64Url } from './formats/base64url.ts'
export { compositeHash, compositeHashesEqual, hashAnchorPayload, isCompositeHash } from './formats/composite-hash.ts'
export { DEVELOPMENT_CHAIN_ID, QR_CIPHERTEXT_LIMIT, ZERO_TX_HASH } from './formats/constants.ts'
export { escapeDisplayControls, firstDisplayControl } from './formats/display-text.ts'
export {
  DecryptionFailedError,
  type FieldIssue,
  FormatError,
  type FormatErrorCode,
  InvalidBase64UrlError,
  InvalidCipherInputError,
  InvalidHexError,
  InvalidMetadataError,
  InvalidPayloadError,
  InvalidQrUrlError,
  PayloadTooLargeError,
} from './formats/errors.ts'
export {
  isEmailAddress,
  SIGNER_TYPES,
  type SignerType,
  TRUST_ANCHORS,
  type TrustAnchor,
} from './formats/field-rules.ts'
export { fromHex, isHex, LOWER_HEX_HASH, toHex } from './formats/hex.ts'
export {
  type AttestedIdentityInput,
  decideIdentity,
  type IdentityAttestation,
  type IdentityDecision,
  type IdentityMismatch,
  type IdentityState,
  identityCommitment,
  parseIdentityAttestation,
} from './formats/identity-attestation.ts'
export {
  decryptPayload,
  encryptedPayloadLength,
  encryptPayload,
  generatePayloadKey,
  PAYLOAD_KEY_BYTES,
  PAYLOAD_NONCE_BYTES,
  PAYLOAD_TAG_BYTES,
} from './formats/payload-cipher.ts'
export {
  type AnchoringDetails,
  isoTimestampFromUnix,
  PDF_METADATA_VERSION,
  type PdfMetadata,
  type PdfSignature,
  parsePdfMetadata,
  type RebuiltPayload,
  readPdfMetadata,
  rebuildPayloadFromMetadata,
  signatureFromPayload,
  writePdfMetadata,
} from './formats/pdf-metadata.ts'
export {
  buildQrUrl,
  parseQrUrl,
  type QrUrlParts,
  txHashFromBase64Url,
  txHashToBase64Url,
} from './formats/qr-url.ts'
export { type AnchorReference, anchorAttribute, readAnchorAttribute } from './pdf/anchor-attribute.ts'
export { anchoredSignatureCms } from './pdf/anchored-signature.ts'
export {
  DEFAULT_STAMP_SIZE,
  MAX_STAMP_SIZE,
  MIN_STAMP_SIZE,
  type StampPlacement,
  type StampRect,
} from './pdf/append-signature-revision.ts'
export type { Certification } from './pdf/certification.ts'
export type { PdfSignatureCheck, Revocation } from './pdf/check-pdf-signatures.ts'
export {
  type AnchorRecord,
  type CheckSignedPdfOptions,
  checkSignedPdf,
  type PdfCheckResult,
  type SignatureCheck,
  TIMESTAMP_WINDOW_SECONDS,
} from './pdf/check-signed-pdf.ts'
export { type CmsSignatureCheck, checkCmsSignature } from './pdf/cms/cms-signature.ts'
export {
  bytesEqual,
  certificateDer,
  certificateOf,
  OID as CMS_OID,
  pemCertificates,
  signedDataOf,
} from './pdf/cms/der.ts'
export {
  addUnsignedAttribute,
  buildSignedData,
  type CmsSigner,
  contentInfoDer,
  type SignedDataInput,
  signatureValue,
} from './pdf/cms/signed-data.ts'
export { messageDigestOf, signerCertificateOf, signerInfoVerifies } from './pdf/cms/signer-info-signature.ts'
export { certificationRequest, makeSignerKey } from './pdf/cms/signer-request.ts'
export {
  type DocumentSigningKey,
  EC_SIGNING_KEY,
  ecdsaDer,
  webCryptoSigningKey,
} from './pdf/cms/signing-key.ts'
export { checkTimestampToken, type TimestampCheck, type Timestamped } from './pdf/cms/timestamp-token.ts'
export { distinguishedName, NAME_OID } from './pdf/cms/x509-name.ts'
export { commonName, subjectText } from './pdf/cms/x509-text.ts'
export {
  addLongTermValidation,
  type LongTermValidationOptions,
  type LongTermValidationResult,
} from './pdf/long-term-validation.ts'
export { PdfError, type PdfErrorCode } from './pdf/pdf-errors.ts'
export { MAX_PDF_BYTES } from './pdf/read-budget.ts'
export {
  latestMetadata,
  METADATA_CATALOG_KEY,
  readSignedPdf,
  type SignedPdf,
  type SignedPdfRevision,
} from './pdf/read-signed-pdf.ts'
export type { ChangeKind, RevisionChange, RevisionNote } from './pdf/revision-changes.ts'
export type { StructureProblem } from './pdf/revision-structure.ts'
export type { RevocationSource } from './pdf/revocation-source.ts'
export {
  type AnchorRequest,
  type PdfSignatureRequest,
  type SignPdfOptions,
  type SignPdfResult,
  signPdf,
} from './pdf/sign-pdf.ts'
export { describeChanges } from './pdf/signature-changes.ts'
export {
  ANCHOR_ATTRIBUTE_OID,
  certificateEmail,
  PROJECT_ARC,
  SIGNER_EKU,
  SIGNER_POLICY_OID,
} from './pdf/signer-profile.ts'
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  WebhookVerificationError,
  type WebhookVerificationKeys,
} from './webhooks/verify-webhook.ts'
