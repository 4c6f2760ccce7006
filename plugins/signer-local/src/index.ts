import { localSignerPlugin } from './plugin.js';

export { localSignerPlugin, loadLocalSigner } from './plugin.js';
export type { LocalSignerOptions } from './plugin.js';
export { createLocalSigner, createLocalSignerFromPem, parseCaCertificate } from './local-signer.js';
export type { LocalSigner } from './local-signer.js';
export { createDevelopmentCa, readDevelopmentCa, buildSelfSignedCaCertificate } from './development-ca.js';
export type { DevelopmentCa, DevelopmentCaOptions } from './development-ca.js';

/** The plugin definition: `["@certsmith/signer-local", { "certFile": "...", "keyFile": "..." }]`. */
export default localSignerPlugin;
