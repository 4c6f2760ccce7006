import { execFileSync } from 'node:child_process';
import { X509Certificate, createPublicKey } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createSignerContext } from '@certsmith/signer-api';
import { ObjectClass } from 'graphene-pk11';
import pkcs11js from 'pkcs11js';

import {
  createCertificateSigningRequest,
  createSelfSignedCaCertificate,
  generateKeyPair,
  listKeys,
  listSlots,
  parseExpiry,
} from './hsm-admin.js';
import { acquireModule } from './module-registry.js';
import { certificateText, csrText, opensslVerifies } from './test-support/openssl.js';
import type { SoftHsm, SoftHsmToken } from './test-support/softhsm.js';
import { setUpSoftHsm } from './test-support/softhsm.js';
import { findObjects, findTokenSlot, login, openSession } from './token-selector.js';

// SOFTHSM2_CONF must be set before the module is loaded: set up at import time, before any test.
const softHsm: SoftHsm = setUpSoftHsm();
const PIN = 'adm-93c1f';
const token: SoftHsmToken = softHsm.initToken('admin', { pin: PIN });
const context = createSignerContext({ configDir: softHsm.dir, env: { HSM_PIN: PIN, WRONG_PIN: '0000' } });
const tokenOptions = { module: softHsm.modulePath, tokenLabel: 'admin', pin: 'env:HSM_PIN', context };

afterAll(() => softHsm.cleanup());

beforeAll(async () => {
  await generateKeyPair({ ...tokenOptions, keyLabel: 'rsa-ca', algorithm: 'rsa', size: 2048 });
  await generateKeyPair({ ...tokenOptions, keyLabel: 'p256-ca', keyId: 'a1b2', algorithm: 'ecdsa', size: 256 });
  await generateKeyPair({ ...tokenOptions, keyLabel: 'p384-ca', algorithm: 'ecdsa', size: 384 });
});

describe('listSlots', () => {
  it('lists the initialised token with its slot ID and serial when called without a PIN', async () => {
    const slots = await listSlots({ module: softHsm.modulePath });
    const slot = slots.find((entry) => entry.token?.label === 'admin');
    expect(slot).toMatchObject({ slot: token.slot, tokenPresent: true, token: { initialized: true, loginRequired: true, model: 'SoftHSM v2' } });
    expect(slot?.token?.serial).toMatch(/^[0-9a-f]{16}$/);
  });

  it('rejects with 2000 naming options.module when the library does not exist', async () => {
    await expect(listSlots({ module: '/nonexistent/libpkcs11.so' })).rejects.toMatchObject({
      code: 2000,
      message: expect.stringContaining('options.module: cannot load PKCS#11 module /nonexistent/libpkcs11.so'),
    });
  });
});

