/**
 * The DER writer round-trips generated structures (issue 19 item 2): whole certificates with random
 * names, serials, validity, SANs and extensions are written with the writer's functions and read back
 * by parseCertificate, field by field.
 */
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  derBoolean,
  derDirectoryString,
  derExplicit,
  derImplicit,
  derInteger,
  derNamedBitString,
  derOctetString,
  derOid,
  derSequence,
  derSetOf,
  derTime,
  derTlv,
  derBitString,
  encodeIa5String,
} from './der-writer.js';
import { derExtension } from './extensions.js';
import { formatIpAddress } from './general-name.js';
import { parseCertificate, toHex } from './parse-certificate.js';

const SPKI = new Uint8Array(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' }));
const ECDSA_SHA256 = derSequence(derOid('1.2.840.10045.4.3.2'));

const oid = fc
  .tuple(fc.constantFrom(0, 1, 2), fc.integer({ min: 0, max: 39 }), fc.array(fc.integer({ min: 0, max: 2 ** 31 }), { minLength: 1, maxLength: 8 }))
  .map(([first, second, rest]) => [first, second, ...rest].join('.'));
const attributeOid = fc.oneof(fc.constantFrom('2.5.4.3', '2.5.4.6', '2.5.4.10', '2.5.4.11', '1.2.840.113549.1.9.1'), oid);
// Text that is not a `#hex` value (those are kept as DER by the reader) and not empty.
const attributeValue = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((text) => !text.startsWith('#'));
const name = fc.array(fc.array(fc.record({ oid: attributeOid, value: attributeValue }), { minLength: 1, maxLength: 3 }), { maxLength: 6 });
const ascii = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 40 });
const url = ascii.map((rest) => `http://${rest}`);
const date = fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((value) => new Date(Math.floor(value.getTime() / 1000) * 1000));

const certificateFields = fc.record({
  serial: fc.bigInt({ min: 1n, max: (1n << 159n) - 1n }),
  issuer: name,
  subject: name,
  notBefore: date,
  notAfter: date,
  dns: fc.array(ascii, { maxLength: 4 }),
  email: fc.array(ascii.map((local) => `${local}@example.com`), { maxLength: 3 }),
  ip: fc.array(fc.oneof(fc.uint8Array({ minLength: 4, maxLength: 4 }), fc.uint8Array({ minLength: 16, maxLength: 16 })), { maxLength: 3 }),
  uri: fc.array(url, { maxLength: 3 }),
  keyUsage: fc.integer({ min: 0, max: 511 }),
  extKeyUsage: fc.array(oid, { minLength: 1, maxLength: 4 }),
  basicConstraints: fc.record({ ca: fc.boolean(), pathLen: fc.option(fc.integer({ min: 0, max: 2 ** 31 }), { nil: null }) }),
  policies: fc.array(oid, { minLength: 1, maxLength: 4 }),
  ocsp: fc.array(url, { maxLength: 2 }),
  caIssuers: fc.array(url, { maxLength: 2 }),
  crl: fc.array(url, { maxLength: 2 }),
  subjectKeyId: fc.uint8Array({ minLength: 1, maxLength: 32 }),
  custom: fc.record({ oid: oid.map((dotted) => `1.3.6.1.4.1.55555.${dotted.replace(/^\d+\.\d+\./, '')}`), critical: fc.boolean(), text: attributeValue }),
});

type Fields = typeof certificateFields extends fc.Arbitrary<infer T> ? T : never;

function encodeName(rdns: Fields['subject']): Uint8Array {
  return derSequence(...rdns.map((rdn) => derSetOf(rdn.map((atv) => derSequence(derOid(atv.oid), derDirectoryString(atv.value))))));
}

