import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodePem } from './pem.js';
import { parseCertificate } from './parse-certificate.js';
import { assertKeyMatchesCertificate, encodePrivateKeyCfssl, parsePrivateKey, parsePrivateKeyDer } from './parse-private-key.js';
import { DerReader, elementBytes } from './der-reader.js';
import { derConstructed, derExplicit, derInteger, derOctetString, derOid, derSequence, derTlv } from './der-writer.js';
import { makeCertificate, openssl, prepareKeys, testKey } from './test-support/fixtures.js';
import type { KeyKind } from './test-support/fixtures.js';

beforeAll(() => prepareKeys(['rsa2048', 'p256', 'p384', 'p521', 'ed25519', 'dsa']));

const code = (fn: () => unknown): number | undefined => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: number }).code;
  }
  return undefined;
};

describe('parsePrivateKey', () => {
  it('reads PKCS#8 keys of every supported algorithm', () => {
    const expected: Array<[KeyKind, string, number, string | null]> = [
      ['rsa2048', 'RSA', 2048, null],
      ['p256', 'ECDSA', 256, 'P-256'],
      ['p384', 'ECDSA', 384, 'P-384'],
      ['ed25519', 'Ed25519', 256, null],
    ];
    for (const [kind, algorithm, bits, curve] of expected) {
      const key = parsePrivateKey(testKey(kind).pkcs8Pem);
      expect(key).toMatchObject({ algorithm, format: 'pkcs8', publicKey: { bits, curve } });
      expect(key.keyObject.type).toBe('private');
    }
  });

  it('reads PKCS#1 RSA and SEC 1 EC keys, skipping leading EC PARAMETERS blocks', () => {
    const rsa = testKey('rsa2048').privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    expect(parsePrivateKey(rsa)).toMatchObject({ algorithm: 'RSA', format: 'pkcs1' });
    const withParams = openssl(['ecparam', '-name', 'secp384r1', '-genkey']).toString();
    expect(withParams).toContain('-----BEGIN EC PARAMETERS-----');
    expect(parsePrivateKey(withParams)).toMatchObject({ algorithm: 'ECDSA', format: 'sec1', publicKey: { curve: 'P-384' } });
  });

  it('reads an RFC 8410 key whether labelled PRIVATE KEY or Ed25519 PRIVATE KEY', () => {
    const der = testKey('ed25519').privateKey.export({ type: 'pkcs8', format: 'der' });
    expect(parsePrivateKey(encodePem('Ed25519 PRIVATE KEY', der)).algorithm).toBe('Ed25519');
    expect(parsePrivateKey(encodePem('PRIVATE KEY', der)).algorithm).toBe('Ed25519');
  });

  it('throws 2002 when there is no PEM block or only EC PARAMETERS', () => {
    expect(code(() => parsePrivateKey('not a key'))).toBe(2002);
    expect(code(() => parsePrivateKey(''))).toBe(2002);
    expect(code(() => parsePrivateKey(openssl(['ecparam', '-name', 'prime256v1']).toString()))).toBe(2002);
  });

  it('throws 2100 when the key is encrypted traditionally or as PKCS#8', () => {
    const path = testKey('rsa2048').path;
    const traditional = openssl(['rsa', '-in', path, '-aes256', '-traditional', '-passout', 'pass:secret']).toString();
    expect(traditional).toContain('Proc-Type: 4,ENCRYPTED');
    expect(code(() => parsePrivateKey(traditional))).toBe(2100);
    const pkcs8 = openssl(['pkey', '-in', testKey('p256').path, '-aes256', '-passout', 'pass:secret']).toString();
    expect(pkcs8).toContain('ENCRYPTED PRIVATE KEY');
    expect(code(() => parsePrivateKey(pkcs8))).toBe(2100);
  });

  it('throws 2003 when the block is a certificate, a DSA key, an X25519 key or garbage', () => {
    const cert = makeCertificate({ key: testKey('p256'), subject: '/CN=not a key' });
    expect(code(() => parsePrivateKey(cert.pem))).toBe(2003);
    expect(code(() => parsePrivateKey(testKey('dsa').pkcs8Pem))).toBe(2003);
    const x25519 = generateKeyPairSync('x25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(code(() => parsePrivateKey(x25519))).toBe(2003);
    expect(code(() => parsePrivateKey(encodePem('RSA PRIVATE KEY', Uint8Array.of(1, 2, 3))))).toBe(2003);
  });

  it('throws 2003 when the EC key is on a curve Go does not support', () => {
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey.export({ type: 'sec1', format: 'pem' }) as string;
    expect(code(() => parsePrivateKey(k1))).toBe(2003);
  });
});

describe('parsePrivateKeyDer', () => {
  const tlv = (tag: number, content: Uint8Array): Uint8Array => Uint8Array.from([...derTlv(tag, content)]);

  /** A SEC 1 key with its fields replaced: `fields(original)` returns the new field TLVs. */
  function sec1With(kind: KeyKind, fields: (original: Uint8Array[]) => Uint8Array[]): Uint8Array {
    const der = new Uint8Array(testKey(kind).privateKey.export({ type: 'sec1', format: 'der' }));
    const reader = new DerReader(der).sequence();
    const original: Uint8Array[] = [];
    while (reader.hasMore()) original.push(elementBytes(der, reader.read()));
    return derSequence(...fields(original));
  }

  it('refuses, with 2003 and without aborting the process, a SEC 1 key whose scalar is a long constructed OCTET STRING (found by tools/fuzz)', () => {
    // The fuzzer's input: Node's asymmetricKeyDetails hit a native assertion on what OpenSSL made of it.
    const scalar = Uint8Array.from(testKey('p521').privateKey.export({ format: 'jwk' }).d!.split('').map((c) => c.charCodeAt(0)));
    const constructed = derConstructed(0x24, Array.from({ length: 160 }, () => tlv(0x86, scalar.subarray(0, 66))));
    const key = sec1With('p521', ([version, , ...rest]) => [version!, constructed, ...rest]);
    expect(code(() => parsePrivateKeyDer(key))).toBe(2003);
  });

  it.each([
    ['a scalar of zero', (order: bigint) => 0n],
    ['a scalar equal to the curve order', (order: bigint) => order],
    ['a scalar above the curve order', (order: bigint) => order + 5n],
  ])('refuses a P-256 key with %s (Go: invalid elliptic curve private key value)', (_name, value) => {
    const order = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
    const octets = Uint8Array.from(Buffer.from(value(order).toString(16).padStart(64, '0').slice(-64), 'hex'));
    const key = sec1With('p256', ([version, , ...rest]) => [version!, derOctetString(value(order) > order ? Uint8Array.of(1, ...octets) : octets), ...rest]);
    expect(code(() => parsePrivateKeyDer(key))).toBe(2003);
  });

  it('refuses an EC key without a curve, with an unknown curve or with explicit parameters', () => {
    expect(code(() => parsePrivateKeyDer(sec1With('p256', ([version, scalar]) => [version!, scalar!])))).toBe(2003);
    expect(code(() => parsePrivateKeyDer(sec1With('p256', ([version, scalar, , publicKey]) => [version!, scalar!, derExplicit(0, derOid('1.3.132.0.10')), publicKey!])))).toBe(2003);
    expect(code(() => parsePrivateKeyDer(sec1With('p256', ([version, scalar, , publicKey]) => [version!, scalar!, derExplicit(0, derSequence(derInteger(1))), publicKey!])))).toBe(2003);
  });

  it('refuses an RSA key whose primes do not multiply to the modulus, or with a zero component', () => {
    const der = new Uint8Array(testKey('rsa2048').privateKey.export({ type: 'pkcs1', format: 'der' }));
    const reader = new DerReader(der).sequence();
    const fields: Uint8Array[] = [];
    while (reader.hasMore()) fields.push(elementBytes(der, reader.read()));
    const swapped = [...fields];
    swapped[4] = derInteger(3);
    expect(code(() => parsePrivateKeyDer(derSequence(...swapped)))).toBe(2003);
    const zero = [...fields];
    zero[3] = derInteger(0);
    expect(code(() => parsePrivateKeyDer(derSequence(...zero)))).toBe(2003);
    expect(parsePrivateKeyDer(derSequence(...fields))).toMatchObject({ algorithm: 'RSA', format: 'pkcs1' });
  });

  it('refuses an RSA modulus over 16384 bits before any arithmetic on it', () => {
    const huge = new Uint8Array(1 << 20).fill(0xff);
    const key = derSequence(derInteger(0), derInteger(huge), derInteger(65537), derInteger(huge), derInteger(3), derInteger(5), derInteger(1), derInteger(1), derInteger(1));
    expect(code(() => parsePrivateKeyDer(key))).toBe(2003);
  });

  it('refuses BER: a non-minimal length in an otherwise valid key', () => {
    const der = new Uint8Array(testKey('p256').privateKey.export({ type: 'sec1', format: 'der' }));
    // 30 77 … → 30 81 77 …: the same key with a long-form length Go (and DER) refuses.
    const ber = Uint8Array.of(0x30, 0x81, der[1]!, ...der.subarray(2));
    expect(code(() => parsePrivateKeyDer(ber))).toBe(2003);
    expect(parsePrivateKeyDer(der)).toMatchObject({ algorithm: 'ECDSA', format: 'sec1', publicKey: { curve: 'P-256' } });
  });

  it('refuses an Ed25519 PKCS#8 key whose seed is not 32 octets', () => {
    const der = derSequence(derInteger(0), derSequence(derOid('1.3.101.112')), derOctetString(derOctetString(new Uint8Array(31))));
    expect(code(() => parsePrivateKeyDer(der))).toBe(2003);
  });
});

describe('assertKeyMatchesCertificate', () => {
  const certFor = (kind: KeyKind) => parseCertificate(makeCertificate({ key: testKey(kind), subject: `/CN=${kind}` }).der);

  it('passes when the key belongs to the certificate for RSA, ECDSA and Ed25519', () => {
    for (const kind of ['rsa2048', 'p256', 'ed25519'] as const) {
      expect(() => assertKeyMatchesCertificate(parsePrivateKey(testKey(kind).pkcs8Pem), certFor(kind))).not.toThrow();
    }
  });

  it('throws 2300 when the key is another key of the same type or of another type', () => {
    const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const otherEc = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const otherEd = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(code(() => assertKeyMatchesCertificate(parsePrivateKey(otherRsa), certFor('rsa2048')))).toBe(2300);
    expect(code(() => assertKeyMatchesCertificate(parsePrivateKey(otherEc), certFor('p256')))).toBe(2300);
    expect(code(() => assertKeyMatchesCertificate(parsePrivateKey(otherEd), certFor('ed25519')))).toBe(2300);
    expect(code(() => assertKeyMatchesCertificate(parsePrivateKey(testKey('p256').pkcs8Pem), certFor('rsa2048')))).toBe(2300);
  });

  it('compares only the X coordinate of ECDSA keys, as CFSSL does', () => {
    const cert = certFor('p256');
    const key = parsePrivateKey(testKey('p256').pkcs8Pem);
    const spki = new Uint8Array(key.publicKey.subjectPublicKey);
    spki[spki.length - 1] = spki[spki.length - 1]! ^ 0xff; // different Y, same X
    expect(() => assertKeyMatchesCertificate({ ...key, publicKey: { ...key.publicKey, subjectPublicKey: spki } }, cert)).not.toThrow();
  });

  it('throws 2200 when the leaf key is DSA, with or without a private key', () => {
    const dsaCert = parseCertificate(
      makeCertificate({ key: testKey('dsa'), subject: '/CN=dsa', digest: 'sha256' }).der,
    );
    expect(dsaCert.publicKey.algorithm).toBe('DSA');
    expect(code(() => assertKeyMatchesCertificate(null, dsaCert))).toBe(2200);
    expect(code(() => assertKeyMatchesCertificate(parsePrivateKey(testKey('p256').pkcs8Pem), dsaCert))).toBe(2200);
    expect(() => assertKeyMatchesCertificate(null, certFor('p256'))).not.toThrow();
  });
});

describe('encodePrivateKeyCfssl', () => {
  it('re-encodes PKCS#8 input as PKCS#1, SEC 1 and labelled RFC 8410, trimmed', () => {
    const rsa = encodePrivateKeyCfssl(parsePrivateKey(testKey('rsa2048').pkcs8Pem));
    expect(rsa.startsWith('-----BEGIN RSA PRIVATE KEY-----\n')).toBe(true);
    expect(rsa.endsWith('-----END RSA PRIVATE KEY-----')).toBe(true);
    const ec = encodePrivateKeyCfssl(parsePrivateKey(testKey('p256').pkcs8Pem));
    expect(ec).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n[^]*-----END EC PRIVATE KEY-----$/);
    const ed = encodePrivateKeyCfssl(testKey('ed25519').privateKey);
    expect(ed).toMatch(/^-----BEGIN Ed25519 PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIE/);
    expect(ed.endsWith('-----END Ed25519 PRIVATE KEY-----')).toBe(true);
  });

  it('round-trips through parsePrivateKey to the same public key', () => {
    for (const kind of ['rsa2048', 'p384', 'ed25519'] as const) {
      const original = parsePrivateKey(testKey(kind).pkcs8Pem);
      const again = parsePrivateKey(encodePrivateKeyCfssl(original));
      expect(Buffer.from(again.publicKey.spki)).toEqual(Buffer.from(original.publicKey.spki));
    }
    const sec1 = encodePrivateKeyCfssl(parsePrivateKey(testKey('p256').pkcs8Pem));
    expect(createPrivateKey(sec1).asymmetricKeyType).toBe('ec');
  });

  it('throws 2200 for key types CFSSL cannot encode', () => {
    expect(code(() => encodePrivateKeyCfssl(testKey('dsa').privateKey))).toBe(2200);
  });
});