describe('generateKeyPair', () => {
  it('returns the public key and id of a new key when given ecdsa 256', async () => {
    const generated = await generateKeyPair({ ...tokenOptions, keyLabel: 'fresh', keyId: '0F0E', algorithm: 'ecdsa', size: 256 });
    expect(generated).toMatchObject({ keyLabel: 'fresh', keyId: '0f0e', algorithm: 'ecdsa', size: 256 });
    const key = createPublicKey(generated.publicKeyPem);
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(generated.subjectKeyId).toMatch(/^[0-9a-f]{40}$/);
  });

  it('creates sensitive, never-extractable token keys when generating', async () => {
    const objects = await listKeys(tokenOptions);
    const privateKeys = objects.filter((object) => object.class === 'private-key');
    expect(privateKeys.map((key) => key.label).sort()).toEqual(expect.arrayContaining(['p256-ca', 'p384-ca', 'rsa-ca']));
    for (const key of privateKeys) {
      expect(key).toMatchObject({ sign: true, sensitive: true, extractable: false, alwaysSensitive: true, neverExtractable: true });
    }
    expect(privateKeys.find((key) => key.label === 'rsa-ca')).toMatchObject({ keyType: 'RSA', size: 2048 });
    expect(privateKeys.find((key) => key.label === 'p384-ca')).toMatchObject({ keyType: 'EC', curve: 'P-384', size: 384 });
    expect(privateKeys.find((key) => key.label === 'p256-ca')).toMatchObject({ id: 'a1b2', curve: 'P-256' });
  });

  it('hides private keys when listing without a PIN', async () => {
    const objects = await listKeys({ module: softHsm.modulePath, tokenLabel: 'admin', context });
    expect(objects.some((object) => object.class === 'private-key')).toBe(false);
    expect(objects.some((object) => object.class === 'public-key' && object.label === 'rsa-ca')).toBe(true);
  });

  it('refuses every export of the private key when asked through PKCS#11 and pkcs11-tool', async () => {
    const lease = acquireModule(softHsm.modulePath);
    const session = openSession(findTokenSlot(lease.module, { tokenLabel: 'admin' }), true);
    try {
      login(session, PIN);
      for (const label of ['rsa-ca', 'p256-ca']) {
        const key = findObjects(session, ObjectClass.PRIVATE_KEY, { keyLabel: label })[0]!;
        // Reading the secret part: CKA_PRIVATE_EXPONENT (RSA) or CKA_VALUE (EC).
        const secret = label === 'rsa-ca' ? { privateExponent: null } : { value: null };
        expect(() => key.getAttribute(secret)).toThrow(/CKR_ATTRIBUTE_SENSITIVE/);
        // Wrapping it under a session AES key: the token refuses because CKA_EXTRACTABLE is false.
        const wrappingKey = lease.module.lib.C_GenerateKey(session.handle, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
          { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
          { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
          { type: pkcs11js.CKA_WRAP, value: true },
          { type: pkcs11js.CKA_TOKEN, value: false },
        ]);
        expect(() => lease.module.lib.C_WrapKey(session.handle, { mechanism: pkcs11js.CKM_AES_KEY_WRAP_PAD }, wrappingKey, key.handle, Buffer.alloc(8192))).toThrow(
          /CKR_KEY_UNEXTRACTABLE/,
        );
      }
    } finally {
      session.close();
      lease.release();
    }
    // An independent PKCS#11 client sees the same protection and a sign-only usage.
    const listing = execFileSync(
      'pkcs11-tool',
      ['--module', softHsm.modulePath, '--token-label', 'admin', '--login', '--pin', PIN, '--list-objects', '--type', 'privkey'],
      { env: softHsm.env, encoding: 'utf8', stdio: 'pipe' },
    );
    const rsaEntry = listing.split(/(?=Private Key Object)/).find((entry) => entry.includes('label:      rsa-ca'));
    expect(rsaEntry).toMatch(/Usage:\s+sign\n/);
    expect(rsaEntry).toMatch(/Access:\s+sensitive, always sensitive, never extractable, local/);
  });

  it('rejects with 2000 naming keyLabel when the label is taken', async () => {
    await expect(generateKeyPair({ ...tokenOptions, keyLabel: 'rsa-ca', algorithm: 'ecdsa', size: 256 })).rejects.toMatchObject({
      code: 2000,
      message: expect.stringContaining('options.keyLabel: a private key labelled "rsa-ca" already exists'),
    });
  });

  it('rejects with 2000 naming size when the size does not fit the algorithm', async () => {
    await expect(generateKeyPair({ ...tokenOptions, keyLabel: 'x', algorithm: 'rsa', size: 1024 })).rejects.toMatchObject({
      code: 2000,
      message: '@certsmith/signer-pkcs11 hsm: options.size: must be 2048, 3072 or 4096 for rsa, got 1024',
    });
  });

  it('rejects with 2000 naming the PIN when the PIN is wrong, and never shows it', async () => {
    const failure = generateKeyPair({ ...tokenOptions, pin: 'env:WRONG_PIN', keyLabel: 'x', algorithm: 'ecdsa', size: 256 });
    await expect(failure).rejects.toMatchObject({ code: 2000, message: '@certsmith/signer-pkcs11 hsm: options.pin: login failed (CKR_PIN_INCORRECT)' });
  });
});

describe('createSelfSignedCaCertificate', () => {
  it.each([
    ['p256-ca', 'ecdsa-with-SHA256', 'NIST CURVE: P-256'],
    ['p384-ca', 'ecdsa-with-SHA384', 'NIST CURVE: P-384'],
    ['rsa-ca', 'sha256WithRSAEncryption', 'Public-Key: (2048 bit)'],
  ])('issues a CFSSL initca-style CA signed on the token when the key is %s', async (keyLabel, signature, keyText) => {
    const now = new Date('2026-11-22T03:24:41Z');
    const result = await createSelfSignedCaCertificate({
      ...tokenOptions,
      keyLabel,
      subject: { CN: `${keyLabel} root`, names: [{ C: 'US', O: 'certsmith', OU: 'HSM' }] },
      now,
    });
    expect(result.storedOnToken).toBe(true);
    const text = certificateText(result.certificatePem);
    expect(text).toContain(`Signature Algorithm: ${signature}`);
    expect(text).toContain(keyText);
    expect(text).toContain(`Subject: C = US, O = certsmith, OU = HSM, CN = ${keyLabel} root`);
    expect(text).toMatch(/X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign/);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:TRUE\n/);
    expect(text).toContain('X509v3 Subject Key Identifier');
    expect(text).not.toContain('Authority Key Identifier');
    const certificate = new X509Certificate(result.certificatePem);
    expect(new Date(certificate.validFrom).toISOString()).toBe('2026-11-22T03:20:00.000Z');
    expect(new Date(certificate.validTo).getTime() - new Date(certificate.validFrom).getTime()).toBe(43_800 * 3_600_000);
    expect(opensslVerifies(softHsm.dir, result.certificatePem, result.certificatePem, keyLabel)).toBe(true);
    // Stored next to the key, so a signer without `cert` finds it.
    const objects = await listKeys(tokenOptions);
    expect(objects.find((object) => object.class === 'certificate' && object.label === keyLabel)).toMatchObject({ subject: `/Country=US/Organization=certsmith/OrganizationalUnit=HSM/CommonName=${keyLabel} root` });
  });

  it('signs with RSA-PSS on the token when asked, and openssl verifies it', async () => {
    const result = await createSelfSignedCaCertificate({
      ...tokenOptions,
      keyLabel: 'rsa-ca',
      subject: { CN: 'pss root' },
      signatureAlgorithm: 'RSA-PSS-SHA384',
      expiry: '8760h',
      pathLength: 1,
      storeOnToken: false,
    });
    expect(result.storedOnToken).toBe(false);
    const text = certificateText(result.certificatePem);
    expect(text).toContain('Signature Algorithm: rsassaPss');
    expect(text).toMatch(/Hash Algorithm: sha384/);
    expect(text).toMatch(/Salt Length: 0x30/);
    expect(text).toContain('CA:TRUE, pathlen:1');
    expect(opensslVerifies(softHsm.dir, result.certificatePem, result.certificatePem, 'pss')).toBe(true);
  });

  it('rejects with 2000 when a certificate is already stored for the key', async () => {
    await expect(createSelfSignedCaCertificate({ ...tokenOptions, keyLabel: 'p256-ca', subject: { CN: 'again' } })).rejects.toMatchObject({
      code: 2000,
      message: expect.stringContaining('options.storeOnToken: token labelled "admin" already holds a certificate labelled "p256-ca"'),
    });
  });

  it('rejects with 2000 naming keyLabel when the key does not exist', async () => {
    await expect(createSelfSignedCaCertificate({ ...tokenOptions, keyLabel: 'nope', subject: { CN: 'x' } })).rejects.toMatchObject({
      code: 2000,
      message: '@certsmith/signer-pkcs11 hsm: options.keyLabel: no private key labelled "nope" on token labelled "admin"',
    });
  });
});

