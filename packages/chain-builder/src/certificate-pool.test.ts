import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCertificate } from '@certsmith/x509-core';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { CertificatePool, certificateFingerprint, derFingerprint, issuerKey, rememberFingerprint, subjectKey } from './certificate-pool.js';
import { bytesKey } from './bytes-key.js';
import { certificatePublicKey, checkSignatureFrom, isSelfSigned, isSignatureChain } from './signature-check.js';
import { loadCertificatePool } from './load-pool.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** cfssl_trust data, used in place: the `shared/` folder beside the repository (CI), or /work/shared. */
const TRUST = [process.env.CERTSMITH_TRUST_DIR, fileURLToPath(new URL('../../../../shared/trust', import.meta.url)), '/work/shared/trust'].find(
  (dir): dir is string => typeof dir === 'string' && existsSync(dir),
) as string;

const pki = new TestPki({ now: new Date('2026-11-22T00:00:00Z') });
const dir = mkdtempSync(join(tmpdir(), 'pool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rootA = pki.root('Pool Root A', { key: 'ecdsa-p256' });
const rootB = pki.root('Pool Root B', { key: 'ecdsa-p256' });
const inter = pki.intermediate('Pool Inter', rootA);
const cross = pki.crossSign(inter, rootB);
const leaf = pki.leaf('pool.example.com', inter);

describe('certificateFingerprint, subjectKey, issuerKey', () => {
  it('derive each key from the DER, in any order, and keep a remembered fingerprint', () => {
    const first = parseCertificate(leaf.der);
    expect(issuerKey(first)).toBe(bytesKey(first.issuer.der));
    expect(certificateFingerprint(first)).toBe(derFingerprint(leaf.der));
    expect(subjectKey(first)).toBe(bytesKey(first.subject.der));
    // Asked again: the same keys.
    expect([certificateFingerprint(first), subjectKey(first), issuerKey(first)]).toEqual([derFingerprint(leaf.der), bytesKey(first.subject.der), bytesKey(first.issuer.der)]);
    const second = parseCertificate(leaf.der);
    rememberFingerprint(second, 'remembered');
    expect([certificateFingerprint(second), subjectKey(second)]).toEqual(['remembered', bytesKey(second.subject.der)]);
  });
});

describe('CertificatePool', () => {
  it('deduplicates identical certificates when added twice', () => {
    const pool = new CertificatePool([parseCertificate(inter.der), parseCertificate(inter.der)]);
    expect(pool.size).toBe(1);
    expect(pool.add(parseCertificate(inter.der))).toBe(false);
  });

  it('finds issuer candidates by subject name and subject key identifier', () => {
    const pool = new CertificatePool([inter, cross, rootA].map((c) => parseCertificate(c.der)));
    const candidates = pool.findIssuerCandidates(parseCertificate(leaf.der));
    expect(candidates).toHaveLength(2);
    expect(pool.bySubjectKeyId(parseCertificate(inter.der).subjectKeyId!)).toHaveLength(2);
    expect(pool.bySubject(parseCertificate(rootA.der).subject.der)).toHaveLength(1);
  });

  it('orders key-identifier matches before mismatches', () => {
    const otherKey = pki.intermediate('Pool Inter', rootA, { key: 'ecdsa-p384', keyLabel: 'other' });
    const pool = new CertificatePool([otherKey, inter].map((c) => parseCertificate(c.der)));
    const [first] = pool.findIssuerCandidates(parseCertificate(leaf.der));
    expect(first?.serialNumberHex).toBe(parseCertificate(inter.der).serialNumberHex);
  });

  it('caches signature results per (issuer, child) pair', () => {
    const pool = new CertificatePool([parseCertificate(inter.der)], { signatureCacheSize: 1 });
    const child = parseCertificate(leaf.der);
    const issuer = pool.certificates()[0]!;
    expect(pool.checkSignature(child, issuer)).toBeNull();
    expect(pool.checkSignature(child, issuer)).toBeNull();
    expect(pool.checkSignature(parseCertificate(rootB.der), issuer)).not.toBeNull();
  });

  it('returns its own copy of a certificate with the same DER', () => {
    const pool = new CertificatePool([parseCertificate(inter.der)]);
    const pooled = pool.certificates()[0]!;
    expect(pool.get(parseCertificate(inter.der))).toBe(pooled);
    expect(pool.get(parseCertificate(cross.der))).toBeUndefined();
  });

  it('knows certificates by their signature bytes', () => {
    const pool = new CertificatePool([parseCertificate(inter.der)]);
    expect(pool.hasSignature(parseCertificate(inter.der).signature)).toBe(true);
    expect(pool.hasSignature(parseCertificate(cross.der).signature)).toBe(false);
  });
});

describe('loadCertificatePool', () => {
  it('loads and deduplicates a PEM bundle file', async () => {
    const file = join(dir, 'bundle.pem');
    writeFileSync(file, chainPem(rootA, rootB, rootA));
    expect((await loadCertificatePool(file, 'roots')).size).toBe(2);
  });

  it('returns an empty pool when the file is empty', async () => {
    const file = join(dir, 'empty.pem');
    writeFileSync(file, '\n');
    expect((await loadCertificatePool(file, 'intermediates')).size).toBe(0);
  });

  it('fails with 4001 / 3001 when the file cannot be read', async () => {
    await expect(loadCertificatePool(join(dir, 'missing.pem'), 'roots')).rejects.toMatchObject({
      code: 4001,
      message: `open ${join(dir, 'missing.pem')}: no such file or directory`,
    });
    await expect(loadCertificatePool(join(dir, 'missing.pem'), 'intermediates')).rejects.toMatchObject({ code: 3001 });
  });

  it('fails with 4003 / 3003 when the bundle does not parse', async () => {
    const file = join(dir, 'bad.pem');
    writeFileSync(file, `${rootA.pem}trailing junk\n`);
    await expect(loadCertificatePool(file, 'roots')).rejects.toMatchObject({ code: 4003 });
    await expect(loadCertificatePool(file, 'intermediates')).rejects.toMatchObject({
      code: 3003,
      message: 'Failed to parse intermediate certificate',
    });
  });

  it('loads the real cfssl_trust bundles', async () => {
    const roots = await loadCertificatePool(`${TRUST}/ca-bundle.crt`, 'roots');
    const intermediates = await loadCertificatePool(`${TRUST}/int-bundle.crt`, 'intermediates');
    expect(roots.size).toBeGreaterThan(300);
    expect(intermediates.size).toBeGreaterThan(1200);
  });
});

describe('signature checks of submitted certificates', () => {
  it('reuses one KeyObject for re-parsed copies of a certificate (same SPKI)', () => {
    const first = certificatePublicKey(parseCertificate(inter.der));
    expect(first).not.toBeNull();
    expect(certificatePublicKey(parseCertificate(inter.der))).toBe(first);
    expect(certificatePublicKey(parseCertificate(rootA.der))).not.toBe(first);
  });

  it("uses the pool's cached result when the parent is a pool certificate, with the same answers", () => {
    const pools = { roots: new CertificatePool([parseCertificate(rootA.der)]), intermediates: new CertificatePool([parseCertificate(inter.der)]) };
    const pooledInter = pools.intermediates.certificates()[0]!;
    const asked: Array<{ child: unknown; issuer: unknown }> = [];
    const check = pools.intermediates.checkSignature.bind(pools.intermediates);
    pools.intermediates.checkSignature = (child, issuer) => {
      asked.push({ child, issuer });
      return check(child, issuer);
    };
    const submitted = [parseCertificate(leaf.der), parseCertificate(inter.der)];
    expect(isSignatureChain(submitted, pools)).toBe(true);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.child).toBe(submitted[0]);
    expect(asked[0]!.issuer).toBe(pooledInter);
    // Same verdicts with and without the pools, wrong order included.
    expect(isSignatureChain([...submitted].reverse(), pools)).toBe(false);
    expect(isSignatureChain([...submitted].reverse())).toBe(false);
    expect(checkSignatureFrom(parseCertificate(rootB.der), parseCertificate(inter.der), pools)).toBe(
      checkSignatureFrom(parseCertificate(rootB.der), parseCertificate(inter.der)),
    );
    // A root in the pool is self-signed; an intermediate (signed by its root) is not.
    expect(isSelfSigned(parseCertificate(rootA.der), pools)).toBe(true);
    expect(isSelfSigned(parseCertificate(inter.der), pools)).toBe(false);
    expect(isSelfSigned(parseCertificate(rootB.der), pools)).toBe(true);
  });
});

describe('pools loaded from files', () => {
  it('hold lazy certificates, and a chain parses again only the certificates on its way', async () => {
    const { LazyCertificate } = await import('@certsmith/x509-core');
    const { verifyChains } = await import('./build-chains.js');
    const roots = await loadCertificatePool(join(TRUST, 'ca-bundle.crt'), 'roots');
    const intermediates = await loadCertificatePool(join(TRUST, 'int-bundle.crt'), 'intermediates');
    const all = [...roots.certificates(), ...intermediates.certificates()];
    expect(all.every((cert) => cert instanceof LazyCertificate)).toBe(true);
    const materialized = () => all.filter((cert) => (cert as InstanceType<typeof LazyCertificate>).isMaterialized).length;
    const before = materialized();
    // An intermediate of the pool, submitted as a leaf: a fresh parse, verified against the pools.
    const leaf = parseCertificate(intermediates.certificates()[100]!.der);
    const result = verifyChains(leaf, { roots, intermediates });
    expect(result.chains.length).toBeGreaterThan(0);
    const touched = materialized() - before;
    expect(touched).toBeGreaterThan(0);
    expect(touched).toBeLessThan(10);
  });
});
