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
export { issueCertificate, signOverridesOf } from './certificate-template.js';
export type { CsrFacts, SignOverrides, IssuedCertificate } from './certificate-template.js';
export { computeSums } from './sums.js';
export type { Sums } from './sums.js';
export {
  NO_HOSTS_MESSAGE,
  NO_BUNDLER_MESSAGE,
  NEWKEY_TASKS,
  NEWCERT_TASKS,
  SIGN_TASKS,
  createIssuer,
  newKey,
} from './issuer.js';
export type {
  Issuer,
  IssuerOptions,
  IssueCall,
  IssuingTaskRunner,
  IssuedCertificateRecord,
  RecordIssued,
  NewCertificateInput,
  NewCertificateOutcome,
  SignOutcome,
  NewKeyOutcome,
  ResultMessage,
} from './issuer.js';
export type { SignatureSite } from './route-signing.js';
export { createSignerDirectory, DEFAULT_LABEL } from './signer-directory.js';
export type { SignerDirectory, SignerEntry, SignerRoute, WorkerSignerRecipe } from './signer-directory.js';
export { DEFAULT_SIGNER_TIMEOUT_MS, withSignerTimeout } from './signer-timeout.js';
export { issuingWorkerInits } from './worker-setup.js';
export type { IssuingWorkerSetup } from './worker-setup.js';
export { provideWorkerSigners, workerSignerSpecs } from './worker-signers.js';
export type { WorkerSignerSpec } from './worker-signers.js';
export { provideWorkerIssuedHook, workerIssuedHookInit } from './worker-issued-hook.js';
export type { CreateWorkerIssuedHook, WorkerIssuedCertificate, WorkerIssuedHook, WorkerIssuedHookResult, WorkerIssuedHookSpec } from './worker-issued-hook.js';
export { perWorkerKeyPool, provideThreadKeySource, workerKeyPool } from './worker-key-pool.js';
export { keyAndCsrTask } from './key-and-csr-task.js';
export type { KeyAndCsrTaskInput, KeyAndCsrTaskOutput } from './key-and-csr-task.js';
export { csrFactsTask } from './csr-facts-task.js';
export type { CsrFactsTaskInput } from './csr-facts-task.js';
export { newcertInWorkerTask } from './newcert-in-worker-task.js';
export type { NewcertInWorkerInput, NewcertInWorkerOutput } from './newcert-in-worker-task.js';
export { signInWorkerTask } from './sign-in-worker-task.js';
export type { SignInWorkerInput, SignInWorkerOutput } from './sign-in-worker-task.js';
export { generateKeyAndCsr } from './key-and-csr.js';
export type { KeyAndCsrResult, KeyGenerationOptions } from './key-and-csr.js';
export { authenticateSignRequest, peekAuthenticatedSignRequest } from './authenticated-sign-request.js';
export { decodeInfoRequest, signerInfo } from './signer-info.js';
export type { InfoRequest } from './signer-info.js';
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
  UnknownLabelError,
  SignerTimeoutError,
} from './errors.js';
