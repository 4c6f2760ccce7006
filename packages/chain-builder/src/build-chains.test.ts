import { describe, expect, it } from 'vitest';
import { parseCertificate, type Certificate } from '@certsmith/x509-core';
import { TestPki, sequence, nullValue, type TestCertificate } from '@certsmith/test-pki';
import { CertificatePool, type TrustPools } from './certificate-pool.js';
import { verifyChains } from './build-chains.js';

const now = new Date('2026-11-22T12:00:00Z');
const pki = new TestPki({ now });
const parsed = new Map<TestCertificate, Certificate>();
const p = (c: TestCertificate): Certificate => {
  let cert = parsed.get(c);
  if (!cert) parsed.set(c, (cert = parseCertificate(c.der)));
  return cert;
};
const pools = (roots: TestCertificate[], intermediates: TestCertificate[] = []): TrustPools => ({
  roots: new CertificatePool(roots.map(p)),
  intermediates: new CertificatePool(intermediates.map(p)),
});
const names = (chain: Certificate[]): string[] =>
  chain.map((c) => c.subject.rdns.flat().find((a) => a.oid === '2.5.4.3')?.value ?? '?');

const root = pki.root('CB Root', { key: 'rsa-2048' });
const inter = pki.intermediate('CB Inter', root, { key: 'ecdsa-p384' });
const leaf = pki.leaf('leaf.example.com', inter);

