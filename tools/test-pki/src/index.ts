/**
 * `@certsmith/test-pki`: generates test certificate hierarchies at test time (never pasted blobs).
 * Private to the repository; consumed as TypeScript source through the `@certsmith/source` condition.
 */
export { TestPki, chainPem, trimmedPem } from './test-pki.js';
export type { RoleOptions } from './test-pki.js';
export {
  buildCertificate,
  encodeName,
  keyIdentifier,
  subjectPublicKeyBits,
  KEY_USAGE_BITS,
} from './certificate-builder.js';
export type {
  CertificateOptions,
  TestCertificate,
  NameSpec,
  NameFields,
  RawExtension,
  NameConstraintSet,
  SignatureHash,
  KeyUsageName,
} from './certificate-builder.js';
export { testKey } from './keys.js';
export type { KeySpec, TestKey } from './keys.js';
export { toPem, sequence, oid, octetString, nullValue, utf8String } from './der.js';
