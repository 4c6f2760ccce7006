import { X509Certificate, createHash, generateKeyPair } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Certificate } from './certificate-model.js';
import { derBitString, derInteger, derOctetString, derOid, derSequence, derExplicit, derTlv, derUtf8String, derSetOf, derTime, derBoolean, derNull } from './der-writer.js';
import { CertificateDecodeError, CertificateParseError } from './errors.js';
import { parseCertificate, parseCertificates } from './parse-certificate.js';
import { certificateToPem, decodePemBlocks } from './pem.js';
import { parsePkcs7Certificates } from './pkcs7.js';
import { TEST_ATTRIBUTE_OID, makeCertificate, makeCrl, makePkcs7, prepareKeys, testKey, writeScratch } from './test-support/fixtures.js';
import type { TestCertificate } from './test-support/fixtures.js';

const TRUST = '/work/shared/trust';

// RSA-3072 generation takes ~1 s: start it on the libuv pool now so it overlaps the other tests.
const rsa3072 = new Promise<KeyObject>((resolve, reject) => {
  generateKeyPair('rsa', { modulusLength: 3072 }, (error, _publicKey, privateKey) => (error ? reject(error) : resolve(privateKey)));
});

/** Serial as a signed bigint from our two's-complement hex. */
function serialFromHex(hex: string): bigint {
  const unsigned = BigInt(`0x${hex}`);
  return Number.parseInt(hex.slice(0, 2), 16) & 0x80 ? unsigned - (1n << BigInt(hex.length * 4)) : unsigned;
}

/** Serial as a signed bigint from Node's text (`-11D4…` for negative serials). */
function serialFromNode(text: string): bigint {
  return text.startsWith('-') ? -BigInt(`0x${text.slice(1)}`) : BigInt(`0x${text}`);
}

/** RFC 5952 form of an IP text, via the WHATWG URL parser (an independent implementation). */
function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

/** OpenSSL short names Node uses in `X509Certificate.subject`. */
const SHORT_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '1.2.840.113549.1.9.1': 'emailAddress',
};

/** Our RDNs rendered the way Node prints a subject: one RDN per line, multi-valued joined by ` + `. */
function nodeStyleName(rdns: Certificate['subject']['rdns']): string {
  return rdns.map((rdn) => rdn.map((atv) => `${SHORT_NAMES[atv.oid] ?? atv.oid}=${atv.value}`).join(' + ')).join('\n');
}

function expectAgreesWithNode(cert: Certificate): void {
  const node = new X509Certificate(cert.der);
  expect(nodeStyleName(cert.subject.rdns)).toBe(node.subject);
  expect(nodeStyleName(cert.issuer.rdns)).toBe(node.issuer);
  expect(serialFromHex(cert.serialNumberHex)).toBe(serialFromNode(node.serialNumber));
  expect(cert.notBefore.getTime()).toBe(new Date(node.validFrom).getTime());
  expect(cert.notAfter.getTime()).toBe(new Date(node.validTo).getTime());
  expect(Buffer.from(cert.publicKey.spki)).toEqual(node.publicKey.export({ type: 'spki', format: 'der' }));
  expect(createHash('sha256').update(cert.der).digest('hex').toUpperCase().match(/../g)!.join(':')).toBe(node.fingerprint256);
}

let richCa: TestCertificate;
let rich: Certificate;
let leafCert: TestCertificate;
let leaf: Certificate;

