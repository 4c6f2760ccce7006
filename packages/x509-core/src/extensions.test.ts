import { describe, expect, it } from 'vitest';
import { DerReader } from './der-reader.js';
import { derImplicit, derInteger, derNull, derOctetString, derSequence } from './der-writer.js';
import { DerEncodeError, ErrorCode } from './errors.js';
import { derExtension, emptyExtensionFacts, readExtensions } from './extensions.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('derExtension', () => {
  it('omits critical when false and writes it when true (DER DEFAULT FALSE)', () => {
    expect(hex(derExtension('1.2.3.4', false, derNull()))).toBe('300906032a0304040205' + '00');
    expect(hex(derExtension('1.2.3.4', true, derNull()))).toBe('300c06032a03040101ff040205' + '00');
  });

  it('writes SAN, basic constraints and key identifiers the reader decodes back', () => {
    const san = derSequence(derImplicit(2, new TextEncoder().encode('a.example'), false), derImplicit(7, Uint8Array.of(127, 0, 0, 1), false));
    const list = derSequence(
      derExtension('2.5.29.17', false, san),
      derExtension('2.5.29.19', true, derSequence(Uint8Array.of(0x01, 0x01, 0xff), derInteger(0))),
      derExtension('2.5.29.14', false, derOctetString(Uint8Array.of(1, 2, 3))),
    );
    const facts = emptyExtensionFacts();
    readExtensions(list, new DerReader(list).sequence(), facts);
    expect(facts.subjectAltNames).toMatchObject({ dns: ['a.example'], ip: ['127.0.0.1'] });
    expect(facts.basicConstraints).toEqual({ ca: true, pathLenConstraint: 0 });
    expect([...facts.subjectKeyId!]).toEqual([1, 2, 3]);
  });

  it.each([
    ['an empty value', '1.2.3.4', ''],
    ['a bare octet', '1.2.3.4', '00'],
    ['a truncated element', '1.2.3.4', '0405ff'],
    ['two elements', '1.2.3.4', '05000500'],
    ['an indefinite length', '1.2.3.4', '3080000000'],
  ])('refuses %s as the value (not one DER element)', (_name, oid, value) => {
    expect(() => derExtension(oid, false, Buffer.from(value, 'hex'))).toThrow(
      expect.objectContaining({ code: ErrorCode.CertificateUnknown, message: `extension ${oid}: value is not one DER element` }) as Error,
    );
  });

  it.each([
    ['a SAN that is not a SEQUENCE', '2.5.29.17', '0500'],
    ['a SAN dNSName that is not ASCII', '2.5.29.17', '30048202c3bc'],
    ['a SAN IP address of 3 octets', '2.5.29.17', '3005870301020'.padEnd(14, '3')],
    ['key usage that is not a BIT STRING', '2.5.29.15', '0500'],
    ['basic constraints with a non-DER BOOLEAN', '2.5.29.19', '3003010101'],
    ['an empty name constraints extension', '2.5.29.30', '3000'],
    ['a subject key identifier that is not an OCTET STRING', '2.5.29.14', '0500'],
  ])('refuses %s (its own parser would refuse the certificate)', (_name, oid, value) => {
    expect(() => derExtension(oid, false, Buffer.from(value, 'hex'))).toThrow(DerEncodeError);
    expect(() => derExtension(oid, false, Buffer.from(value, 'hex'))).toThrow(/malformed value/);
  });

  it('refuses an OID that cannot be encoded, with the OID in the message', () => {
    expect(() => derExtension('7.1', false, derNull())).toThrow(expect.objectContaining({ message: expect.stringContaining('invalid object identifier 7.1') }) as Error);
  });
});
