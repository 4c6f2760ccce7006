import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodePem } from './pem.js';
import { parseCertificate } from './parse-certificate.js';
import { assertKeyMatchesCertificate, encodePrivateKeyCfssl, parsePrivateKey } from './parse-private-key.js';
import { makeCertificate, openssl, prepareKeys, testKey } from './test-support/fixtures.js';
import type { KeyKind } from './test-support/fixtures.js';

beforeAll(() => prepareKeys(['rsa2048', 'p256', 'p384', 'ed25519', 'dsa']));

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

