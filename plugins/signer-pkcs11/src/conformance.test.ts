/**
 * The signer conformance suite (`@certsmith/signer-testkit`) against this plugin, on a throw-away
 * SoftHSMv2 token (src/test-support/softhsm.ts): one RSA and one ECDSA P-384 CA key, each with its
 * self-signed certificate stored on the token, loaded with the PIN from the environment.
 */
import { createSignerContext } from '@certsmith/signer-api';
import { describeSignerConformance } from '@certsmith/signer-testkit';
import { afterAll, beforeAll } from 'vitest';

import { createSelfSignedCaCertificate, generateKeyPair } from './hsm-admin.js';
import plugin from './index.js';
import type { SoftHsm } from './test-support/softhsm.js';
import { setUpSoftHsm } from './test-support/softhsm.js';

// SOFTHSM2_CONF must be set before the PKCS#11 module is loaded: set up at import time.
const softHsm: SoftHsm = setUpSoftHsm();
const PIN = 'conformance-pin';
softHsm.initToken('conformance', { pin: PIN });

const context = () => createSignerContext({ configDir: softHsm.dir, env: { HSM_PIN: PIN } });
const options = (keyLabel: string) => ({ module: softHsm.modulePath, tokenLabel: 'conformance', keyLabel, pin: 'env:HSM_PIN' });

beforeAll(async () => {
  const admin = { module: softHsm.modulePath, tokenLabel: 'conformance', pin: 'env:HSM_PIN', context: context() };
  for (const [keyLabel, algorithm, size] of [
    ['rsa-ca', 'rsa', 2048],
    ['p384-ca', 'ecdsa', 384],
  ] as const) {
    await generateKeyPair({ ...admin, keyLabel, algorithm, size });
    await createSelfSignedCaCertificate({ ...admin, keyLabel, subject: { CN: `${keyLabel} conformance root`, names: [{ O: 'certsmith' }] } });
  }
}, 60_000);

afterAll(() => softHsm.cleanup());

const invalidOptions = [
  { title: 'an inline PIN', options: { ...options('rsa-ca'), pin: PIN } },
  { title: 'no token selector', options: { module: softHsm.modulePath, keyLabel: 'rsa-ca', pin: 'env:HSM_PIN' } },
  { title: 'a PIN variable that is not set', options: { ...options('rsa-ca'), pin: 'env:CONFORMANCE_UNSET' }, code: 2001 },
];

describeSignerConformance(plugin, options('rsa-ca'), { title: '@certsmith/signer-pkcs11 conformance (SoftHSM, RSA 2048)', context, invalidOptions });
describeSignerConformance(plugin, options('p384-ca'), { title: '@certsmith/signer-pkcs11 conformance (SoftHSM, ECDSA P-384)', context });
