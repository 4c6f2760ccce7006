import { execFileSync } from 'node:child_process';
import { X509Certificate, constants, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SignatureAlgorithm } from '@certsmith/signer-api';
import { checkSignerConformance, createSigner, createSignerContext, signatureHash } from '@certsmith/signer-api';

import plugin from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'signer-local-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openssl(args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

const KEY_ARGS = {
  'P-256': ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  'P-384': ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  RSA: ['-newkey', 'rsa:2048'],
  Ed25519: ['-newkey', 'ed25519'],
} as const;

/** A CA made with openssl: returns the file names relative to `dir`. */
function makeCa(name: string, kind: keyof typeof KEY_ARGS): { cert: string; key: string } {
  openssl(['req', '-x509', ...KEY_ARGS[kind], '-nodes', '-keyout', join(dir, `${name}-key.pem`), '-out', join(dir, `${name}.pem`), '-subj', `/CN=${name}`, '-days', '2',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
  return { cert: `${name}.pem`, key: `${name}-key.pem` };
}

const context = () => createSignerContext({ configDir: dir });
let p256: { cert: string; key: string };

beforeAll(() => {
  p256 = makeCa('p256', 'P-256');
});

function verifies(certPem: string, data: Uint8Array, signature: Uint8Array, algorithm: SignatureAlgorithm): boolean {
  const key = new X509Certificate(certPem).publicKey;
  const options = algorithm.startsWith('RSA-PSS') ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: { sha256: 32, sha384: 48, sha512: 64 }[signatureHash(algorithm)!] } : key;
  return verify(signatureHash(algorithm), data, options, signature);
}

describe('localSignerPlugin', () => {
  it('declares its name and contract range when imported', () => {
    expect(plugin.meta).toMatchObject({ name: '@certsmith/signer-local', apiVersion: '^1.0.0' });
  });

  it.each([
    ['P-256', ['ECDSA-SHA256', 'ECDSA-SHA384', 'ECDSA-SHA512']],
    ['P-384', ['ECDSA-SHA384', 'ECDSA-SHA256', 'ECDSA-SHA512']],
    ['RSA', ['RSA-SHA256', 'RSA-SHA384', 'RSA-SHA512', 'RSA-PSS-SHA256', 'RSA-PSS-SHA384', 'RSA-PSS-SHA512']],
    ['Ed25519', ['Ed25519']],
  ] as const)('signs verifiably with every advertised algorithm when the CA key is %s', async (kind, algorithms) => {
    const files = makeCa(`ca-${kind}`, kind);
    const signer = await createSigner(plugin, { certFile: files.cert, keyFile: files.key }, context());
    expect(signer.algorithms).toEqual(algorithms);
    const { pem, der } = await signer.getCertificate();
    expect(pem).toBe(readFileSync(join(dir, files.cert), 'utf8'));
    expect(new X509Certificate(der).subject).toBe(`CN=ca-${kind}`);
    const data = new TextEncoder().encode('tbs bytes');
    for (const algorithm of algorithms) {
      const signature = await signer.sign!(data, algorithm);
      expect(verifies(pem, data, signature, algorithm)).toBe(true);
      if (algorithm.startsWith('ECDSA')) expect(signature[0]).toBe(0x30);
    }
    const conformance = await checkSignerConformance(signer);
    expect(conformance.checks.filter((check) => !check.ok)).toEqual([]);
  });

  it('reads the PEMs from environment variables when given env: references', async () => {
    const signer = await createSigner(plugin, { certFile: 'env:CA_PEM', keyFile: 'env:CA_KEY' }, createSignerContext({
      env: { CA_PEM: readFileSync(join(dir, p256.cert), 'utf8'), CA_KEY: readFileSync(join(dir, p256.key), 'utf8') },
    }));
    expect(signer.algorithms[0]).toBe('ECDSA-SHA256');
  });

  it('resolves file: references and absolute paths when given', async () => {
    const signer = await createSigner(plugin, { certFile: `file:${p256.cert}`, keyFile: join(dir, p256.key) }, context());
    expect((await signer.getCertificate()).pem).toContain('BEGIN CERTIFICATE');
  });

  it('rejects with 2300 when the key does not match the certificate', async () => {
    const other = makeCa('other', 'P-256');
    await expect(createSigner(plugin, { certFile: p256.cert, keyFile: other.key }, context())).rejects.toMatchObject({
      code: 2300,
      message: 'Private key does not match public key',
    });
  });

  it('rejects with 2100 when the key is encrypted', async () => {
    openssl(['pkcs8', '-topk8', '-in', join(dir, p256.key), '-out', join(dir, 'encrypted-key.pem'), '-passout', 'pass:secret', '-v2', 'aes-256-cbc']);
    await expect(createSigner(plugin, { certFile: p256.cert, keyFile: 'encrypted-key.pem' }, context())).rejects.toMatchObject({ code: 2100 });
    openssl(['ec', '-in', join(dir, p256.key), '-out', join(dir, 'legacy-encrypted.pem'), '-aes256', '-passout', 'pass:secret']);
    await expect(createSigner(plugin, { certFile: p256.cert, keyFile: 'legacy-encrypted.pem' }, context())).rejects.toMatchObject({ code: 2100 });
  });

  it('rejects with 1001 when the certificate file is missing and 2001 when the key file is', async () => {
    await expect(createSigner(plugin, { certFile: 'nope.pem', keyFile: p256.key }, context())).rejects.toMatchObject({ code: 1001 });
    await expect(createSigner(plugin, { certFile: p256.cert, keyFile: 'nope.pem' }, context())).rejects.toMatchObject({ code: 2001 });
  });

  it('rejects with 1002 when the certificate file holds no PEM and 1003 when it holds two', async () => {
    writeFileSync(join(dir, 'garbage.pem'), 'not a certificate');
    await expect(createSigner(plugin, { certFile: 'garbage.pem', keyFile: p256.key }, context())).rejects.toMatchObject({ code: 1002 });
    writeFileSync(join(dir, 'two.pem'), readFileSync(join(dir, p256.cert), 'utf8').repeat(2));
    await expect(createSigner(plugin, { certFile: 'two.pem', keyFile: p256.key }, context())).rejects.toMatchObject({
      code: 1003,
      message: 'the PEM file should contain only one object',
    });
  });

  it('rejects with 2002 when the key file holds no PEM', async () => {
    writeFileSync(join(dir, 'nokey.pem'), 'nothing here');
    await expect(createSigner(plugin, { certFile: p256.cert, keyFile: 'nokey.pem' }, context())).rejects.toMatchObject({ code: 2002 });
  });

  it('rejects with 2000 naming the option when options are incomplete', async () => {
    await expect(createSigner(plugin, { certFile: p256.cert }, context())).rejects.toMatchObject({
      code: 2000,
      message: 'signer plugin @certsmith/signer-local: options.keyFile is required',
    });
    await expect(createSigner(plugin, { certFile: '', keyFile: '' }, context())).rejects.toMatchObject({ code: 2000 });
  });

  it('warns when the certificate is not a CA certificate', async () => {
    openssl(['req', '-x509', ...KEY_ARGS['P-256'], '-nodes', '-keyout', join(dir, 'leaf-key.pem'), '-out', join(dir, 'leaf.pem'), '-subj', '/CN=leaf', '-days', '2', '-addext', 'basicConstraints=critical,CA:FALSE']);
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (message: string) => warnings.push(message), error() {} };
    await createSigner(plugin, { certFile: 'leaf.pem', keyFile: 'leaf-key.pem' }, createSignerContext({ configDir: dir, logger }));
    expect(warnings).toEqual(['CA certificate lacks basicConstraints CA:TRUE; issued certificates will not verify']);
  });
});

describe('LocalSigner.close', () => {
  it('is idempotent and makes sign fail with 2500 when closed', async () => {
    const signer = await createSigner(plugin, { certFile: p256.cert, keyFile: p256.key }, context());
    expect(await signer.health!()).toEqual({ ok: true });
    await signer.close();
    await signer.close();
    expect(await signer.health!()).toEqual({ ok: false, message: 'signer is closed' });
    await expect(signer.sign!(new Uint8Array([1]), 'ECDSA-SHA256')).rejects.toMatchObject({ code: 2500 });
  });

  it('rejects with 2500 when asked for an algorithm the key cannot produce', async () => {
    const signer = await createSigner(plugin, { certFile: p256.cert, keyFile: p256.key }, context());
    await expect(signer.sign!(new Uint8Array([1]), 'RSA-SHA256')).rejects.toMatchObject({ code: 2500 });
  });
});
