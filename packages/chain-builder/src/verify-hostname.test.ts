import { describe, expect, it } from 'vitest';
import { parseCertificate } from '@certsmith/x509-core';
import { TestPki } from '@certsmith/test-pki';
import { parseIpAddress, verifyHostname } from './verify-hostname.js';

const pki = new TestPki({ now: new Date('2026-11-22T00:00:00Z') });
const root = pki.root('VH Root', { key: 'ecdsa-p256' });
const cert = (options: Parameters<TestPki['leaf']>[2], name = 'vh.example.com') => parseCertificate(pki.leaf(name, root, options).der);

describe('verifyHostname', () => {
  const multi = cert({ dns: ['a.com', 'b.com', '*.wild.example'], ips: ['1.2.3.4', '2001:db8::1'] });

  it('matches exact, case-insensitive, trailing-dot and wildcard names', () => {
    expect(verifyHostname(multi, 'a.com')).toBeNull();
    expect(verifyHostname(multi, 'B.COM.')).toBeNull();
    expect(verifyHostname(multi, 'x.wild.example')).toBeNull();
  });

  it('does not let a wildcard match two labels or the bare domain', () => {
    expect(verifyHostname(multi, 'x.y.wild.example')?.code).toBe(1200);
    expect(verifyHostname(multi, 'wild.example')?.code).toBe(1200);
  });

  it('lists the DNS names when the name is not among them', () => {
    expect(verifyHostname(multi, 'example.com')).toEqual({
      code: 1200,
      message: 'x509: certificate is valid for a.com, b.com, *.wild.example, not example.com',
    });
  });

  it('matches IP SANs only, including IPv4-mapped and bracketed IPv6 forms', () => {
    expect(verifyHostname(multi, '1.2.3.4')).toBeNull();
    expect(verifyHostname(multi, '::ffff:1.2.3.4')).toBeNull();
    expect(verifyHostname(multi, '[2001:db8::1]')).toBeNull();
    expect(verifyHostname(multi, '10.0.0.1')?.message).toBe('x509: certificate is valid for 1.2.3.4, 2001:db8::1, not 10.0.0.1');
  });

  it('uses Go\'s texts when the certificate has no IP SANs or no names', () => {
    const dnsOnly = cert({ dns: ['only.example'] });
    expect(verifyHostname(dnsOnly, '10.0.0.1')?.message).toBe(
      "x509: cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs",
    );
    const noNames = cert({ dns: [], emails: ['a@b.c'] }, 'R10');
    expect(verifyHostname(noNames, 'example.com')?.message).toBe(
      'x509: certificate is not valid for any names, but wanted to match example.com',
    );
  });

  it('never falls back to the Common Name', () => {
    const cnOnly = cert({ dns: [] }, 'legacy.example.com');
    expect(verifyHostname(cnOnly, 'legacy.example.com')).toEqual({
      code: 1200,
      message: 'x509: certificate relies on legacy Common Name field, use SANs instead',
    });
  });
});

describe('parseIpAddress', () => {
  it('maps IPv4 into IPv6 and rejects names when parsing', () => {
    expect(Buffer.from(parseIpAddress('1.2.3.4')!).toString('hex')).toBe('00000000000000000000ffff01020304');
    expect(Buffer.from(parseIpAddress('::1')!).toString('hex')).toBe('00000000000000000000000000000001');
    expect(parseIpAddress('example.com')).toBeNull();
  });
});