const RICH_EXTENSIONS = [
  'basicConstraints = critical,CA:TRUE,pathlen:2',
  'keyUsage = critical,digitalSignature,keyAgreement,keyCertSign,cRLSign,decipherOnly',
  'extendedKeyUsage = serverAuth,clientAuth,1.2.3.4.5',
  'subjectAltName = DNS:example.com,DNS:www.example.com,IP:192.0.2.1,IP:2001:db8::1,IP:::1,IP:::ffff:1.2.3.4,IP:2001:db8:0:1:0:0:0:1,email:a@example.com,URI:https://example.com/x,otherName:1.2.3.4;UTF8:hello,dirName:dir_sect,RID:1.2.3.4',
  'authorityInfoAccess = OCSP;URI:http://ocsp.example.com,caIssuers;URI:http://ca.example.com/ca.crt',
  'crlDistributionPoints = URI:http://crl.example.com/ca.crl,URI:ldap://crl.example.com/cn=ca',
  'subjectKeyIdentifier = hash',
  '1.2.3.4.5.6 = critical,ASN1:UTF8String:custom',
  'certificatePolicies = 2.23.140.1.2.1,1.2.3.99',
  'nameConstraints = critical,permitted;DNS:example.com,excluded;IP:192.168.0.0/255.255.0.0,permitted;IP:2001:db8::/ffff:ffff::',
].join('\n');

beforeAll(async () => {
  await prepareKeys(['p256', 'rsa2048', 'p384', 'p521', 'ed25519']);
  richCa = makeCertificate({
    key: testKey('p256'),
    subject: `/C=US/O=Example Inc/OU=Eng+CN=multi/emailAddress=x@y.z/testAttribute=custom value`,
    multivalueRdn: true,
    extensions: RICH_EXTENSIONS,
    serialHex: '00ff01',
    digest: 'sha256',
  });
  rich = parseCertificate(richCa.der);
  leafCert = makeCertificate({
    key: testKey('rsa2048'),
    subject: '/CN=leaf.example.com',
    extensions: ['subjectKeyIdentifier = hash', 'authorityKeyIdentifier = keyid', 'subjectAltName = DNS:leaf.example.com'].join('\n'),
    issuer: { certPath: richCa.path, key: testKey('p256') },
    digest: 'sha384',
  });
  leaf = parseCertificate(leafCert.der);
});

