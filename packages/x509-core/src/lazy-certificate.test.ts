import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Certificate } from './certificate-model.js';
import { LazyCertificate, MATERIALIZED_LIMIT, certificateIndexFields } from './lazy-certificate.js';
import { parseCertificates } from './parse-certificate.js';
import { parseCertificatesLazily } from './lazy-certificate.js';
import { TRUST_DIR } from './test-support/fixtures.js';

const intermediatesPem = readFileSync(`${TRUST_DIR}/int-bundle.crt`, 'utf8');
const rootsPem = readFileSync(`${TRUST_DIR}/ca-bundle.crt`, 'utf8');

/** Every field of the Certificate interface, read through whatever getters the object has. */
const FIELDS: (keyof Certificate)[] = [
  'der', 'tbs', 'version', 'serialNumberHex', 'signatureAlgorithm', 'signature', 'issuer', 'subject', 'notBefore', 'notAfter',
  'publicKey', 'extensions', 'subjectKeyId', 'authorityKeyId', 'basicConstraints', 'keyUsage', 'extKeyUsage', 'subjectAltNames',
  'ocspUrls', 'caIssuerUrls', 'crlDistributionPoints', 'unhandledCriticalExtensions', 'certificatePolicies', 'nameConstraints',
];

const fields = (cert: Certificate) => Object.fromEntries(FIELDS.map((field) => [field, cert[field] ?? null]));

describe('parseCertificatesLazily', () => {
  it('reads every field of the 1,600 cfssl_trust certificates exactly as the parser does', () => {
    for (const pem of [intermediatesPem, rootsPem]) {
      const parsed = parseCertificates(pem);
      const lazy = parseCertificatesLazily(pem);
      expect(lazy).toHaveLength(parsed.length);
      lazy.forEach((cert, i) => {
        expect(cert).toBeInstanceOf(LazyCertificate);
        expect(fields(cert)).toEqual(fields(parsed[i]!));
      });
    }
  });

  it('fails with the same coded errors as parseCertificates', () => {
    for (const bad of ['', 'not a certificate', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', `${rootsPem.slice(0, 2000)}garbage`]) {
      let expected: unknown;
      try {
        parseCertificates(bad);
      } catch (error) {
        expected = error;
      }
      expect(() => parseCertificatesLazily(bad)).toThrow(expect.objectContaining({ code: (expected as { code: number }).code }));
    }
  });
});

describe('LazyCertificate', () => {
  it('answers its index fields without parsing, and parses on the first other field', () => {
    const [parsed] = parseCertificates(intermediatesPem);
    const lazy = LazyCertificate.from(parsed!);
    expect(lazy.isMaterialized).toBe(false);
    expect(certificateIndexFields(lazy)).toEqual(certificateIndexFields(parsed!));
    expect([lazy.signature, lazy.subjectKeyId, lazy.authorityKeyId, lazy.der]).toEqual([parsed!.signature, parsed!.subjectKeyId, parsed!.authorityKeyId, parsed!.der]);
    expect(lazy.isMaterialized).toBe(false);
    expect(lazy.subject).toEqual(parsed!.subject);
    expect(lazy.isMaterialized).toBe(true);
    expect(LazyCertificate.from(lazy)).toBe(lazy);
  });

  it(`keeps at most ${MATERIALIZED_LIMIT} full parses, drops the oldest first, and parses it again when asked`, () => {
    const lazy = parseCertificatesLazily(`${intermediatesPem}\n${rootsPem}`);
    expect(lazy.length).toBeGreaterThan(MATERIALIZED_LIMIT);
    const first = lazy[0]!;
    const subject = first.subject;
    for (const cert of lazy.slice(1, MATERIALIZED_LIMIT)) void cert.notAfter;
    expect(first.isMaterialized).toBe(true);
    void lazy[MATERIALIZED_LIMIT]!.notAfter;
    expect(first.isMaterialized).toBe(false);
    expect(lazy.filter((cert) => cert.isMaterialized).length).toBeLessThanOrEqual(MATERIALIZED_LIMIT);
    expect(first.subject).toEqual(subject);
    expect(first.isMaterialized).toBe(true);
  });
});
