import { TestPki } from '@certsmith/test-pki';
import { describe, expect, it } from 'vitest';
import { readCertificateStoreFields } from '@certsmith/x509-core';
import { dnsNamesJson, issuedCertificateFields, issuedCertificateRow, normaliseAuthorityKeyId, serialToDecimal, signedCertificateFields } from './certificate-row.js';
import { goJsonMarshal } from './go-json.js';

describe('serialToDecimal', () => {
  it("prints the serial as Go's big.Int.String()", () => {
    expect(serialToDecimal('62d1039eee146265b123e0e3b1f78ac7309b2aa8')).toBe('564142266705163047067434699488539944656098241192');
    expect(serialToDecimal('00ff')).toBe('255');
    expect(serialToDecimal('ff')).toBe('-1');
  });
});

describe('normaliseAuthorityKeyId', () => {
  it("lower-cases and removes colons, as certinfo does", () => {
    expect(normaliseAuthorityKeyId('F9:DD:6F')).toBe('f9dd6f');
  });
});

describe('goJsonMarshal', () => {
  it("writes Go's json.Marshal text: compact, sorted keys, HTML characters escaped", () => {
    expect(goJsonMarshal({ b: 1, a: ['x<y>&'] })).toBe('{"a":["x\\u003cy\\u003e\\u0026"],"b":1}');
    expect(goJsonMarshal(null)).toBe('null');
  });
});

describe('issuedCertificateRow', () => {
  const pki = new TestPki();
  const root = pki.root({ CN: 'Row Root' }, { key: 'ecdsa-p256' });
  const now = new Date('2026-11-26T08:00:00Z');

  it('writes the same row from the fields read elsewhere (and cloned across threads) as from the certificate', () => {
    const leaf = pki.leaf('fields.example', root, { key: 'ecdsa-p256' });
    const fields = structuredClone(issuedCertificateFields(leaf.der));
    const input = { label: 'web', ocspResponse: { body: Uint8Array.of(1), expiry: now } };
    expect(issuedCertificateRow({ ...input, certificate: fields }, now)).toEqual(issuedCertificateRow({ ...input, certificate: leaf.der }, now));
    expect(issuedCertificateRow({ certificate: fields }, now)).toMatchObject({ serial: serialToDecimal(leaf.serialHex.toLowerCase()), pem: leaf.pem, sansJson: '["fields.example"]', commonName: 'fields.example', label: '', status: 'good' });
  });

  it("writes the metadata as Go's JSON, and null when there is none", () => {
    const fields = issuedCertificateFields(pki.leaf('metadata.example', root, { key: 'ecdsa-p256' }).der);
    expect(issuedCertificateRow({ certificate: fields }, now).metadataJson).toBe('null');
    expect(issuedCertificateRow({ certificate: fields, metadata: null }, now).metadataJson).toBe('null');
    expect(issuedCertificateRow({ certificate: fields, metadata: { b: 1, a: '<x>' } }, now).metadataJson).toBe('{"a":"\\u003cx\\u003e","b":1}');
  });
});

describe('signedCertificateFields', () => {
  const pki = new TestPki();
  const root = pki.root({ CN: 'Signed Fields Root' }, { key: 'ecdsa-p256' });

  it.each([
    ['DNS names', { dns: ['a.example', 'b.example'] }],
    ['IP, email and URI names but no DNS name', { dns: [], ips: ['10.0.0.1', '2001:db8::1'], emails: ['ops@example.com'], uris: ['https://example.com/'] }],
    ['no AKI and a long serial', { authorityKeyId: false, serialHex: '00ff'.repeat(16) }],
    ['a negative serial', { serialHex: 'ff01' }],
  ])('gives what issuedCertificateFields gives for a certificate with %s', (_what, options) => {
    const leaf = pki.leaf('signed.example', root, { key: 'ecdsa-p256', ...options });
    expect(signedCertificateFields(readCertificateStoreFields(leaf.der), leaf.pem)).toEqual(issuedCertificateFields(leaf.der));
  });

  it('gives what issuedCertificateFields gives for a certificate without a subject CN', () => {
    const leaf = pki.issue({ subject: { O: 'No CN' }, issuer: root, key: 'ecdsa-p256', dns: ['nocn.example'] });
    expect(signedCertificateFields(readCertificateStoreFields(leaf.der), leaf.pem)).toEqual(issuedCertificateFields(leaf.der));
    expect(issuedCertificateFields(leaf.der).commonName).toBe('');
  });
});

describe('dnsNamesJson', () => {
  it.each([
    [[]],
    [['www.example.com']],
    [['a.example', '*.wild.example', 'under_score.example', 'x-y.example', '']],
    [['<script>.example', 'b.example']],
    [['quote".example']],
    [['back\\slash.example']],
    [['amp&.example', 'ünï.example', 'line\u2028sep']],
    [['space here.example', 'tab\t.example']],
  ])("writes goJsonMarshal's text (null for none) for %j", (dns) => {
    expect(dnsNamesJson(dns)).toBe(dns.length === 0 ? 'null' : goJsonMarshal(dns));
  });
});
