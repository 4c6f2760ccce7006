/**
 * This plugin's own suite, as a third-party author writes it: the certsmith signer conformance
 * suite from @certsmith/signer-testkit for each key type, plus the plugin's own refusals.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createSignerContext } from '@certsmith/signer-api';
import type { TestCaKeyType } from '@certsmith/signer-testkit';
import { createTestCa, describeSignerConformance } from '@certsmith/signer-testkit';
import { afterAll, beforeAll } from 'vitest';

import plugin from './index.js';

let dir: string;
let ed25519Jwk = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signer-webcrypto-'));
  const types: TestCaKeyType[] = ['ecdsa-p256', 'ecdsa-p521', 'rsa-2048', 'ed25519'];
  for (const type of types) {
    const ca = await createTestCa({ key: type, commonName: `webcrypto ${type}` });
    // `alg` pins a JWK to one algorithm in WebCrypto; the plugin must cope with it.
    const jwk = type === 'rsa-2048' ? { ...ca.privateKeyJwk, alg: 'RS256', use: 'sig' } : ca.privateKeyJwk;
    await writeFile(join(dir, `${type}.jwk`), `${JSON.stringify(jwk)}\n`, { mode: 0o600 });
    await writeFile(join(dir, `${type}.pem`), ca.certificatePem);
    if (type === 'ed25519') ed25519Jwk = JSON.stringify(jwk);
  }
  const other = await createTestCa();
  const { d: _d, ...publicJwk } = other.privateKeyJwk;
  await writeFile(join(dir, 'other.pem'), other.certificatePem);
  await writeFile(join(dir, 'public.jwk'), JSON.stringify(publicJwk));
  await writeFile(join(dir, 'not-json.jwk'), '-----BEGIN PRIVATE KEY-----\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const context = () => createSignerContext({ configDir: dir, env: { CA_JWK: ed25519Jwk } });

describeSignerConformance(plugin, { keyFile: 'ecdsa-p256.jwk', certFile: 'ecdsa-p256.pem' }, {
  title: 'certsmith-signer-webcrypto-example conformance (P-256)',
  context,
  invalidOptions: [
    { title: 'an empty keyFile', options: { keyFile: ' ', certFile: 'ecdsa-p256.pem' } },
    { title: 'a certFile given as env:', options: { keyFile: 'ecdsa-p256.jwk', certFile: 'env:CA_PEM' } },
    { title: 'a keyFile that is not JSON', options: { keyFile: 'not-json.jwk', certFile: 'ecdsa-p256.pem' } },
    { title: 'a public JWK', options: { keyFile: 'public.jwk', certFile: 'other.pem' } },
    { title: 'a keyFile that does not exist', options: { keyFile: 'missing.jwk', certFile: 'ecdsa-p256.pem' }, code: 2001 },
    { title: 'a certFile that does not exist', options: { keyFile: 'ecdsa-p256.jwk', certFile: 'missing.pem' }, code: 1001 },
    { title: "another key's certificate", options: { keyFile: 'ecdsa-p256.jwk', certFile: 'other.pem' }, code: 2300 },
  ],
});

describeSignerConformance(plugin, { keyFile: 'file:ecdsa-p521.jwk', certFile: 'ecdsa-p521.pem' }, {
  title: 'certsmith-signer-webcrypto-example conformance (P-521: long-form DER signatures)',
  context,
});

describeSignerConformance(plugin, { keyFile: 'rsa-2048.jwk', certFile: 'rsa-2048.pem' }, {
  title: 'certsmith-signer-webcrypto-example conformance (RSA 2048, JWK with alg)',
  context,
});

describeSignerConformance(plugin, { keyFile: 'env:CA_JWK', certFile: 'ed25519.pem' }, {
  title: 'certsmith-signer-webcrypto-example conformance (Ed25519 from env:)',
  context,
});
