import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Certificate } from './certificate-model.js';
import { parseCertificate, parseCertificates } from './parse-certificate.js';
import { makeCertificate, prepareKeys, testKey } from './test-support/fixtures.js';
import type { KeyKind, TestCertificate } from './test-support/fixtures.js';
import { isSignatureAlgorithmSupported, publicKeyObject, verifySignature } from './verify-signature.js';

beforeAll(() => prepareKeys(['rsa2048', 'rsa1024', 'p256', 'p384', 'p521', 'ed25519', 'dsa']));

function issued(caKind: KeyKind, leafKind: KeyKind, digest?: string, sigopts?: string[]): { ca: Certificate; leaf: Certificate; caFile: TestCertificate } {
  const caFile = makeCertificate({ key: testKey(caKind), subject: `/CN=${caKind} CA`, extensions: 'basicConstraints = critical,CA:TRUE\nsubjectKeyIdentifier = hash', digest });
  const leafFile = makeCertificate({
    key: testKey(leafKind),
    subject: '/CN=leaf',
    issuer: { certPath: caFile.path, key: testKey(caKind) },
    digest,
    sigopts,
  });
  return { ca: parseCertificate(caFile.der), leaf: parseCertificate(leafFile.der), caFile };
}

const verifies = (child: Certificate, parent: Certificate): boolean =>
  verifySignature(child.tbs, child.signature, child.signatureAlgorithm, parent.publicKey);

describe('verifySignature', () => {
  it('verifies RSA PKCS#1 v1.5, ECDSA, Ed25519 and RSA-PSS signatures made by the issuer', () => {
    const cases: Array<[KeyKind, KeyKind, string | undefined, string[] | undefined]> = [
      ['rsa2048', 'p256', 'sha256', undefined],
      ['rsa2048', 'p256', 'sha1', undefined],
      ['p384', 'rsa2048', 'sha384', undefined],
      ['p521', 'p256', 'sha512', undefined],
      ['ed25519', 'p256', undefined, undefined],
      ['rsa2048', 'ed25519', 'sha256', ['rsa_padding_mode:pss', 'rsa_pss_saltlen:32']],
      ['rsa2048', 'p256', 'sha384', ['rsa_padding_mode:pss', 'rsa_pss_saltlen:digest']],
    ];
    for (const [caKind, leafKind, digest, sigopts] of cases) {
      const { ca, leaf } = issued(caKind, leafKind, digest, sigopts);
      const label = `${caKind} ${digest} ${sigopts}`;
      expect(verifies(leaf, ca), label).toBe(true);
      expect(verifies(ca, ca), `${label} self`).toBe(true);
      // Independent check: Node's X509Certificate agrees.
      expect(new X509Certificate(leaf.der).verify(new X509Certificate(ca.der).publicKey)).toBe(true);
    }
  });

  it('accepts a reusable KeyObject from publicKeyObject', () => {
    const { ca, leaf } = issued('p256', 'p256', 'sha256');
    const key = publicKeyObject(ca.publicKey);
    expect(verifySignature(leaf.tbs, leaf.signature, leaf.signatureAlgorithm, key)).toBe(true);
  });

  it('returns false when the TBS or signature is altered or the key is another issuer', () => {
    const { ca, leaf } = issued('rsa2048', 'p256', 'sha256');
    const tbs = new Uint8Array(leaf.tbs);
    tbs[tbs.length - 3] = tbs[tbs.length - 3]! ^ 1;
    expect(verifySignature(tbs, leaf.signature, leaf.signatureAlgorithm, ca.publicKey)).toBe(false);
    expect(verifySignature(leaf.tbs, leaf.signature.subarray(1), leaf.signatureAlgorithm, ca.publicKey)).toBe(false);
    const other = parseCertificate(makeCertificate({ key: testKey('rsa1024'), subject: '/CN=other' }).der);
    expect(verifies(leaf, other)).toBe(false);
  });

  it('returns false without throwing when the key family does not match the algorithm', () => {
    const { ca, leaf } = issued('rsa2048', 'p256', 'sha256');
    const ecIssuer = parseCertificate(makeCertificate({ key: testKey('p256'), subject: '/CN=ec' }).der);
    expect(verifies(leaf, ecIssuer)).toBe(false);
    expect(verifies(leaf, { ...ca, publicKey: { ...ca.publicKey, spki: Uint8Array.of(0x30, 0) } })).toBe(false);
  });

  it('returns false for algorithms Go does not verify (DSA, unknown OIDs)', () => {
    const dsa = parseCertificate(makeCertificate({ key: testKey('dsa'), subject: '/CN=dsa', digest: 'sha256' }).der);
    expect(dsa.signatureAlgorithm.name).toBe('DSAWithSHA256');
    expect(isSignatureAlgorithmSupported(dsa.signatureAlgorithm)).toBe(false);
    expect(verifies(dsa, dsa)).toBe(false);
    expect(isSignatureAlgorithmSupported({ oid: '1.2.3', name: 'Unknown Signature', hash: null, keyAlgorithm: 'Unknown', pss: false })).toBe(false);
  });

  it('verifies every intermediate of int-bundle.crt that some bundled certificate issued', () => {
    const roots = parseCertificates(readFileSync('/work/shared/trust/ca-bundle.crt'));
    const intermediates = parseCertificates(readFileSync('/work/shared/trust/int-bundle.crt'));
    const all = [...roots, ...intermediates];
    const bySubject = new Map<string, Certificate[]>();
    for (const cert of all) {
      const key = Buffer.from(cert.subject.der).toString('hex');
      bySubject.set(key, [...(bySubject.get(key) ?? []), cert]);
    }
    let verified = 0;
    for (const cert of intermediates.slice(0, 80)) {
      const candidates = bySubject.get(Buffer.from(cert.issuer.der).toString('hex')) ?? [];
      if (candidates.length === 0 || !isSignatureAlgorithmSupported(cert.signatureAlgorithm)) continue;
      const ours = candidates.some((issuer) => verifies(cert, issuer));
      const node = candidates.some((issuer) => new X509Certificate(cert.der).verify(new X509Certificate(issuer.der).publicKey));
      expect(ours).toBe(node);
      if (ours) verified++;
    }
    expect(verified).toBeGreaterThan(30);
  });
});

describe('publicKeyObject', () => {
  it('loads RSA, EC and Ed25519 SPKIs as Node KeyObjects', () => {
    for (const kind of ['rsa2048', 'p384', 'ed25519'] as const) {
      const cert = parseCertificate(makeCertificate({ key: testKey(kind), subject: '/CN=k' }).der);
      const key = publicKeyObject(cert.publicKey);
      expect(key.type).toBe('public');
      expect(key.export({ type: 'spki', format: 'der' })).toEqual(Buffer.from(cert.publicKey.spki));
    }
  });
});
