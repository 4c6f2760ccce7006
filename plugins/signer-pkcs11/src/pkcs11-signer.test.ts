import { X509Certificate, constants, verify } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LogFields, SignatureAlgorithm, SignerContext } from '@certsmith/signer-api';
import { createSigner, createSignerContext, signatureHash } from '@certsmith/signer-api';
import { issueThroughCertsmith } from '@certsmith/signer-testkit';

import { createSelfSignedCaCertificate, generateKeyPair, listSlots } from './hsm-admin.js';
import plugin from './index.js';
import type { Pkcs11Signer } from './pkcs11-signer.js';
import { certificateText, opensslVerifies } from './test-support/openssl.js';
import type { SoftHsm } from './test-support/softhsm.js';
import { setUpSoftHsm } from './test-support/softhsm.js';

// SOFTHSM2_CONF must be set before the module is loaded: set up at import time, before any test.
const softHsm: SoftHsm = setUpSoftHsm();
const PIN = 'pin-7f3a9c';
const token = softHsm.initToken('issuing', { pin: PIN });
const other = softHsm.initToken('other', { pin: PIN });
const logLines: string[] = [];
const logger = {
  debug: (message: string, fields?: LogFields) => logLines.push(`${message} ${JSON.stringify(fields ?? {})}`),
  info: (message: string, fields?: LogFields) => logLines.push(`${message} ${JSON.stringify(fields ?? {})}`),
  warn: (message: string, fields?: LogFields) => logLines.push(`${message} ${JSON.stringify(fields ?? {})}`),
  error: (message: string, fields?: LogFields) => logLines.push(`${message} ${JSON.stringify(fields ?? {})}`),
};
const context = (env: Record<string, string> = { HSM_PIN: PIN }): SignerContext => createSignerContext({ configDir: softHsm.dir, env, logger });
const adminOptions = { module: softHsm.modulePath, tokenLabel: 'issuing', pin: 'env:HSM_PIN', context: context() };
const signerOptions = (keyLabel: string, extra: Record<string, unknown> = {}) => ({ module: softHsm.modulePath, tokenLabel: 'issuing', keyLabel, pin: 'env:HSM_PIN', ...extra });
const caPems = new Map<string, string>();
const signers: Pkcs11Signer[] = [];

async function open(options: Record<string, unknown>, env?: Record<string, string>): Promise<Pkcs11Signer> {
  const signer = (await createSigner(plugin, options, context(env))) as Pkcs11Signer;
  signers.push(signer);
  return signer;
}

beforeAll(async () => {
  for (const [keyLabel, algorithm, size] of [
    ['rsa-ca', 'rsa', 2048],
    ['p256-ca', 'ecdsa', 256],
    ['p384-ca', 'ecdsa', 384],
  ] as const) {
    await generateKeyPair({ ...adminOptions, keyLabel, algorithm, size });
    const ca = await createSelfSignedCaCertificate({ ...adminOptions, keyLabel, subject: { CN: `${keyLabel} root`, names: [{ O: 'certsmith' }] } });
    caPems.set(keyLabel, ca.certificatePem);
  }
  // A key with no certificate anywhere, and one on another token for the mismatch test.
  await generateKeyPair({ ...adminOptions, keyLabel: 'bare', algorithm: 'ecdsa', size: 256 });
  await generateKeyPair({ ...adminOptions, tokenLabel: 'other', keyLabel: 'p256-ca', algorithm: 'ecdsa', size: 256 });
}, 60_000);

afterAll(async () => {
  await Promise.all(signers.map((signer) => signer.close()));
  softHsm.cleanup();
});

function verifies(certificatePem: string, data: Uint8Array, signature: Uint8Array, algorithm: SignatureAlgorithm): boolean {
  const key = new X509Certificate(certificatePem).publicKey;
  const hash = signatureHash(algorithm)!;
  const options = algorithm.startsWith('RSA-PSS') ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: { sha256: 32, sha384: 48, sha512: 64 }[hash] } : key;
  return verify(hash, data, options, signature);
}

