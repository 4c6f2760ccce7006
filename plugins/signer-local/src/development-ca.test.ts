import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createSigner, createSignerContext } from '@certsmith/signer-api';

import { createDevelopmentCa } from './development-ca.js';
import plugin from './index.js';

const root = mkdtempSync(join(tmpdir(), 'dev-ca-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function openssl(args: string[], input?: string): string {
  return execFileSync('openssl', args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

describe('createDevelopmentCa', () => {
  it('creates a CFSSL init_ca-style ECDSA P-256 CA with a 0600 key when the data dir is empty', async () => {
    const dataDir = join(root, 'fresh');
    const now = new Date('2026-11-22T03:24:41Z');
    const ca = await createDevelopmentCa(dataDir, { now: () => now });
    expect(ca).toEqual({ certFile: join(dataDir, 'dev-ca', 'ca.pem'), keyFile: join(dataDir, 'dev-ca', 'ca-key.pem'), created: true });
    expect(statSync(ca.keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'dev-ca')).mode & 0o777).toBe(0o700);

    const pem = readFileSync(ca.certFile, 'utf8');
    const text = openssl(['x509', '-noout', '-text'], pem);
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(text).toContain('NIST CURVE: P-256');
    expect(text).toMatch(/X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign/);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:TRUE\n/);
    expect(text).toContain('X509v3 Subject Key Identifier');
    expect(text).not.toContain('Authority Key Identifier');
    // notBefore = 03:25 (rounded) - 5 minutes; 43800h later.
    const certificate = new X509Certificate(pem);
    expect(new Date(certificate.validFrom).toISOString()).toBe('2026-11-22T03:20:00.000Z');
    expect(new Date(certificate.validTo).getTime() - new Date(certificate.validFrom).getTime()).toBe(43_800 * 3_600_000);
    expect(certificate.verify(certificate.publicKey)).toBe(true);
    expect(certificate.ca).toBe(true);
    expect(openssl(['ec', '-noout', '-check', '-in', ca.keyFile])).toBe('');
  });

  it('reuses the existing CA when called again', async () => {
    const dataDir = join(root, 'reuse');
    const first = await createDevelopmentCa(dataDir);
    const pem = readFileSync(first.certFile, 'utf8');
    const second = await createDevelopmentCa(dataDir);
    expect(second).toEqual({ ...first, created: false });
    expect(readFileSync(second.certFile, 'utf8')).toBe(pem);
  });

  it('ends with one consistent CA when several first starts race', async () => {
    const dataDir = join(root, 'race');
    const results = await Promise.all([1, 2, 3, 4].map(() => createDevelopmentCa(dataDir)));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    const signer = await createSigner(plugin, { certFile: results[0]!.certFile, keyFile: results[0]!.keyFile }, createSignerContext());
    expect(signer.algorithms[0]).toBe('ECDSA-SHA256');
  });

  it('loads with the local signer plugin when created', async () => {
    const ca = await createDevelopmentCa(join(root, 'load'));
    const signer = await createSigner(plugin, { certFile: ca.certFile, keyFile: ca.keyFile }, createSignerContext());
    const data = new TextEncoder().encode('x');
    expect((await signer.sign!(data, 'ECDSA-SHA256')).length).toBeGreaterThan(60);
  });

  it('throws 2000 when only one of the two files exists', async () => {
    const dataDir = join(root, 'broken');
    mkdirSync(join(dataDir, 'dev-ca'), { recursive: true });
    writeFileSync(join(dataDir, 'dev-ca', 'ca.pem'), 'x');
    await expect(createDevelopmentCa(dataDir)).rejects.toMatchObject({ code: 2000 });
  });
});