describe('verifyChains', () => {
  it('returns the chain leaf→intermediate→root when the intermediate is pooled', () => {
    const r = verifyChains(p(leaf), pools([root], [inter]), { now });
    expect(r.result).toBe(true);
    expect(r.resultCode).toBe(0);
    expect(r.chains.map(names)).toEqual([['leaf.example.com', 'CB Inter', 'CB Root']]);
  });

  it('reports 1220 unknown authority when no issuer is known', () => {
    const r = verifyChains(p(leaf), pools([root]), { now });
    expect(r).toMatchObject({ result: false, resultCode: 1220, resultMessage: 'x509: certificate signed by unknown authority', chains: [] });
  });

  it('adds Go\'s hint when a same-named candidate fails the signature check', () => {
    const impostor = pki.root('CB Inter', { key: 'ecdsa-p256', keyLabel: 'impostor' });
    const r = verifyChains(p(leaf), pools([impostor]), { now });
    expect(r.resultCode).toBe(1220);
    expect(r.resultMessage).toBe(
      'x509: certificate signed by unknown authority (possibly because of "x509: ECDSA verification failure" while trying to verify candidate authority certificate "CB Inter")',
    );
  });

  it('reports 1211 when the leaf has expired', () => {
    const expired = pki.leaf('old.example.com', inter, { notBefore: pki.days(-100), notAfter: pki.days(-1) });
    const r = verifyChains(p(expired), pools([root], [inter]), { now });
    expect(r.resultCode).toBe(1211);
    expect(r.resultMessage).toMatch(/^x509: certificate has expired or is not yet valid: current time 2026-11-22T12:00:00Z is after /);
  });

  it('reports 1211 when an intermediate is not yet valid', () => {
    const future = pki.intermediate('CB Future', root, { notBefore: pki.days(2), notAfter: pki.days(400) });
    const l = pki.leaf('f.example.com', future);
    const r = verifyChains(p(l), pools([root], [future]), { now });
    expect(r.resultCode).toBe(1211);
    expect(r.resultMessage).toContain('is before');
  });

  it('reports 1213 when a path length constraint is exceeded', () => {
    const constrained = pki.intermediate('CB PL0', root, { pathLen: 0 });
    const sub = pki.intermediate('CB Sub', constrained);
    const l = pki.leaf('pl.example.com', sub);
    const r = verifyChains(p(l), pools([root], [constrained, sub]), { now });
    expect(r).toMatchObject({ result: false, resultCode: 1213, resultMessage: 'x509: too many intermediates for path length constraint' });
  });

  it('accepts a chain exactly at the path length limit', () => {
    const constrained = pki.intermediate('CB PL1', root, { pathLen: 1 });
    const sub = pki.intermediate('CB Sub1', constrained, { pathLen: 0 });
    const l = pki.leaf('pl1.example.com', sub);
    expect(verifyChains(p(l), pools([root], [constrained, sub]), { now }).chains.map((c) => c.length)).toEqual([4]);
  });

  it('reports 1210 when a v1 certificate acts as an intermediate', () => {
    const v1 = pki.issue({ subject: 'CB V1', issuer: root, version: 1, key: 'ecdsa-p256' });
    const l = pki.leaf('v1.example.com', v1);
    const r = verifyChains(p(l), pools([root], [v1]), { now });
    expect(r).toMatchObject({ resultCode: 1210, resultMessage: 'x509: certificate is not authorized to sign other certificates' });
  });

  it('reports 1220 when the issuer is not a CA (leaf signed by a leaf)', () => {
    const leaflet = pki.issue({ subject: 'leaflet.example.com', issuer: leaf, ca: false });
    const r = verifyChains(p(leaflet), pools([root], [inter, leaf]), { now });
    expect(r.resultCode).toBe(1220);
    expect(r.resultMessage).toContain('parent certificate cannot sign this kind of certificate');
  });

  it('refuses an issuer whose key usage lacks keyCertSign', () => {
    const noSign = pki.intermediate('CB NoSign', root, { keyUsage: ['digitalSignature'] });
    const l = pki.leaf('ku.example.com', noSign);
    expect(verifyChains(p(l), pools([root], [noSign]), { now }).resultCode).toBe(1220);
  });

  it('reports 1200 when a chain certificate has an unknown critical extension', () => {
    const ext = [{ oid: '1.3.6.1.4.1.99999.1', critical: true, value: sequence(nullValue()) }];
    const odd = pki.intermediate('CB Odd', root, { extraExtensions: ext });
    const l = pki.leaf('odd.example.com', odd);
    const r = verifyChains(p(l), pools([root], [odd]), { now });
    expect(r).toMatchObject({ resultCode: 1200, resultMessage: 'x509: unhandled critical extension' });
    const badLeaf = pki.leaf('oddleaf.example.com', inter, { extraExtensions: ext });
    expect(verifyChains(p(badLeaf), pools([root], [inter]), { now }).resultCode).toBe(1200);
  });

  it('returns every chain through cross-signed intermediates', () => {
    const rootB = pki.root('CB Root B', { key: 'rsa-2048' });
    const cross = pki.crossSign(inter, rootB);
    const r = verifyChains(p(leaf), pools([root, rootB], [inter, cross]), { now });
    expect(r.chains.map(names).sort()).toEqual([
      ['leaf.example.com', 'CB Inter', 'CB Root'],
      ['leaf.example.com', 'CB Inter', 'CB Root B'],
    ]);
  });

  it('stops at and continues through a certificate present in both pools', () => {
    const r = verifyChains(p(leaf), pools([root, inter], [inter]), { now });
    expect(r.chains.map((c) => c.length).sort()).toEqual([2, 3]);
  });

  it('returns [[leaf]] when the leaf itself is a pool root', () => {
    expect(verifyChains(p(root), pools([root]), { now }).chains).toEqual([[p(root)]]);
  });

  it('does not loop when two CAs cross-sign each other', () => {
    const a = pki.root('CB Loop A');
    const b = pki.root('CB Loop B');
    const aByB = pki.crossSign(a, b);
    const bByA = pki.crossSign(b, a);
    const l = pki.leaf('loop.example.com', a);
    const r = verifyChains(p(l), pools([pki.root('CB Unrelated')], [aByB, bByA]), { now });
    expect(r.resultCode).toBe(1220);
  });

  it('reports 1213 when no chain fits within maxDepth', () => {
    let ca = root;
    const chainCas: TestCertificate[] = [];
    for (let i = 0; i < 5; i++) {
      ca = pki.intermediate(`CB Deep ${i}`, ca);
      chainCas.push(ca);
    }
    const l = pki.leaf('deep.example.com', ca);
    expect(verifyChains(p(l), pools([root], chainCas), { now, maxDepth: 4 }).resultCode).toBe(1213);
    expect(verifyChains(p(l), pools([root], chainCas), { now }).chains[0]).toHaveLength(7);
  });

  it('verifies leaves of every key type when signed by RSA, ECDSA and Ed25519 issuers', () => {
    const ed = pki.root('CB Ed Root', { key: 'ed25519' });
    for (const issuer of [root, inter, ed]) {
      for (const key of ['rsa-2048', 'ecdsa-p256', 'ecdsa-p521', 'ed25519'] as const) {
        const l = pki.leaf(`${key}.kt.example.com`, issuer, { key });
        const r = verifyChains(p(l), pools([root, ed], [inter]), { now });
        expect(r.result, `${key} under ${issuer.subjectKeyIdHex}`).toBe(true);
      }
    }
  });

  it('accepts SHA-1 signatures (certsmith bundles them with warnings)', () => {
    const sha1Inter = pki.intermediate('CB SHA1 Inter', root, { signatureHash: 'SHA-1' });
    const l = pki.leaf('sha1.example.com', sha1Inter, { signatureHash: 'SHA-1' });
    expect(verifyChains(p(l), pools([root], [sha1Inter]), { now }).result).toBe(true);
  });
});
