import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { LazyCertificate } from '@certsmith/x509-core';
import { certificateFingerprint } from './certificate-pool.js';
import { loadCertificatePool } from './load-pool.js';
import { poolFromSnapshot, poolSnapshotFromPem, readPoolSnapshot, snapshotCertificates } from './pool-snapshot.js';

/** cfssl_trust data, used in place: the `shared/` folder beside the repository (CI), or /work/shared. */
const TRUST = [process.env.CERTSMITH_TRUST_DIR, fileURLToPath(new URL('../../../../shared/trust', import.meta.url)), '/work/shared/trust'].find(
  (dir): dir is string => typeof dir === 'string' && existsSync(dir),
) as string;

const pki = new TestPki();
const root = pki.root('Snapshot Root', { key: 'ecdsa-p256' });
const inter = pki.intermediate('Snapshot Inter', root, { key: 'ecdsa-p256' });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pool-snapshot-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readPoolSnapshot and poolFromSnapshot', () => {
  it('make the same pool as loadCertificatePool from the cfssl_trust intermediates, after a structured clone', async () => {
    const file = `${TRUST}/int-bundle.crt`;
    const expected = await loadCertificatePool(file, 'intermediates');
    const pool = poolFromSnapshot(structuredClone(await readPoolSnapshot(file, 'intermediates')));
    expect(pool.size).toBe(expected.size);
    const fingerprints = (certs: Iterable<import('@certsmith/x509-core').Certificate>) => [...certs].map(certificateFingerprint).sort();
    expect(fingerprints(pool.certificates())).toEqual(fingerprints(expected.certificates()));
    // The same candidates for a child, found through the same indexes.
    const someone = expected.certificates()[100]!;
    expect(pool.bySubject(someone.subject.der).map(certificateFingerprint)).toEqual(expected.bySubject(someone.subject.der).map(certificateFingerprint));
    expect(pool.hasSignature(someone.signature)).toBe(true);
  });

  it('keeps lazy certificates over the snapshot\'s bytes, each parsed in full on first use', () => {
    const snapshot = poolSnapshotFromPem(chainPem(inter, root), 'roots');
    const [first] = snapshotCertificates(snapshot);
    expect(first).toBeInstanceOf(LazyCertificate);
    expect(first!.der.buffer).toBe(snapshot.der.buffer);
    expect(first!.isMaterialized).toBe(false);
    expect(first!.subject.rdns.flat().map((a) => a.value)).toEqual(['Snapshot Inter']);
    expect(certificateFingerprint(first!)).toBe(certificateFingerprint(snapshotCertificates(snapshot)[0]!));
  });

  it('reads PKCS#7 blocks and any PEM label, and an empty file as an empty pool, as CFSSL does', async () => {
    const certs = join(dir, 'p7-input.pem');
    await writeFile(certs, chainPem(inter, root));
    const p7 = execFileSync('openssl', ['crl2pkcs7', '-nocrl', '-certfile', certs]).toString();
    expect(snapshotCertificates(poolSnapshotFromPem(p7, 'intermediates'))).toHaveLength(2);
    expect(snapshotCertificates(poolSnapshotFromPem(chainPem(inter).replace(/CERTIFICATE/g, 'FOO BAR'), 'intermediates'))).toHaveLength(1);
    const empty = join(dir, 'empty.pem');
    await writeFile(empty, ' \n');
    expect(poolFromSnapshot(await readPoolSnapshot(empty, 'roots')).size).toBe(0);
  });

  it('packs a PKCS#7 block\'s certificates back to back between the others, as if each were a block of its own', async () => {
    const other = pki.intermediate('Snapshot Other', root, { key: 'ecdsa-p256' });
    const certs = join(dir, 'p7-middle.pem');
    await writeFile(certs, chainPem(inter, root));
    const p7 = execFileSync('openssl', ['crl2pkcs7', '-nocrl', '-certfile', certs]).toString();
    const mixed = poolSnapshotFromPem(`${chainPem(other)}${p7}${chainPem(other)}`, 'intermediates');
    expect(mixed).toEqual(poolSnapshotFromPem(chainPem(other, inter, root, other), 'intermediates'));
    expect(mixed.der.byteLength).toBe(2 * other.der.byteLength + inter.der.byteLength + root.der.byteLength);
  });

  it('holds each certificate\'s SHA-256 and no bytes beyond its certificates', () => {
    const snapshot = poolSnapshotFromPem(chainPem(inter, root), 'roots');
    expect(snapshot.der.buffer.byteLength).toBe(inter.der.byteLength + root.der.byteLength);
    expect(snapshot.layout.buffer.byteLength).toBe(2 * 12 * 4);
    const sha256 = (der: Uint8Array) => createHash('sha256').update(der).digest();
    expect(Buffer.from(snapshot.fingerprints)).toEqual(Buffer.concat([sha256(inter.der), sha256(root.der)]));
  });

  it.each([
    ['roots', 'text after the last block', 4003, chainPem(root) + 'trailing junk\n'],
    ['intermediates', 'a block that is not a certificate', 3003, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'],
    ['intermediates', 'text without a block', 3003, 'not a bundle'],
  ] as const)('fails %s with %s: %i', async (kind, _what, code, text) => {
    const file = join(dir, `${code}-${Math.random()}.pem`);
    await writeFile(file, text);
    await expect(readPoolSnapshot(file, kind)).rejects.toMatchObject({ code });
    expect(() => poolSnapshotFromPem(text, kind)).toThrow(expect.objectContaining({ code }));
  });

  it('fails 4001 / 3001 with Go\'s text when the file cannot be read', async () => {
    await expect(readPoolSnapshot(join(dir, 'missing.pem'), 'roots')).rejects.toMatchObject({ code: 4001, message: `open ${join(dir, 'missing.pem')}: no such file or directory` });
    await expect(readPoolSnapshot(join(dir, 'missing.pem'), 'intermediates')).rejects.toMatchObject({ code: 3001 });
  });
});
