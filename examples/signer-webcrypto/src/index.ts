import { webCryptoSignerPlugin } from './plugin.js';

export { webCryptoSignerPlugin, createSignerFromFiles } from './plugin.js';
export type { WebCryptoSignerOptions } from './plugin.js';
export { createWebCryptoSigner, algorithmsForJwk, PLUGIN_NAME } from './webcrypto-signer.js';
export { p1363ToDer } from './ecdsa-der.js';
export { CertificateReadError, KeyMismatchError } from './errors.js';

/** The plugin definition, loaded by certsmith as the package's default export. */
export default webCryptoSignerPlugin;
