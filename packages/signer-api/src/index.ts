export { SIGNATURE_ALGORITHMS, isSignatureAlgorithm, signatureHash } from './signature-algorithm.js';
export { algorithmsForKeyObject, signWithKeyObject } from './key-object-signing.js';
export { createPrivateKeySigning } from './private-key-signing.js';
export type { PrivateKeySigning } from './private-key-signing.js';
export type { SignatureAlgorithm } from './signature-algorithm.js';
export type {
  SubjectName,
  SignRequestSubject,
  SignRequestExtension,
  SignRequest,
  SignRequestResult,
  InfoRequest,
  InfoResult,
} from './sign-request.js';
export type { Signer, SignerCertificate, SignerHealth } from './signer.js';
export {
  computeAuthToken,
  createAuthenticatedRequest,
  verifyAuthenticatedRequest,
  decodeAuthenticatedRequestBody,
} from './authenticated-request.js';
export type { AuthenticatedRequest } from './authenticated-request.js';
export { SignerUnavailableError, SignerConfigurationError, SignerApiVersionError, SecretReferenceError } from './errors.js';
export { SIGNER_EVENTS, createSignerContext, isSignerEvent, parseSecretReference, silentLogger } from './signer-context.js';
export type { SignerContext, SignerContextOptions, SignerEvent, SignerLogger, LogFields, SecretReference } from './signer-context.js';
export { checkOptionsSchema } from './options-schema.js';
export type { OptionsSchema } from './options-schema.js';
export { satisfiesVersionRange } from './version-range.js';
export {
  SIGNER_API_VERSION,
  defineSigner,
  isSignerPlugin,
  resolveSignerPlugin,
  assertSignerApiCompatible,
  validateSignerOptions,
  assertSignerShape,
  createSigner,
} from './define-signer.js';
export type { SignerPlugin, SignerPluginDefinition, SignerPluginMeta } from './define-signer.js';
export { checkSignerConformance } from './conformance.js';
export type { ConformanceCheck, ConformanceResult, ConformanceOptions } from './conformance.js';