function build(fields: Fields): Uint8Array {
  const uri = (text: string): Uint8Array => derImplicit(6, encodeIa5String(text), false);
  const sanList = [
    ...fields.dns.map((text) => derImplicit(2, encodeIa5String(text), false)),
    ...fields.email.map((text) => derImplicit(1, encodeIa5String(text), false)),
    ...fields.ip.map((address) => derImplicit(7, address, false)),
    ...fields.uri.map(uri),
  ];
  const constraints = [
    ...(fields.basicConstraints.ca ? [derBoolean(true)] : []),
    ...(fields.basicConstraints.pathLen === null ? [] : [derInteger(fields.basicConstraints.pathLen)]),
  ];
  const extensions = [
    derExtension('2.5.29.15', true, derNamedBitString(fields.keyUsage)),
    derExtension('2.5.29.37', false, derSequence(...fields.extKeyUsage.map(derOid))),
    derExtension('2.5.29.19', true, derSequence(...constraints)),
    derExtension('2.5.29.14', false, derOctetString(fields.subjectKeyId)),
    derExtension('2.5.29.32', false, derSequence(...fields.policies.map((policy) => derSequence(derOid(policy))))),
    derExtension('2.5.29.31', false, derSequence(...fields.crl.map((text) => derSequence(derExplicit(0, derTlv(0xa0, uri(text))))))),
    derExtension('1.3.6.1.5.5.7.1.1', false, derSequence(
      ...fields.ocsp.map((text) => derSequence(derOid('1.3.6.1.5.5.7.48.1'), uri(text))),
      ...fields.caIssuers.map((text) => derSequence(derOid('1.3.6.1.5.5.7.48.2'), uri(text))),
    )),
    derExtension(fields.custom.oid, fields.custom.critical, derDirectoryString(fields.custom.text)),
  ];
  if (sanList.length > 0) extensions.push(derExtension('2.5.29.17', false, derSequence(...sanList)));
  const tbs = derSequence(
    derExplicit(0, derInteger(2)),
    derInteger(fields.serial),
    ECDSA_SHA256,
    encodeName(fields.issuer),
    derSequence(derTime(fields.notBefore), derTime(fields.notAfter)),
    encodeName(fields.subject),
    SPKI,
    derExplicit(3, derSequence(...extensions)),
  );
  return derSequence(tbs, ECDSA_SHA256, derBitString(derSequence(derInteger(1), derInteger(1))));
}

describe('DER writer round trip', () => {
  it('writes generated certificates that parseCertificate reads back field for field', () => {
    fc.assert(
      fc.property(certificateFields, (fields) => {
        const cert = parseCertificate(build(fields));
        expect(BigInt(`0x${cert.serialNumberHex}`)).toBe(fields.serial);
        // A multi-valued RDN is a SET OF: DER sorts its members, so compare members as sets.
        const members = (rdns: readonly (readonly { oid: string; value: string }[])[]): string[][] =>
          rdns.map((rdn) => rdn.map((atv) => `${atv.oid}=${atv.value}`).sort());
        expect(members(cert.issuer.rdns)).toEqual(members(fields.issuer));
        expect(members(cert.subject.rdns)).toEqual(members(fields.subject));
        expect(cert.notBefore.getTime()).toBe(fields.notBefore.getTime());
        expect(cert.notAfter.getTime()).toBe(fields.notAfter.getTime());
        expect(cert.subjectAltNames).toEqual({ dns: fields.dns, email: fields.email, ip: fields.ip.map(formatIpAddress), uri: fields.uri });
        expect(cert.keyUsage).toBe(fields.keyUsage);
        expect(cert.extKeyUsage).toEqual(fields.extKeyUsage);
        expect(cert.basicConstraints).toEqual({ ca: fields.basicConstraints.ca, pathLenConstraint: fields.basicConstraints.pathLen });
        expect(cert.certificatePolicies).toEqual(fields.policies);
        expect(cert.crlDistributionPoints).toEqual(fields.crl);
        expect(cert.ocspUrls).toEqual(fields.ocsp);
        expect(cert.caIssuerUrls).toEqual(fields.caIssuers);
        expect(toHex(cert.subjectKeyId!)).toBe(toHex(fields.subjectKeyId));
        const custom = cert.extensions.find((extension) => extension.oid === fields.custom.oid);
        expect(custom?.critical).toBe(fields.custom.critical);
        expect(toHex(custom!.value)).toBe(toHex(derDirectoryString(fields.custom.text)));
        expect(cert.unhandledCriticalExtensions).toEqual(fields.custom.critical ? [fields.custom.oid] : []);
      }),
      { seed: 19, numRuns: 400 },
    );
  });
});
