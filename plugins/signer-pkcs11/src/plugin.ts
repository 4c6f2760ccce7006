/**
 * The `@certsmith/signer-pkcs11` plugin definition: a `signers` config entry
 * `{ "plugin": "@certsmith/signer-pkcs11", "options": { "module", "tokenLabel", "keyLabel", "pin": "env:HSM_PIN", … } }`.
 * `create` must run on the main thread (see `module-registry.ts`): the server constructs signers
 * there and ships only DER to its workers.
 */
import { defineSigner } from '@certsmith/signer-api';

import { PKCS11_OPTIONS_SCHEMA, validatePkcs11Options } from './options.js';
import type { Pkcs11SignerOptions } from './options.js';
import { PLUGIN_NAME } from './pkcs11-errors.js';
import { createPkcs11Signer } from './pkcs11-signer.js';

/** The plugin definition (default export of the package). */
export const pkcs11SignerPlugin = defineSigner<Pkcs11SignerOptions>({
  meta: { name: PLUGIN_NAME, apiVersion: '^1.0.0', version: '0.1.0' },
  optionsSchema: PKCS11_OPTIONS_SCHEMA,
  validateOptions: validatePkcs11Options,
  create: createPkcs11Signer,
});