describe('createCertificateSigningRequest', () => {
  it('builds a CA CSR signed on the token with the requested names when given hosts', async () => {
    const result = await createCertificateSigningRequest({
      ...tokenOptions,
      keyId: 'a1b2',
      subject: { CN: 'intermediate', names: [{ C: 'GB', L: 'London', O: 'certsmith' }] },
      hosts: ['ca.example.com', '192.0.2.7', '2001:db8::1', 'pki@example.com', 'spiffe://example.org/ca'],
      pathLength: 0,
    });
    const text = csrText(result.csrPem);
    expect(text).toContain('Subject: C = GB, L = London, O = certsmith, CN = intermediate');
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(text).toMatch(/DNS:ca\.example\.com, email:pki@example\.com, IP Address:192\.0\.2\.7, IP Address:2001:DB8:0:0:0:0:0:1, URI:spiffe:\/\/example\.org\/ca/);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:TRUE, pathlen:0/);
  });
});

describe('parseExpiry', () => {
  it('reads hours, minutes and seconds when given a Go duration', () => {
    expect(parseExpiry('43800h')).toBe(43_800 * 3_600_000);
    expect(parseExpiry('1h30m15s')).toBe(5_415_000);
  });

  it('throws 2000 naming expiry when given something else', () => {
    expect(() => parseExpiry('5y')).toThrow(/options\.expiry: must be a duration/);
  });
});
