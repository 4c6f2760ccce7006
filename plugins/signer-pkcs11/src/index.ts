import { pkcs11SignerPlugin } from './plugin.js';

export { pkcs11SignerPlugin } from './plugin.js';
export { createPkcs11Signer, INITIAL_BACKOFF_MS, MAX_BACKOFF_MS } from './pkcs11-signer.js';
export type { Pkcs11Signer } from './pkcs11-signer.js';
export { PKCS11_OPTIONS_SCHEMA, MAX_CONCURRENCY, validatePkcs11Options } from './options.js';
export type { Pkcs11SignerOptions } from './options.js';
export type { TokenSelector, KeySelector } from './token-selector.js';
export { ecdsaSignatureToDer } from './mechanisms.js';
export {
  hsm,
  listSlots,
  listKeys,
  generateKeyPair,
  createSelfSignedCaCertificate,
  createCertificateSigningRequest,
  parseExpiry,
} from './hsm-admin.js';
export type {
  HsmModuleOptions,
  HsmTokenOptions,
  HsmKeyOptions,
  HsmSlotInfo,
  HsmTokenInfo,
  HsmObjectInfo,
  GenerateKeyPairOptions,
  GeneratedKeyPair,
  SelfSignedCaOptions,
  SelfSignedCaResult,
  CertificateSigningRequestOptions,
  CertificateSigningRequestResult,
} from './hsm-admin.js';

/**
 * The plugin definition: `{ "plugin": "@certsmith/signer-pkcs11", "options": { "module": "…",
 * "tokenLabel": "…", "keyLabel": "…", "pin": "env:HSM_PIN" } }`.
 */
export default pkcs11SignerPlugin;
