import { describe, expect, it } from 'vitest';
import { parseCertificate } from '@certsmith/x509-core';
import { TestPki, type TestCertificate } from '@certsmith/test-pki';
import { CertificatePool } from './certificate-pool.js';
import { verifyChains } from './build-chains.js';

const now = new Date('2026-11-22T00:00:00Z');
const pki = new TestPki({ now });
const root = pki.root('NC Root', { key: 'ecdsa-p256' });
const constrained = pki.intermediate('NC Inter', root, {
  nameConstraints: {
    permitted: { dns: ['example.com', '.corp.test'], ips: ['10.0.0.0/8'], emails: ['example.com'], uris: ['.example.com'] },
    excluded: { dns: ['secret.example.com'] },
  },
});
const verify = (leaf: TestCertificate) =>
  verifyChains(parseCertificate(leaf.der), { roots: new CertificatePool([parseCertificate(root.der)]), intermediates: new CertificatePool([parseCertificate(constrained.der)]) }, { now });

describe('verifyChains with name constraints', () => {
  it('accepts names inside the permitted subtrees', () => {
    const ok = pki.leaf('www.example.com', constrained, { dns: ['www.example.com', 'a.corp.test'], ips: ['10.1.2.3'], emails: ['x@example.com'], uris: ['https://api.example.com/x'] });
    expect(verify(ok).result).toBe(true);
  });

  it('reports 1212 when a DNS name is excluded', () => {
    expect(verify(pki.leaf('secret.example.com', constrained))).toMatchObject({
      resultCode: 1212,
      resultMessage: 'x509: a root or intermediate certificate is not authorized to sign for this name: DNS name "secret.example.com" is excluded by constraint "secret.example.com"',
    });
  });

  it('reports 1212 when a name is outside every permitted subtree', () => {
    expect(verify(pki.leaf('www.example.org', constrained)).resultMessage).toBe(
      'x509: a root or intermediate certificate is not authorized to sign for this name: DNS name "www.example.org" is not permitted by any constraint',
    );
    expect(verify(pki.leaf('corp.test', constrained)).resultCode).toBe(1212); // leading dot needs a subdomain
    expect(verify(pki.leaf('ip.example.com', constrained, { ips: ['192.168.1.1'] })).resultMessage).toContain('IP address "192.168.1.1" is not permitted');
    expect(verify(pki.leaf('uri.example.com', constrained, { uris: ['https://10.0.0.1/'] })).resultMessage).toContain('URI with IP');
  });

  it('ignores the Common Name when the leaf has no SAN extension', () => {
    expect(verify(pki.leaf('www.example.org', constrained, { dns: [] })).result).toBe(true);
  });
});
