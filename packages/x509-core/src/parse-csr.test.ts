import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import './test-support/reflect-metadata.js';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodePem } from './pem.js';
import { parseCertificateRequest, parseCertificateRequestDer, verifyCertificateRequestSignature } from './parse-csr.js';
import type { CertificateRequest } from './parse-csr.js';
import { TEST_ATTRIBUTE_OID, openssl, prepareKeys, scratchPath, testKey } from './test-support/fixtures.js';
import type { KeyKind } from './test-support/fixtures.js';

const code = (fn: () => unknown): number | undefined => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: number }).code;
  }
  return undefined;
};

/**
 * A CSR made by `openssl req -new` with the given `[ext]` request extensions. With `subject` null
 * the DN comes from the config (`CN = from config`), which is the only way openssl also writes the
 * challengePassword attribute.
 */
function makeCsr(kind: KeyKind, subject: string | null, extensions: string, extraArgs: string[] = []): string {
  const config = scratchPath('csr.cnf');
  writeFileSync(
    config,
    ['oid_section = new_oids', '[new_oids]', `testAttribute = ${TEST_ATTRIBUTE_OID}`, '[req]', 'prompt = no', 'distinguished_name = dn', 'req_extensions = ext', 'attributes = attrs', '[dn]', 'CN = from config', '[attrs]', 'challengePassword = secret123', '[ext]', extensions, ''].join('\n'),
  );
  const subjectArgs = subject === null ? [] : ['-subj', subject, '-multivalue-rdn'];
  return openssl(['req', '-new', '-key', testKey(kind).path, ...subjectArgs, '-config', config, ...extraArgs]).toString();
}

let csrPem: string;
let csr: CertificateRequest;

beforeAll(async () => {
  await prepareKeys(['p256', 'rsa2048', 'ed25519']);
  csrPem = makeCsr(
    'p256',
    '/C=US/O=Example+OU=Eng/CN=csr.example.com/emailAddress=admin@example.com/testAttribute=custom',
    [
      'subjectAltName = DNS:csr.example.com,DNS:www.csr.example.com,IP:10.0.0.1,IP:fe80::1,email:a@b.c,URI:spiffe://example/x',
      'basicConstraints = critical,CA:TRUE,pathlen:1',
      'keyUsage = critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage = serverAuth',
      '1.2.3.4.99 = critical,ASN1:NULL',
    ].join('\n'),
  );
  csr = parseCertificateRequest(csrPem);
});