describe('pkcs11SignerPlugin', () => {
  it('declares its name and contract range when imported', () => {
    expect(plugin.meta).toMatchObject({ name: '@certsmith/signer-pkcs11', apiVersion: '^1.0.0' });
  });

  it.each([
    ['rsa-ca', ['RSA-SHA256', 'RSA-SHA384', 'RSA-SHA512', 'RSA-PSS-SHA256', 'RSA-PSS-SHA384', 'RSA-PSS-SHA512'], 'sha256WithRSAEncryption'],
    ['p256-ca', ['ECDSA-SHA256', 'ECDSA-SHA384', 'ECDSA-SHA512'], 'ecdsa-with-SHA256'],
    ['p384-ca', ['ECDSA-SHA384', 'ECDSA-SHA256', 'ECDSA-SHA512'], 'ecdsa-with-SHA384'],
  ] as const)('issues leaf certificates that openssl verifies when the CA key is %s', async (keyLabel, algorithms, signatureName) => {
    const signer = await open(signerOptions(keyLabel));
    expect(signer.algorithms).toEqual(algorithms);
    const caPem = caPems.get(keyLabel)!;
    // No `cert` option: the certificate comes from the token.
    expect((await signer.getCertificate()).pem).toBe(caPem);
    const result = await issueThroughCertsmith(signer, { request: { CN: 'leaf.example.com', hosts: ['leaf.example.com', '192.0.2.10'], key: { algo: 'ecdsa', size: 256 } } });
    expect(opensslVerifies(softHsm.dir, caPem, result.certificatePem, keyLabel)).toBe(true);
    const text = certificateText(result.certificatePem);
    expect(text).toContain(`Signature Algorithm: ${signatureName}`);
    expect(text).toContain(`Issuer: O = certsmith, CN = ${keyLabel} root`);
    expect(text).toContain('DNS:leaf.example.com, IP Address:192.0.2.10');
    expect(text).toContain('X509v3 Authority Key Identifier');
  });

  it('signs verifiably with every advertised algorithm, RSA-PSS included, when the key is RSA', async () => {
    const signer = await open(signerOptions('rsa-ca'));
    const data = new TextEncoder().encode('tbs bytes');
    for (const algorithm of signer.algorithms) {
      const signature = await signer.sign(data, algorithm);
      expect(signature).toHaveLength(256);
      expect(verifies(caPems.get('rsa-ca')!, data, signature, algorithm)).toBe(true);
    }
  });

  it('returns DER ECDSA signatures for every hash when the key is P-384', async () => {
    const signer = await open(signerOptions('p384-ca'));
    const data = new TextEncoder().encode('tbs bytes');
    for (const algorithm of signer.algorithms) {
      const signature = await signer.sign(data, algorithm);
      expect(signature[0]).toBe(0x30);
      expect(verifies(caPems.get('p384-ca')!, data, signature, algorithm)).toBe(true);
    }
  });

  it('reads the certificate from options.cert relative to the config dir when given', async () => {
    writeFileSync(join(softHsm.dir, 'p256-ca.pem'), caPems.get('p256-ca')!);
    const signer = await open(signerOptions('p256-ca', { cert: 'p256-ca.pem' }));
    expect((await signer.getCertificate()).pem).toBe(caPems.get('p256-ca'));
  });

  it('finds the token by slot ID and by serial when given instead of the label', async () => {
    const serial = (await listSlots({ module: softHsm.modulePath })).find((slot) => slot.token?.label === 'issuing')!.token!.serial;
    const { tokenLabel: _label, ...withoutLabel } = signerOptions('p256-ca');
    const bySlot = await open({ ...withoutLabel, slot: token.slot });
    const bySerial = await open({ ...withoutLabel, tokenSerial: serial });
    expect((await bySlot.getCertificate()).pem).toBe(caPems.get('p256-ca'));
    expect((await bySerial.getCertificate()).pem).toBe(caPems.get('p256-ca'));
  });

  it('completes 200 concurrent signatures without error when maxConcurrency is 4', async () => {
    const signer = await open(signerOptions('p256-ca', { maxConcurrency: 4 }));
    const data = Array.from({ length: 200 }, (_, index) => new TextEncoder().encode(`tbs ${index}`));
    const started = performance.now();
    const signatures = await Promise.all(data.map((bytes) => signer.sign(bytes, 'ECDSA-SHA256')));
    const elapsed = performance.now() - started;
    signatures.forEach((signature, index) => expect(verifies(caPems.get('p256-ca')!, data[index]!, signature, 'ECDSA-SHA256')).toBe(true));
    logLines.push(`200 concurrent P-256 signatures in ${elapsed.toFixed(0)} ms`);
    expect(await signer.health()).toEqual({ ok: true });
  });

  it('never puts the PIN into a log line', () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.some((line) => line.includes(PIN))).toBe(false);
  });
});

