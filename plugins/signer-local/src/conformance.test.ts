/**
 * The signer conformance suite (`@certsmith/signer-testkit`) against this plugin, loaded the way the
 * server loads it: options `{ certFile, keyFile }` relative to the config directory.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createSignerContext } from '@certsmith/signer-api';
import { createTestCa, describeSignerConformance } from '@certsmith/signer-testkit';
import { afterAll, beforeAll } from 'vitest';

import plugin from './index.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signer-local-conformance-'));
  const [p256, rsa, other] = await Promise.all([createTestCa(), createTestCa({ key: 'rsa-2048' }), createTestCa()]);
  await Promise.all([
    writeFile(join(dir, 'p256.pem'), p256.certificatePem),
    writeFile(join(dir, 'p256-key.pem'), p256.privateKeyPem, { mode: 0o600 }),
    writeFile(join(dir, 'rsa.pem'), rsa.certificatePem),
    writeFile(join(dir, 'rsa-key.pem'), rsa.privateKeyPem, { mode: 0o600 }),
    writeFile(join(dir, 'other.pem'), other.certificatePem),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const context = () => createSignerContext({ configDir: dir });

describeSignerConformance(plugin, { certFile: 'p256.pem', keyFile: 'p256-key.pem' }, {
  title: '@certsmith/signer-local conformance (ECDSA P-256 CA)',
  context,
  invalidOptions: [
    { title: 'an empty keyFile', options: { certFile: 'p256.pem', keyFile: '' } },
    { title: 'a keyFile that does not exist', options: { certFile: 'p256.pem', keyFile: 'missing-key.pem' }, code: 2001 },
    { title: 'a certFile that does not exist', options: { certFile: 'missing.pem', keyFile: 'p256-key.pem' }, code: 1001 },
    { title: 'a key that does not match the certificate', options: { certFile: 'other.pem', keyFile: 'p256-key.pem' }, code: 2300 },
  ],
});

describeSignerConformance(plugin, { certFile: 'rsa.pem', keyFile: 'rsa-key.pem' }, {
  title: '@certsmith/signer-local conformance (RSA 2048 CA)',
  context,
});