describe('parseCertificateRequest', () => {
  it('reads subject, key, SANs and requested extensions when given an openssl CSR', () => {
    expect(csr.version).toBe(0);
    expect(csr.subject.rdns.flat().map((atv) => atv.oid)).toEqual(
      expect.arrayContaining(['2.5.4.6', '2.5.4.10', '2.5.4.11', '2.5.4.3', '1.2.840.113549.1.9.1', TEST_ATTRIBUTE_OID]),
    );
    expect(csr.subject.rdns[1]).toHaveLength(2);
    expect(csr.publicKey).toMatchObject({ algorithm: 'ECDSA', curve: 'P-256', bits: 256 });
    expect(csr.signatureAlgorithm.name).toBe('ECDSAWithSHA256');
    expect(csr.subjectAltNames).toEqual({
      dns: ['csr.example.com', 'www.csr.example.com'],
      email: ['a@b.c'],
      ip: ['10.0.0.1', 'fe80::1'],
      uri: ['spiffe://example/x'],
    });
    expect(csr.basicConstraints).toEqual({ ca: true, pathLenConstraint: 1 });
    expect(csr.requestedExtensions.keyUsage).toBe(0b101);
    expect(csr.requestedExtensions.extKeyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(csr.requestedExtensions.unhandledCriticalExtensions).toEqual(['1.2.3.4.99']);
    expect(csr.extensions.map((ext) => ext.oid)).toEqual(['2.5.29.17', '2.5.29.19', '2.5.29.15', '2.5.29.37', '1.2.3.4.99']);
    expect(csr.attributes.map((attribute) => attribute.oid)).toEqual(['1.2.840.113549.1.9.14']);
  });

  it('keeps every attribute raw when the CSR has a challengePassword', () => {
    const withPassword = parseCertificateRequest(makeCsr('p256', null, 'basicConstraints = CA:FALSE'));
    expect(withPassword.subject.rdns).toEqual([[{ oid: '2.5.4.3', value: 'from config' }]]);
    const password = withPassword.attributes.find((attribute) => attribute.oid === '1.2.840.113549.1.9.7')!;
    expect(Buffer.from(password.values[0]!).subarray(2).toString()).toBe('secret123');
    expect(withPassword.basicConstraints).toEqual({ ca: false, pathLenConstraint: null });
  });

  it('agrees with @peculiar/x509 on subject key and SANs', () => {
    const peculiar = new x509.Pkcs10CertificateRequest(csrPem);
    expect(Buffer.from(csr.publicKey.spki)).toEqual(Buffer.from(peculiar.publicKey.rawData));
    const raw = peculiar.extensions.find((ext) => ext.type === '2.5.29.17')!;
    const san = new x509.SubjectAlternativeNameExtension(raw.rawData);
    expect(san.names.items.filter((name) => name.type === 'dns').map((name) => name.value)).toEqual(csr.subjectAltNames.dns);
  });

  it('accepts the NEW CERTIFICATE REQUEST label and RSA, Ed25519 and RSA-PSS signed CSRs', () => {
    expect(parseCertificateRequest(csrPem.replace(/CERTIFICATE REQUEST/g, 'NEW CERTIFICATE REQUEST')).der).toEqual(csr.der);
    expect(parseCertificateRequest(makeCsr('rsa2048', '/CN=rsa', 'basicConstraints = CA:FALSE')).signatureAlgorithm.name).toBe('SHA256WithRSA');
    expect(parseCertificateRequest(makeCsr('ed25519', '/CN=ed', 'basicConstraints = CA:FALSE')).publicKey.algorithm).toBe('Ed25519');
    const pss = parseCertificateRequest(makeCsr('rsa2048', '/CN=pss', 'basicConstraints = CA:FALSE', ['-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:20']));
    expect(pss.signatureAlgorithm).toMatchObject({ pss: true, name: 'Unknown Signature' });
  });

  it('reads a CSR made by @peculiar/x509 with an Ed25519 key', async () => {
    const keys = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    const request = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=peculiar, O=Example',
      keys,
      signingAlgorithm: { name: 'Ed25519' },
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'peculiar.example' }, { type: 'ip', value: '2001:db8::5' }])],
    });
    const parsed = parseCertificateRequest(request.toString('pem'));
    expect(parsed.subjectAltNames).toMatchObject({ dns: ['peculiar.example'], ip: ['2001:db8::5'] });
    expect(parsed.signatureAlgorithm.name).toBe('Ed25519');
  });

  it('throws 9002 when there is no PEM block', () => {
    expect(code(() => parseCertificateRequest('garbage'))).toBe(9002);
    expect(code(() => parseCertificateRequest(''))).toBe(9002);
  });

  it('throws 9300 "not a csr" when the PEM label is not a CSR label', () => {
    expect(() => parseCertificateRequest(csrPem.replace(/CERTIFICATE REQUEST/g, 'CERTIFICATE'))).toThrow(
      expect.objectContaining({ code: 9300, message: 'not a csr' }),
    );
  });

  it('throws 9003 when the DER is not a CSR', () => {
    expect(code(() => parseCertificateRequest(encodePem('CERTIFICATE REQUEST', Uint8Array.of(0x30, 0x03, 1, 2, 3))))).toBe(9003);
    expect(code(() => parseCertificateRequestDer(csr.der.subarray(0, 50)))).toBe(9003);
  });

  it('throws 9300 with Go message when the self-signature does not verify', () => {
    const tampered = new Uint8Array(csr.der);
    // flip a byte of the subject value inside the signed info
    const at = Buffer.from(tampered).indexOf(Buffer.from('csr.example.com'));
    tampered[at] = 0x44;
    expect(() => parseCertificateRequest(encodePem('CERTIFICATE REQUEST', tampered))).toThrow(
      expect.objectContaining({ code: 9300, message: 'x509: ECDSA verification failure' }),
    );
    expect(parseCertificateRequest(encodePem('CERTIFICATE REQUEST', tampered), { verifySignature: false }).subject.rdns.length).toBeGreaterThan(0);
  });
});

describe('verifyCertificateRequestSignature', () => {
  it('returns true for a genuine CSR and false once the signature is altered', () => {
    expect(verifyCertificateRequestSignature(csr)).toBe(true);
    const signature = new Uint8Array(csr.signature);
    signature[10] = signature[10]! ^ 1;
    expect(verifyCertificateRequestSignature({ ...csr, signature })).toBe(false);
  });

  it('never treats a certificate as a CSR', () => {
    const cert = openssl(['req', '-x509', '-new', '-key', testKey('p256').path, '-subj', '/CN=c', '-days', '1', '-outform', 'DER']);
    expect(new X509Certificate(cert).subject).toBe('CN=c');
    expect(code(() => parseCertificateRequestDer(cert))).toBe(9003);
  });
});