describe('parseCertificate', () => {
  it('reads version, serial, validity and the SPKI when given a generated certificate', () => {
    expect(rich.version).toBe(3);
    expect(rich.serialNumberHex).toBe('00ff01');
    expect(rich.publicKey).toMatchObject({ algorithm: 'ECDSA', algorithmOid: '1.2.840.10045.2.1', bits: 256, curve: 'P-256' });
    expect(rich.publicKey.subjectPublicKey[0]).toBe(0x04);
    expectAgreesWithNode(rich);
    expectAgreesWithNode(leaf);
  });

  it('keeps issuer and subject DER byte-exact and the RDNs in DER order when RDNs are multi-valued', () => {
    expect(rich.subject.rdns.map((rdn) => rdn.map((atv) => atv.oid))).toEqual([
      ['2.5.4.6'],
      ['2.5.4.10'],
      // openssl sorts the SET by DER: OU (2.5.4.11, longer value) vs CN (2.5.4.3)
      expect.arrayContaining(['2.5.4.11', '2.5.4.3']),
      ['1.2.840.113549.1.9.1'],
      [TEST_ATTRIBUTE_OID],
    ]);
    expect(rich.subject.rdns[4]![0]!.value).toBe('custom value');
    expect(rich.subject.rdns[3]![0]!.value).toBe('x@y.z');
    expect(Buffer.from(rich.issuer.der)).toEqual(Buffer.from(rich.subject.der));
    expect(Buffer.from(leaf.issuer.der)).toEqual(Buffer.from(rich.subject.der));
    expect(leaf.subject.rdns).toEqual([[{ oid: '2.5.4.3', value: 'leaf.example.com' }]]);
  });

  it('reads every SAN kind in certificate order with Go-style IP text when SANs are mixed', () => {
    expect(rich.subjectAltNames).toEqual({
      dns: ['example.com', 'www.example.com'],
      email: ['a@example.com'],
      ip: ['192.0.2.1', '2001:db8::1', '::1', '1.2.3.4', '2001:db8:0:1::1'],
      uri: ['https://example.com/x'],
    });
    const nodeIps = new X509Certificate(rich.der)
      .subjectAltName!.split(', ')
      .filter((entry) => entry.startsWith('IP Address:'))
      .map((entry) => canonicalIp(entry.slice('IP Address:'.length)));
    // Node prints IPv4-mapped addresses in IPv6 form; we print them as Go does (dotted quad).
    expect(nodeIps.map((ip) => (ip === '::ffff:102:304' ? '1.2.3.4' : ip))).toEqual(rich.subjectAltNames.ip);
    const nodeSans = new X509Certificate(rich.der).subjectAltName!.split(', ');
    const ofKind = (prefix: string) => nodeSans.filter((entry) => entry.startsWith(prefix)).map((entry) => entry.slice(prefix.length));
    expect(ofKind('DNS:')).toEqual(rich.subjectAltNames.dns);
    expect(ofKind('email:')).toEqual(rich.subjectAltNames.email);
    expect(ofKind('URI:')).toEqual(rich.subjectAltNames.uri);
  });

  it('reads basic constraints, key usage bits, EKU and policies when present', () => {
    expect(rich.basicConstraints).toEqual({ ca: true, pathLenConstraint: 2 });
    // digitalSignature(0) keyAgreement(4) keyCertSign(5) cRLSign(6) decipherOnly(8)
    expect(rich.keyUsage).toBe((1 << 0) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 8));
    expect(rich.extKeyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2', '1.2.3.4.5']);
    expect(rich.certificatePolicies).toEqual(['2.23.140.1.2.1', '1.2.3.99']);
    expect(new X509Certificate(rich.der).ca).toBe(true);
    expect(leaf.basicConstraints).toBeNull();
    expect(leaf.keyUsage).toBeNull();
    expect(leaf.extKeyUsage).toBeNull();
  });

  it('reads AIA OCSP/caIssuers and CRL distribution point URIs when present', () => {
    expect(rich.ocspUrls).toEqual(['http://ocsp.example.com']);
    expect(rich.caIssuerUrls).toEqual(['http://ca.example.com/ca.crt']);
    expect(rich.crlDistributionPoints).toEqual(['http://crl.example.com/ca.crl', 'ldap://crl.example.com/cn=ca']);
    expect(leaf.ocspUrls).toEqual([]);
    expect(leaf.crlDistributionPoints).toEqual([]);
  });

  it('links the leaf AKI to the CA SKI when the leaf is issued by the CA', () => {
    expect(rich.subjectKeyId).not.toBeNull();
    expect(Buffer.from(leaf.authorityKeyId!)).toEqual(Buffer.from(rich.subjectKeyId!));
    expect(rich.authorityKeyId).toBeNull();
  });

  it('lists unknown critical extensions and keeps every extension raw when some are custom', () => {
    expect(rich.unhandledCriticalExtensions).toEqual(['1.2.3.4.5.6']);
    const custom = rich.extensions.find((ext) => ext.oid === '1.2.3.4.5.6')!;
    expect(custom.critical).toBe(true);
    expect(Buffer.from(custom.value).subarray(2).toString()).toBe('custom');
    expect(rich.extensions.map((ext) => ext.oid)).toContain('2.5.29.30');
  });

  it('reads name constraints by kind when the CA is name-constrained', () => {
    expect(rich.nameConstraints).toEqual({
      critical: true,
      permitted: { dns: ['example.com'], email: [], ip: ['2001:db8::/32'], uri: [] },
      excluded: { dns: [], email: [], ip: ['192.168.0.0/16'], uri: [] },
      hasUnsupportedForms: false,
    });
  });

  it('names signature algorithms the CFSSL way when signed with each supported algorithm', () => {
    const cases: Array<[Parameters<typeof testKey>[0], string | undefined, string[] | undefined, string, string | null]> = [
      ['rsa2048', 'sha1', undefined, 'SHA1WithRSA', 'SHA1'],
      ['rsa2048', 'sha256', undefined, 'SHA256WithRSA', 'SHA256'],
      ['rsa2048', 'sha512', undefined, 'SHA512WithRSA', 'SHA512'],
      ['rsa2048', 'sha224', undefined, 'Unknown Signature', 'SHA224'],
      ['p384', 'sha384', undefined, 'ECDSAWithSHA384', 'SHA384'],
      ['p521', 'sha512', undefined, 'ECDSAWithSHA512', 'SHA512'],
      ['p256', 'sha1', undefined, 'ECDSAWithSHA1', 'SHA1'],
      ['ed25519', undefined, undefined, 'Ed25519', null],
      ['rsa2048', 'sha256', ['rsa_padding_mode:pss', 'rsa_pss_saltlen:32'], 'Unknown Signature', 'SHA256'],
    ];
    for (const [kind, digest, sigopts, name, hash] of cases) {
      const cert = parseCertificate(makeCertificate({ key: testKey(kind), subject: '/CN=alg', digest, sigopts }).der);
      expect(cert.signatureAlgorithm.name, `${kind} ${digest} ${sigopts}`).toBe(name);
      expect(cert.signatureAlgorithm.hash).toBe(hash);
      if (sigopts) {
        expect(cert.signatureAlgorithm).toMatchObject({ pss: true, pssParameters: { hash: 'SHA256', mgf1Hash: 'SHA256', saltLength: 32 } });
      }
    }
  });

  it('reports key facts for P-384, P-521 and Ed25519 keys', () => {
    const facts = (kind: Parameters<typeof testKey>[0]) => parseCertificate(makeCertificate({ key: testKey(kind), subject: '/CN=k' }).der).publicKey;
    expect(facts('p384')).toMatchObject({ algorithm: 'ECDSA', bits: 384, curve: 'P-384' });
    expect(facts('p521')).toMatchObject({ algorithm: 'ECDSA', bits: 521, curve: 'P-521' });
    expect(facts('ed25519')).toMatchObject({ algorithm: 'Ed25519', bits: 256, curve: null });
    expect(facts('ed25519').subjectPublicKey).toHaveLength(32);
  });

  it('copies the input when given a view into a larger buffer', () => {
    const padded = new Uint8Array(rich.der.length + 10);
    padded.set(rich.der, 5);
    const cert = parseCertificate(padded.subarray(5, 5 + rich.der.length));
    expect(cert.der.buffer.byteLength).toBe(rich.der.length);
    expect(structuredClone(cert).subjectAltNames).toEqual(rich.subjectAltNames);
  });

  it('throws 1003 when the DER is truncated, has trailing bytes or is not a certificate', () => {
    expect(() => parseCertificate(rich.der.subarray(0, rich.der.length - 1))).toThrow(CertificateParseError);
    const trailing = new Uint8Array([...rich.der, 0]);
    expect(() => parseCertificate(trailing)).toThrow(expect.objectContaining({ code: 1003 }));
    expect(() => parseCertificate(new Uint8Array(0))).toThrow(expect.objectContaining({ code: 1003 }));
    expect(() => parseCertificate(Uint8Array.of(0x30, 0x80, 0, 0))).toThrow(expect.objectContaining({ code: 1003 }));
  });

  it('throws 1003 only (never a RangeError) when bytes are truncated or flipped anywhere', () => {
    const der = leaf.der;
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    const attempts: Uint8Array[] = [];
    for (let cut = 0; cut < der.length; cut += 7) attempts.push(der.subarray(0, cut));
    for (let i = 0; i < 600; i++) {
      const copy = new Uint8Array(der);
      copy[random() % copy.length] = random() & 0xff;
      attempts.push(copy);
    }
    for (const attempt of attempts) {
      try {
        parseCertificate(attempt);
      } catch (error) {
        expect((error as { code?: number }).code).toBe(1003);
      }
    }
  });

  it('throws 1003 when inner and outer signature algorithms differ or an extension repeats', () => {
    const tbsFor = (algorithm: Uint8Array, extensions: Uint8Array[]) =>
      derSequence(
        derExplicit(0, derInteger(2)),
        derInteger(1),
        algorithm,
        derSequence(derSetOf([derSequence(derOid('2.5.4.3'), derUtf8String('x'))])),
        derSequence(derTime(new Date('2026-01-01T00:00:00Z')), derTime(new Date('2027-01-01T00:00:00Z'))),
        derSequence(derSetOf([derSequence(derOid('2.5.4.3'), derUtf8String('x'))])),
        derTlv(0x30, leaf.publicKey.spki.subarray(2 + (leaf.publicKey.spki[1]! & 0x80 ? leaf.publicKey.spki[1]! & 0x7f : 0))),
        derExplicit(3, derSequence(...extensions)),
      );
    const sha256Rsa = derSequence(derOid('1.2.840.113549.1.1.11'), derNull());
    const sha384Rsa = derSequence(derOid('1.2.840.113549.1.1.12'), derNull());
    const bc = derSequence(derOid('2.5.29.19'), derBoolean(true), derOctetString(derSequence()));
    const build = (inner: Uint8Array, outer: Uint8Array, extensions: Uint8Array[]) =>
      derSequence(tbsFor(inner, extensions), outer, derBitString(Uint8Array.of(1, 2, 3)));
    expect(parseCertificate(build(sha256Rsa, sha256Rsa, [bc])).basicConstraints).toEqual({ ca: false, pathLenConstraint: null });
    expect(() => parseCertificate(build(sha256Rsa, sha384Rsa, [bc]))).toThrow(expect.objectContaining({ code: 1003 }));
    expect(() => parseCertificate(build(sha256Rsa, sha256Rsa, [bc, bc]))).toThrow(expect.objectContaining({ code: 1003 }));
  });
});

