import fc from 'fast-check';
import { TestPki, chainPem, trimmedPem } from '@certsmith/test-pki';
import { describe, expect, it } from 'vitest';
import type { BundleResult } from './bundle-certificate.js';
import { bundleResultJson } from './bundle-result-json.js';

const pki = new TestPki();
const root = pki.root('Json Root', { key: 'rsa-2048' });
const inter = pki.intermediate('Json Inter', root, { key: 'ecdsa-p256' });
const leaf = pki.leaf('json.example.com', inter, { key: 'ed25519' });

/** A result with the PEM fields a bundle has and the other fields as given. */
function result(fields: Partial<BundleResult> = {}): BundleResult {
  return {
    bundle: chainPem(leaf, inter).trim(),
    crl_support: false,
    crt: trimmedPem(leaf),
    expires: '2027-03-12T23:59:59Z',
    hostnames: ['json.example.com'],
    issuer: '/CommonName=Json Inter',
    key: '',
    key_size: 256,
    key_type: '256-bit ECDSA',
    leaf_expires: '2027-03-12T23:59:59.5Z',
    ocsp: null,
    ocsp_support: false,
    root: trimmedPem(root),
    signature: 'ECDSAWithSHA256',
    status: { rebundled: true, expiring_SKIs: null, untrusted_root_stores: [], messages: null, code: 0 },
    subject: '/CommonName=json.example.com',
    ...fields,
  };
}

describe('bundleResultJson', () => {
  it('writes what JSON.stringify writes, PEM fields included', () => {
    const withKey = result({ key: leaf.key.pkcs8Pem.trim(), ocsp: ['http://ocsp.example.com'], ocsp_support: true });
    expect(bundleResultJson(withKey)).toBe(JSON.stringify(withKey));
    const forced = result({ root: '', status: { rebundled: false, expiring_SKIs: ['AB12'], untrusted_root_stores: null, messages: ['m'], code: 3 } });
    expect(bundleResultJson(forced)).toBe(JSON.stringify(forced));
  });

  it('writes the texts JSON.stringify escapes (quotes, backslashes, control characters, surrogates) as it does', () => {
    const texts = ['say "hi"', 'C:\\path', 'tab\there', '\u0000\u001f', 'lone \ud800', 'pair \ud83d\ude00', 'line\u2028separator', 'del\u007f', ''];
    for (const text of texts) {
      const value = result({ subject: text, issuer: text, hostnames: [text, 'plain'], status: { rebundled: false, expiring_SKIs: null, untrusted_root_stores: [text], messages: [text], code: 0 } });
      expect(bundleResultJson(value)).toBe(JSON.stringify(value));
    }
  });

  it('escapes every other field as JSON.stringify does, whatever the text', () => {
    const text = fc.string({ unit: 'binary' });
    fc.assert(
      fc.property(text, fc.array(text), fc.option(fc.array(text), { nil: null }), fc.integer(), (name, names, messages, code) => {
        const value = result({
          subject: name,
          issuer: name,
          hostnames: names,
          key_type: name,
          signature: name,
          expires: name,
          ocsp: messages,
          status: { rebundled: false, expiring_SKIs: messages, untrusted_root_stores: names, messages, code },
        });
        expect(bundleResultJson(value)).toBe(JSON.stringify(value));
      }),
    );
  });
});