describe('createSigner with @certsmith/signer-pkcs11 (creation errors)', () => {
  it('rejects with 2000 naming options.pin when the PIN is wrong, without the PIN', async () => {
    const failure = open({ ...signerOptions('p256-ca'), tokenLabel: 'other' }, { HSM_PIN: 'wrong-9911' });
    await expect(failure).rejects.toMatchObject({ code: 2000, message: 'signer plugin @certsmith/signer-pkcs11: options.pin: login failed (CKR_PIN_INCORRECT)' });
    await failure.catch((error: Error) => expect(error.message).not.toContain('wrong-9911'));
  });

  it('rejects with 2000 naming options.pin when the PIN is wrong and another signer is already logged in', async () => {
    // The token answers CKR_USER_ALREADY_LOGGED_IN without checking the PIN; the plugin compares it.
    await open(signerOptions('p256-ca'));
    await expect(open(signerOptions('p384-ca'), { HSM_PIN: 'wrong-9911' })).rejects.toMatchObject({
      code: 2000,
      message: 'signer plugin @certsmith/signer-pkcs11: options.pin: login failed (not the PIN this process is logged in to the token with)',
    });
  });

  it('rejects with 2000 naming options.pin when the PIN is inline, without the PIN', async () => {
    const failure = open({ ...signerOptions('p256-ca'), pin: PIN });
    await expect(failure).rejects.toMatchObject({ code: 2000, message: expect.stringContaining('options.pin: must be a reference, env:NAME or file:PATH') });
    await failure.catch((error: Error) => expect(error.message).not.toContain(PIN));
  });

  it('rejects with 2001 naming the variable when the PIN variable is not set', async () => {
    await expect(open(signerOptions('p256-ca'), {})).rejects.toMatchObject({
      code: 2001,
      message: 'signer plugin @certsmith/signer-pkcs11: options.pin: environment variable HSM_PIN is not set',
    });
  });

  it('reads the PIN from a file when given file:', async () => {
    writeFileSync(join(softHsm.dir, 'pin.txt'), `${PIN}\n`, { mode: 0o600 });
    const signer = await open({ ...signerOptions('p256-ca'), pin: 'file:pin.txt' });
    expect(signer.algorithms[0]).toBe('ECDSA-SHA256');
  });

  it('rejects with 2000 naming options.keyLabel when no key has the label', async () => {
    await expect(open(signerOptions('no-such-key'))).rejects.toMatchObject({
      code: 2000,
      message: 'signer plugin @certsmith/signer-pkcs11: options.keyLabel: no private key labelled "no-such-key" on token labelled "issuing"',
    });
  });

  it('rejects with 2000 naming options.tokenLabel and listing the tokens when the token does not exist', async () => {
    await expect(open({ ...signerOptions('p256-ca'), tokenLabel: 'missing' })).rejects.toMatchObject({
      code: 2000,
      message: 'signer plugin @certsmith/signer-pkcs11: options.tokenLabel: no initialized token labelled "missing" (present: "issuing", "other")',
    });
  });

  it('rejects with 2000 naming options.module when the library path does not exist', async () => {
    await expect(open({ ...signerOptions('p256-ca'), module: 'lib/missing-pkcs11.so' })).rejects.toMatchObject({
      code: 2000,
      message: expect.stringContaining(`options.module: cannot load PKCS#11 module ${join(softHsm.dir, 'lib/missing-pkcs11.so')}`),
    });
  });

  it('rejects with 1001 naming options.cert when neither the option nor the token has a certificate', async () => {
    await expect(open(signerOptions('bare'))).rejects.toMatchObject({ code: 1001, message: expect.stringContaining('options.cert: not set, and token labelled "issuing" holds no certificate object') });
  });

  it('rejects with 2300 when the certificate belongs to another key', async () => {
    writeFileSync(join(softHsm.dir, 'p256-ca-cert.pem'), caPems.get('p256-ca')!);
    await expect(open({ ...signerOptions('p256-ca', { cert: 'p256-ca-cert.pem' }), tokenLabel: 'other' })).rejects.toMatchObject({ code: 2300 });
  });

  it('rejects with 2000 when options do not pass the schema', async () => {
    await expect(open({ ...signerOptions('p256-ca'), maxConcurrency: 'four' })).rejects.toMatchObject({
      code: 2000,
      // The article comes from signer-api's schema checker ("a integer" today); only the option name matters here.
      message: expect.stringMatching(/^signer plugin @certsmith\/signer-pkcs11: options\.maxConcurrency must be an? integer, got string$/),
    });
  });
});

describe('Pkcs11Signer.close', () => {
  it('is idempotent and makes sign fail with 2500 and health report down when closed', async () => {
    const signer = await open(signerOptions('p256-ca'));
    expect(await signer.health()).toEqual({ ok: true });
    await signer.close();
    await signer.close();
    expect(await signer.health()).toEqual({ ok: false, message: 'signer is closed' });
    await expect(signer.sign(new Uint8Array([1]), 'ECDSA-SHA256')).rejects.toMatchObject({ code: 2500 });
  });

  it('rejects with 2500 when asked for an algorithm the key cannot produce', async () => {
    const signer = await open(signerOptions('p256-ca'));
    await expect(signer.sign(new Uint8Array([1]), 'RSA-SHA256')).rejects.toMatchObject({ code: 2500 });
  });
});