describe('parseCertificate over the cfssl_trust bundles', () => {
  it('parses every certificate and agrees with X509Certificate when given ca-bundle.crt and int-bundle.crt', () => {
    for (const file of ['ca-bundle.crt', 'int-bundle.crt']) {
      const blocks = decodePemBlocks(readFileSync(`${TRUST}/${file}`, 'utf8'));
      expect(blocks.length).toBeGreaterThan(300);
      // Collected and compared once: thousands of individual expect() calls dominate the run time.
      const ours: unknown[] = [];
      const theirs: unknown[] = [];
      for (const block of blocks) {
        const cert = parseCertificate(block.bytes);
        const node = new X509Certificate(block.bytes);
        ours.push([serialFromHex(cert.serialNumberHex), cert.notBefore.getTime(), cert.notAfter.getTime(), cert.basicConstraints?.ca ?? false]);
        theirs.push([serialFromNode(node.serialNumber), new Date(node.validFrom).getTime(), new Date(node.validTo).getTime(), node.ca]);
      }
      expect(ours).toEqual(theirs);
    }
  });

  it('returns the same certificates in order when parseCertificates reads a whole bundle', () => {
    const text = readFileSync(`${TRUST}/ca-bundle.crt`, 'utf8');
    const certs = parseCertificates(text);
    expect(certs).toHaveLength(decodePemBlocks(text).length);
  });
});

