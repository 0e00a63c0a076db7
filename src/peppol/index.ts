/**
 * The Peppol network layer's building blocks (no HTTP server, no storage, no workflows here):
 * identifiers, SBDH, SML and SMP lookup, keys and certificates, and the AS4 message in both directions.
 * The test PKI generator is test code (test/support/peppol/test-pki.ts), used by the tests and `npm run pki:test`.
 */
export * from './peppol-error';
export * from './identifiers';
export * from './sbdh';
export * from './sml';
export { SmpClient, documentTypeFromHref } from './smp-client';
export type {
  SmpClientOptions,
  SmpEndpoint,
  SmpProcess,
  SignedServiceMetadata,
  EndpointLookupResult,
  ServiceGroup,
} from './smp-client';
export * from './smp-documents';
export { checkCertificate, assertCertificateValid, AP_KEY_USAGES, SMP_KEY_USAGES } from './pki/cert-validation';
export type { CertificateCheck, CertificateProblem, TrustPolicy } from './pki/cert-validation';
export {
  parseCertificate,
  parseCertificates,
  commonNameOf,
  keyUsagesOf,
  subjectMatches,
  fingerprintSha256,
} from './pki/certificates';
export {
  loadKeyMaterial,
  loadTrustedCertificates,
  keyMaterialFromPem,
  keyMaterialFromPkcs12,
} from './pki/key-material';
export type { KeyMaterial, KeySource, TrustSource } from './pki/key-material';
export { ApKeyRing } from './pki/key-ring';
export { readPkcs12, writePkcs12, Pkcs12Error } from './pki/pkcs12';
export { EbmsError, EBMS_ERRORS } from './as4/ebms-error';
export type { EbmsErrorCode } from './as4/ebms-error';
export { buildPeppolMessage, openPeppolMessage } from './as4/message';
export type {
  BuildPeppolMessageInput,
  OutgoingPeppolMessage,
  OpenPeppolMessageOptions,
  ReceivedPeppolMessage,
} from './as4/message';
export { buildReceipt, buildErrorSignal, readSignal } from './as4/signals';
export type { SignalResult, EbmsErrorEntry } from './as4/signals';
export type { SignatureReference } from './as4/signature';
export type { UserMessage } from './as4/user-message';
