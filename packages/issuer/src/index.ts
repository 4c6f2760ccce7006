export {
  DEFAULT_KEY_REQUEST,
  defaultCertificateRequest,
  decodeCertificateRequest,
  decodeNewCertificateRequest,
  decodeSignRequest,
  SIGN_REQUEST_PARSE_MESSAGE,
} from './certificate-request.js';
export type {
  KeyRequest,
  CaConfig,
  RequestExtension,
  CertificateRequest,
  NewCertificateRequest,
  SignBody,
  DecodeSignRequestOptions,
} from './certificate-request.js';
export { resolveKeySpec, generateKey, generateKeyInThread, exportPrivateKeyPem, ecdsaKeyBackend } from './key-generation.js';
export type { KeySpec, GeneratedKey, GenerateKeyOptions, RsaKeyGenerationMethod } from './key-generation.js';
export {
  RSA_PUBLIC_EXPONENT,
  generateRsaKeyFromPrimes,
  generatePrimeWithOpenSsl,
  rsaJwkFromPrimes,
  rsaPrimeSizes,
} from './rsa-key-from-primes.js';
export type { RsaKeyFromPrimes, RsaPrivateJwk, RsaFromPrimesOptions, PrimeSource, PrimePairRejection, PrimePairResult } from './rsa-key-from-primes.js';
export {
  MAX_KEY_POOL_CAPACITY,
  KeyPoolConfigError,
  createKeyPool,
  keySpecName,
  keySpecFromName,
  parseKeyPoolSizes,
  pooledKeySource,
} from './key-pool.js';
export type { KeyPool, KeyPoolOptions, KeyPoolSizes, KeyPoolSpecStats } from './key-pool.js';
export { preferredSignatureAlgorithm, chooseSignatureAlgorithm } from './signature-algorithms.js';
export { createCsr } from './csr.js';
export type { CsrTemplate, SignedCsr, SelfSigningKey } from './csr.js';
export { ExtensionOid, encodeExtension } from './extensions.js';
export type { ExtensionSpec, CertificatePolicy } from './extensions.js';
export {
  KEY_USAGES,
  EXT_KEY_USAGES,
  resolveUsages,
  selectProfile,
  policyHasAuthenticatedProfiles,
  policyHasUnauthenticatedProfiles,
} from './signing-policy.js';
export type { SigningPolicy, SigningProfile, CsrWhitelist, CaConstraint, AuthKey, EncodedProfileExtensions } from './signing-policy.js';
export { defaultSigningPolicy, parseSigningPolicy, loadSigningPolicyFile, readSigningPolicy, readSigningPolicyFile } from './signing-policy-loader.js';
export type { SigningPolicyOptions } from './signing-policy-loader.js';
export { resolveAuthKey, AuthKeyError } from './auth-keys.js';
export type { AuthKeyOptions } from './auth-keys.js';
export { CFSSL_CONFIG_KEYS, LINT_STATUS_LABELS } from './cfssl-config-schema.js';
export { UNSUPPORTED_CFSSL_KEYS } from './unsupported-config-keys.js';
export type { UnsupportedCfsslKey } from './unsupported-config-keys.js';
export { ConfigReport, ConfigProblemsError, describeProblem, formatPath, joinPath } from './config-problems.js';
export type { ConfigProblem, ConfigWarning, JsonPathSegment } from './config-problems.js';
export { parseGoDuration, parseGoDurationNanoseconds, GoDurationError } from './go-duration.js';
export { parseGoJson, JsonNumberLiteral } from './go-json-text.js';
export { jsonKind } from './go-json.js';
export { compileGoRegexp, matchGoRegexp, GoRegexpSyntaxError } from './go-regexp.js';
export type { GoRegexp } from './go-regexp.js';
export { getIssuerContext, clearIssuerContext } from './issuer-context.js';
export type { IssuerContext } from './issuer-context.js';
export { issueCertificate } from './certificate-template.js';
export type { CsrFacts, SignOverrides, IssuedCertificate } from './certificate-template.js';
export { computeSums } from './sums.js';
export type { Sums } from './sums.js';
export {
  computeAuthToken,
  createAuthenticatedRequest,
  verifyAuthenticatedRequest,
  decodeAuthenticatedRequestBody,
} from './auth-token.js';
export type { AuthenticatedRequest } from './auth-token.js';
export {
  NO_HOSTS_MESSAGE,
  NO_BUNDLER_MESSAGE,
  generateKeyAndCsr,
  issueNewCertificate,
  signCertificateRequest,
  signOverridesOf,
  assertUnauthenticatedSigningAllowed,
  authenticateSignRequest,
  signerInfo,
} from './use-cases.js';
export type {
  ResultMessage,
  KeyAndCsrResult,
  NewCertificateResult,
  SignResult,
  IssueNewCertificateInput,
  KeyGenerationOptions,
} from './use-cases.js';
export {
  KeyGenerationError,
  CsrRequestError,
  InvalidPolicyError,
  UnknownProfileError,
  NoKeyUsagesError,
  PolicyViolationError,
  NameWhitelistError,
  MissingSerialError,
  InvalidCertificateRequestError,
} from './errors.js';