describe('parseCertificates', () => {
  it('returns leaf then issuer when given a PEM chain with text before the first block', () => {
    const certs = parseCertificates(`Subject: leaf\n${leafCert.pem}\n\n${richCa.pem}\n  \n`);
    expect(certs.map((cert) => cert.serialNumberHex)).toEqual([leaf.serialNumberHex, rich.serialNumberHex]);
  });

  it('accepts any PEM label and skips text between blocks', () => {
    const relabelled = leafCert.pem.replace(/CERTIFICATE/g, 'FOO BAR');
    const certs = parseCertificates(`${relabelled}junk between\n${richCa.pem}`);
    expect(certs).toHaveLength(2);
  });

  it('accepts a Uint8Array holding PEM', () => {
    expect(parseCertificates(Buffer.from(leafCert.pem))).toHaveLength(1);
  });

  it('returns every certificate of a PKCS#7 block when the PKCS#7 has no CRLs', () => {
    const p7 = makePkcs7([leafCert.path, richCa.path]).toString();
    expect(parseCertificates(p7).map((cert) => cert.serialNumberHex)).toEqual([leaf.serialNumberHex, rich.serialNumberHex]);
  });

  it('returns every certificate of a PKCS#7 when the PKCS#7 carries a CRL', () => {
    const caKey = testKey('rsa2048');
    const ca = makeCertificate({ key: caKey, subject: '/CN=crl ca', extensions: 'basicConstraints = critical,CA:TRUE\nkeyUsage = cRLSign,keyCertSign' });
    const crlPath = makeCrl({ certPath: ca.path, key: caKey });
    const p7 = makePkcs7([ca.path], { crlPath }).toString();
    expect(p7).toContain('PKCS7');
    expect(parseCertificates(p7)).toHaveLength(1);
    const der = makePkcs7([ca.path, leafCert.path], { crlPath, outform: 'DER' });
    expect(parseCertificates(der)).toHaveLength(2);
    expect(parsePkcs7Certificates(der)).toHaveLength(2);
  });

  it('reads DER, concatenated DER, PKCS#7 DER and base64 DER when there is no PEM block', () => {
    expect(parseCertificates(leaf.der)).toHaveLength(1);
    expect(parseCertificates(new Uint8Array([...leaf.der, ...rich.der]))).toHaveLength(2);
    expect(parseCertificates(makePkcs7([leafCert.path], { outform: 'DER' }))).toHaveLength(1);
    expect(parseCertificates(Buffer.from(leaf.der).toString('base64'))).toHaveLength(1);
    expect(parseCertificates(Buffer.from(leaf.der).toString('latin1'))).toHaveLength(1);
  });

  it('throws 1002 when the input is empty, whitespace or has no PEM block', () => {
    for (const input of ['', '   \n', 'this is not a certificate', new Uint8Array(0)]) {
      expect(() => parseCertificates(input)).toThrow(CertificateDecodeError);
    }
  });

  it('throws 1002 when non-PEM text follows the last block', () => {
    expect(() => parseCertificates(`${leafCert.pem}trailing garbage`)).toThrow(expect.objectContaining({ code: 1002 }));
  });

  it('throws 1002 when the only block has invalid base64', () => {
    expect(() => parseCertificates('-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n')).toThrow(
      expect.objectContaining({ code: 1002 }),
    );
  });

  it('throws 1003 when a block decodes but is a private key or an ill-formed certificate', () => {
    expect(() => parseCertificates(testKey('p256').pkcs8Pem)).toThrow(expect.objectContaining({ code: 1003 }));
    const broken = certificateToPem(leaf.der.subarray(0, 200));
    expect(() => parseCertificates(`${leafCert.pem}${broken}`)).toThrow(CertificateParseError);
  });

  it('throws only 1002 or 1003 when given arbitrary text, bytes or PEM-wrapped bytes', () => {
    const codeOf = (input: string | Uint8Array): number => {
      try {
        parseCertificates(input);
        return 0;
      } catch (error) {
        return (error as { code?: number }).code ?? -1;
      }
    };
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.uint8Array({ maxLength: 200 })), (input) => {
        expect([1002, 1003]).toContain(codeOf(input));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), (bytes) => {
        expect(codeOf(certificateToPem(bytes))).toBe(1003);
      }),
      { numRuns: 300 },
    );
  });

  it('parses a PEM chain file from disk in order when read as bytes', () => {
    const path = writeScratch('chain.pem', `${leafCert.pem}${richCa.pem}`);
    expect(parseCertificates(readFileSync(path))).toHaveLength(2);
  });
});

// Last, so the RSA-3072 key generated in the background since module load is ready by now.
describe('parseCertificate with an RSA-3072 key', () => {
  it('reports 3072 modulus bits', async () => {
    const rsaKey = await rsa3072;
    const path = writeScratch('rsa3072.key', rsaKey.export({ type: 'pkcs8', format: 'pem' }));
    const cert = makeCertificate({ key: { ...testKey('p256'), kind: 'rsa3072', privateKey: rsaKey, path }, subject: '/CN=k', digest: 'sha384' });
    expect(parseCertificate(cert.der).publicKey).toMatchObject({ algorithm: 'RSA', bits: 3072, curve: null });
    expect(parseCertificate(cert.der).signatureAlgorithm.name).toBe('SHA384WithRSA');
  });
});
