import { X509Certificate, createHash, createPrivateKey, createPublicKey } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SignRequest, Signer } from '@certsmith/signer-api';

import { decodeNewCertificateRequest } from './certificate-request.js';
import { defaultSigningPolicy, parseSigningPolicy } from './signing-policy-loader.js';
import type { TestCa } from './test-support/openssl.js';
import {
  extensionOrder,
  extensionValue,
  makeCa,
  openssl,
  opensslDigests,
  opensslField,
  opensslReqText,
  opensslText,
  opensslVerify,
  pemDer,
  scratchDir,
  signerFor,
  verifyIndependently,
} from './test-support/openssl.js';
import { NO_HOSTS_MESSAGE } from './issuer.js';
import { generateKeyAndCsr } from './key-and-csr.js';
import { issueNewCertificate, signCertificateRequest } from './test-support/issuing.js';

const scratch = scratchDir();
let ca: TestCa;
let signer: Signer;

beforeAll(() => {
  ca = makeCa(scratch.dir, 'P-256');
  signer = signerFor(ca);
});
afterAll(() => scratch.cleanup());

/** SHA-1 of the subjectPublicKey bytes computed from Node's view of the key (independent of our encoder). */
function expectedSki(certificatePem: string): string {
  const key = new X509Certificate(certificatePem).publicKey;
  const spki = key.export({ type: 'spki', format: 'der' });
  // For EC keys the point is the trailing 65/97/133 bytes; for Ed25519 the trailing 32 bytes.
  const details = key.asymmetricKeyDetails;
  const pointLength = key.asymmetricKeyType === 'ed25519' ? 32 : details?.namedCurve === 'secp384r1' ? 97 : details?.namedCurve === 'secp521r1' ? 133 : 65;
  return createHash('sha1').update(spki.subarray(spki.length - pointLength)).digest('hex').toUpperCase().match(/../g)!.join(':');
}

const DOC_7_6 = {
  request: {
    CN: 'www.example.com',
    hosts: ['www.example.com', '192.168.1.10', 'admin@example.com', 'spiffe://example.org/svc', 'localhost:8080'],
    names: [{ C: 'US', ST: 'California', L: 'San Francisco', O: 'Example Inc', OU: 'Web' }],
  },
};

describe('Issuer.newCertificate', () => {
  it('issues what CFSSL issues when given the behaviour-doc 7.6 request', async () => {
    const before = Date.now();
    const result = await issueNewCertificate(decodeNewCertificateRequest(DOC_7_6), signer, defaultSigningPolicy());
    const text = opensslText(result.certificatePem);

    expect(opensslVerify(scratch.dir, ca, result.certificatePem)).toBe(true);
    expect(new X509Certificate(result.certificatePem).verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(opensslField(result.certificatePem, 'subject')).toBe('C = US, ST = California, L = San Francisco, O = Example Inc, OU = Web, CN = www.example.com');
    expect(opensslField(result.certificatePem, 'issuer')).toBe(opensslField(ca.certPem, 'subject'));
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(extensionOrder(text)).toEqual([
      'X509v3 Key Usage (critical)',
      'X509v3 Extended Key Usage',
      'X509v3 Basic Constraints (critical)',
      'X509v3 Subject Key Identifier',
      'X509v3 Authority Key Identifier',
      'X509v3 Subject Alternative Name',
    ]);
    expect(extensionValue(text, 'X509v3 Key Usage')).toBe('Digital Signature, Key Encipherment');
    expect(extensionValue(text, 'X509v3 Extended Key Usage')).toBe('TLS Web Server Authentication, TLS Web Client Authentication');
    expect(extensionValue(text, 'X509v3 Basic Constraints')).toBe('CA:FALSE');
    expect(extensionValue(text, 'X509v3 Subject Key Identifier')).toBe(expectedSki(result.certificatePem));
    expect(extensionValue(text, 'X509v3 Authority Key Identifier')).toContain(extensionValue(opensslText(ca.certPem), 'X509v3 Subject Key Identifier'));
    expect(extensionValue(text, 'X509v3 Subject Alternative Name')).toBe(
      'DNS:www.example.com, email:admin@example.com, IP Address:192.168.1.10, URI:spiffe://example.org/svc, URI:localhost:8080',
    );

    // Serial: at most 20 bytes, positive.
    const serial = opensslField(result.certificatePem, 'serial');
    expect(serial.length).toBeLessThanOrEqual(40);
    expect(parseInt(serial.padStart(40, '0').slice(0, 1), 16)).toBeLessThan(8);
    // …starting with the issuing time in milliseconds (48 bits), then 112 random bits.
    const issuedAtMs = parseInt(serial.padStart(40, '0').slice(0, 12), 16);
    expect(issuedAtMs).toBeGreaterThanOrEqual(before);
    expect(issuedAtMs).toBeLessThanOrEqual(Date.now());

    // Validity: now rounded to the minute minus 5 minutes, one year (8760h).
    const certificate = new X509Certificate(result.certificatePem);
    const notBefore = new Date(certificate.validFrom).getTime();
    const notAfter = new Date(certificate.validTo).getTime();
    const expected = [Math.round(before / 60_000) * 60_000 - 300_000, Math.round(Date.now() / 60_000) * 60_000 - 300_000];
    expect(expected).toContain(notBefore);
    expect(notAfter - notBefore).toBe(8760 * 3_600_000);

    // CSR: self-signature verifies, same key and subject.
    const csrText = opensslReqText(result.csrPem);
    expect(csrText).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(csrText).toContain('DNS:www.example.com, email:admin@example.com, IP Address:192.168.1.10, URI:spiffe://example.org/svc, URI:localhost:8080');

    // Private key: CFSSL's SEC1 PEM, matching the certificate.
    expect(result.privateKeyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n[\s\S]*-----END EC PRIVATE KEY-----\n$/);
    expect(createPublicKey(createPrivateKey(result.privateKeyPem)).export({ type: 'spki', format: 'der' })).toEqual(
      certificate.publicKey.export({ type: 'spki', format: 'der' }),
    );

    // Sums recomputed by openssl over the DER.
    expect(result.sums.certificate).toEqual(opensslDigests(pemDer(result.certificatePem)));
    expect(result.sums.certificate_request).toEqual(opensslDigests(pemDer(result.csrPem)));
    expect(Object.keys(result.sums.certificate)).toEqual(['md5', 'sha-1', 'sha-256']);
    expect(result.certificatePem.endsWith('-----END CERTIFICATE-----\n')).toBe(true);
    expect(result.messages).toEqual([]);
  });

  it.each([
    [{ algo: 'rsa', size: 2048 }, 'sha256WithRSAEncryption', 'RSA PRIVATE KEY', 'Public-Key: (2048 bit)'],
    [{ algo: 'rsa', size: 3072 }, 'sha384WithRSAEncryption', 'RSA PRIVATE KEY', 'Public-Key: (3072 bit)'],
    [{ size: 384 }, 'ecdsa-with-SHA384', 'EC PRIVATE KEY', 'NIST CURVE: P-384'],
    [{ algo: 'ecdsa', size: 521 }, 'ecdsa-with-SHA512', 'EC PRIVATE KEY', 'NIST CURVE: P-521'],
    [{ algo: 'ed25519' }, 'ED25519', 'Ed25519 PRIVATE KEY', 'ED25519 Public-Key'],
    [null, 'ecdsa-with-SHA256', 'EC PRIVATE KEY', 'NIST CURVE: P-256'],
  ])('signs the CSR with CFSSL\'s hash and the cert with the CA\'s when the key request is %j', async (key, csrAlgorithm, label, keyLine) => {
    const result = await issueNewCertificate(decodeNewCertificateRequest({ request: { CN: 'k.example', hosts: ['k.example'], key } }), signer, defaultSigningPolicy());
    const csrText = opensslReqText(result.csrPem);
    expect(csrText).toContain(`Signature Algorithm: ${csrAlgorithm}`);
    expect(csrText).toContain(keyLine);
    expect(result.privateKeyPem.startsWith(`-----BEGIN ${label}-----`)).toBe(true);
    const text = verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(extensionValue(text, 'X509v3 Subject Key Identifier')).toHaveLength(59);
  });

  it('signs the CSR with SHA-512 when the RSA key has 4096 bits', async () => {
    const result = await issueNewCertificate(decodeNewCertificateRequest({ request: { CN: 'big', hosts: ['big'], key: { algo: 'rsa', size: 4096 } } }), signer, defaultSigningPolicy());
    expect(opensslReqText(result.csrPem)).toContain('Signature Algorithm: sha512WithRSAEncryption');
    verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
  });

  it.each([
    ['RSA-2048', 'sha256WithRSAEncryption'],
    ['P-384', 'ecdsa-with-SHA384'],
    ['P-521', 'ecdsa-with-SHA512'],
    ['Ed25519', 'ED25519'],
  ] as const)('signs with the algorithm the %s CA key decides when the leaf key differs', async (kind, algorithm) => {
    const other = makeCa(scratch.dir, kind);
    const result = await issueNewCertificate(decodeNewCertificateRequest(DOC_7_6), signerFor(other), defaultSigningPolicy());
    expect(verifyIndependently(scratch.dir, other, result.certificatePem, result.csrPem)).toContain(`Signature Algorithm: ${algorithm}`);
  });

  it('classifies and groups hosts as CFSSL does when given the behaviour-doc 7.6 second hosts list', async () => {
    const hosts = ['*.example.com', 'example.com:443', 'John Doe <jd@example.com>', '/just/a/path', '::1', 'ftp://x.y/z', 'UPPER.Example.COM'];
    const result = await issueNewCertificate(decodeNewCertificateRequest({ request: { CN: 'hosts', hosts } }), signer, defaultSigningPolicy());
    const expected = 'DNS:*.example.com, DNS:UPPER.Example.COM, email:jd@example.com, IP Address:0:0:0:0:0:0:0:1, URI:example.com:443, URI:/just/a/path, URI:ftp://x.y/z';
    expect(extensionValue(verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem), 'X509v3 Subject Alternative Name')).toBe(expected);
    expect(opensslReqText(result.csrPem)).toContain(expected);
  });

  it('reads keys case-insensitively when the body uses other casing (behaviour doc 7.6)', async () => {
    const body = { REQUEST: { cn: 'ci.example', HOSTS: ['ci.example'], Names: [{ c: 'DE', o: 'Org' }] } };
    const result = await issueNewCertificate(decodeNewCertificateRequest(body), signer, defaultSigningPolicy());
    verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
    expect(opensslField(result.certificatePem, 'subject')).toBe('C = DE, O = Org, CN = ci.example');
  });

  it('adds the exact 5300 no-hosts message when the request has no hosts', async () => {
    for (const body of [{ request: { CN: 'nohosts' } }, {}]) {
      const result = await issueNewCertificate(decodeNewCertificateRequest(body), signer, defaultSigningPolicy());
      expect(result.messages).toEqual([{ code: 5300, message: NO_HOSTS_MESSAGE }]);
      expect(extensionOrder(verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem))).not.toContain('X509v3 Subject Alternative Name');
    }
    expect(NO_HOSTS_MESSAGE).toBe(
      'This certificate lacks a "hosts" field. This makes it unsuitable for\nwebsites. For more information see the Baseline Requirements for the Issuance and Management\nof Publicly-Trusted Certificates, v.1.1.6, from the CA/Browser Forum (https://cabforum.org);\nspecifically, section 10.2.3 ("Information Requirements").',
    );
  });

  it('encodes one sorted multi-valued RDN when a type repeats across names', async () => {
    const result = await issueNewCertificate(
      decodeNewCertificateRequest({ request: { CN: 'mn', serialnumber: 'SN123', names: [{ C: 'US', O: 'A', OU: 'u1' }, { C: 'GB', O: 'B', OU: 'u2', L: 'London', E: 'x@y.z' }] } }),
      signer,
      defaultSigningPolicy(),
    );
    verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
    expect(opensslField(result.certificatePem, 'subject')).toBe(
      'C = GB + C = US, L = London, O = A + O = B, OU = u1 + OU = u2, CN = mn, serialNumber = SN123, emailAddress = x@y.z',
    );
    expect(opensslField(result.certificatePem, 'subject')).toBe(openssl(['req', '-noout', '-subject'], result.csrPem).trim().slice('subject='.length));
  });

  it('keeps custom OIDs in the subject when names carry an OID map', async () => {
    const result = await issueNewCertificate(decodeNewCertificateRequest({ request: { CN: 'x', names: [{ O: 'Org', OID: { '1.2.3.4': 'custom' } }] } }), signer, defaultSigningPolicy());
    verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
    expect(opensslField(result.certificatePem, 'subject')).toBe('O = Org, CN = x, 1.2.3.4 = custom');
  });

  it('throws 9300 invalid OID part before generating a key when an OID is not numeric', async () => {
    await expect(issueNewCertificate(decodeNewCertificateRequest({ request: { CN: 'x', names: [{ OID: { abc: 'v' } }] } }), signer, defaultSigningPolicy())).rejects.toMatchObject({
      code: 9300,
      message: 'invalid OID part abc',
    });
  });

  it('throws 2400 RSA key is too weak when only the algorithm is rsa', async () => {
    await expect(issueNewCertificate(decodeNewCertificateRequest({ request: { key: { algo: 'rsa' } } }), signer, defaultSigningPolicy())).rejects.toMatchObject({
      code: 2400,
      message: 'RSA key is too weak',
    });
  });

  it('throws 5400 when the profile is unknown', async () => {
    await expect(issueNewCertificate({ ...decodeNewCertificateRequest(DOC_7_6), profile: 'nosuchprofile' }, signer, defaultSigningPolicy())).rejects.toMatchObject({
      code: 5400,
    });
  });

  it('carries the delegation extension into the certificate and not request extensions when delegation_enabled', async () => {
    const result = await issueNewCertificate(
      decodeNewCertificateRequest({ request: { CN: 'd', hosts: ['d'], delegation_enabled: true, extensions: [{ id: [1, 2, 3, 4], critical: false, value: 'BQA=' }] } }),
      signer,
      defaultSigningPolicy(),
    );
    const csrText = opensslReqText(result.csrPem);
    expect(csrText).toContain('1.3.6.1.4.1.44363.44');
    expect(csrText).toContain('1.2.3.4');
    const text = verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
    expect(text).toContain('1.3.6.1.4.1.44363.44');
    expect(text).not.toContain('1.2.3.4:');
    expect(extensionOrder(text).at(-1)).toBe('1.3.6.1.4.1.44363.44');
  });

  describe('with a CFSSL config', () => {
    const policy = parseSigningPolicy({
      signing: {
        default: { usages: ['signing', 'key encipherment', 'server auth'], expiry: '168h', ocsp_url: 'http://ocsp.example.com', issuer_urls: ['http://ca.example.com/ca.crt'] },
        profiles: {
          client: { usages: ['signing', 'client auth'], expiry: '90m', crl_url: 'http://crl.example.com/ca.crl', ocsp_no_check: true },
          whitelisted: { usages: ['server auth'], expiry: '1h', name_whitelist: '\\.example\\.com$' },
          intermediate: { usages: ['cert sign', 'crl sign'], expiry: '8760h', ca_constraint: { is_ca: true, max_path_len: 0, max_path_len_zero: true } },
          copying: { usages: ['server auth'], expiry: '1h', copy_extensions: true, Policies: [{ ID: '1.2.3.4.5', qualifiers: [{ type: 'id-qt-cps', value: 'https://cps.example' }] }] },
          nousage: { usages: ['bogus', 'server auth'], expiry: '1h' },
        },
      },
    });

    it('applies the profile usages, expiry and URLs when a profile is chosen', async () => {
      const result = await issueNewCertificate({ ...decodeNewCertificateRequest(DOC_7_6), profile: 'client' }, signer, policy);
      const text = verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
      expect(extensionOrder(text)).toEqual([
        'X509v3 Key Usage (critical)',
        'X509v3 Extended Key Usage',
        'X509v3 Basic Constraints (critical)',
        'X509v3 Subject Key Identifier',
        'X509v3 Authority Key Identifier',
        'Authority Information Access',
        'X509v3 Subject Alternative Name',
        'X509v3 CRL Distribution Points',
        'OCSP No Check',
      ]);
      expect(extensionValue(text, 'X509v3 Key Usage')).toBe('Digital Signature');
      expect(extensionValue(text, 'X509v3 Extended Key Usage')).toBe('TLS Web Client Authentication');
      // OCSP and CA issuer URLs fall back to the default profile, as cfssl FillTemplate does.
      expect(extensionValue(text, 'Authority Information Access')).toBe('OCSP - URI:http://ocsp.example.com\nCA Issuers - URI:http://ca.example.com/ca.crt');
      expect(extensionValue(text, 'X509v3 CRL Distribution Points')).toContain('URI:http://crl.example.com/ca.crl');
      const certificate = new X509Certificate(result.certificatePem);
      expect(new Date(certificate.validTo).getTime() - new Date(certificate.validFrom).getTime()).toBe(90 * 60_000);
      expect(opensslVerify(scratch.dir, ca, result.certificatePem, 'sslclient')).toBe(true);
    });

    it('throws 5500 when the common name does not match the whitelist', async () => {
      await expect(issueNewCertificate({ request: { CN: 'evil.test', hosts: ['www.example.com'] }, profile: 'whitelisted' }, signer, policy)).rejects.toMatchObject({
        code: 5500,
        message: 'Request does not match policy whitelist',
      });
    });

    it('throws 5500 when a SAN does not match the whitelist', async () => {
      await expect(issueNewCertificate({ request: { CN: 'a.example.com', hosts: ['a.example.com', 'x.test'] }, profile: 'whitelisted' }, signer, policy)).rejects.toMatchObject({
        code: 5500,
      });
    });

    it('issues when every name matches the whitelist', async () => {
      const result = await issueNewCertificate({ request: { CN: 'a.example.com', hosts: ['a.example.com', '10.0.0.1'] }, profile: 'whitelisted' }, signer, policy);
      verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
    });

    it('issues a CA certificate without DNS, email or URI SANs when the profile is a CA profile', async () => {
      const result = await issueNewCertificate(
        { request: { CN: 'Sub CA', hosts: ['sub.example.com', 'ca@example.com', 'spiffe://x/y', '10.0.0.1'] }, profile: 'intermediate' },
        signer,
        policy,
      );
      const text = verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
      expect(extensionValue(text, 'X509v3 Basic Constraints')).toBe('CA:TRUE, pathlen:0');
      expect(extensionValue(text, 'X509v3 Key Usage')).toBe('Certificate Sign, CRL Sign');
      expect(extensionValue(text, 'X509v3 Subject Alternative Name')).toBe('IP Address:10.0.0.1');
      expect(extensionOrder(text)).not.toContain('X509v3 Extended Key Usage');
    });

    it('copies CSR extensions and adds certificate policies when copy_extensions and Policies are set', async () => {
      const result = await issueNewCertificate(
        decodeNewCertificateRequest({ request: { CN: 'c', hosts: ['c.example'], extensions: [{ id: [1, 2, 3, 4], value: 'BQA=' }] }, profile: 'copying' }),
        signer,
        policy,
      );
      const text = verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
      const order = extensionOrder(text);
      // With copy_extensions the CSR's SAN extension is copied among the extras, so Go skips its own.
      expect(order.slice(-3)).toEqual(['X509v3 Subject Alternative Name', '1.2.3.4', 'X509v3 Certificate Policies']);
      expect(extensionValue(text, 'X509v3 Certificate Policies')).toContain('CPS: https://cps.example');
    });

    it('ignores unknown usage names when the profile has a known one too', async () => {
      const result = await issueNewCertificate({ request: { CN: 'u', hosts: ['u'] }, profile: 'nousage' }, signer, policy);
      expect(extensionValue(verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem), 'X509v3 Extended Key Usage')).toBe(
        'TLS Web Server Authentication',
      );
    });
  });

  it('forwards the CSR, profile and label when the signer only signs whole requests', async () => {
    const seen: SignRequest[] = [];
    const local = signerFor(ca);
    const remote: Signer = {
      algorithms: [],
      getCertificate: () => local.getCertificate(),
      async signRequest(request) {
        seen.push(request);
        return { certificatePem: (await signCertificateRequest({ ...request, profile: '', label: '' }, local, defaultSigningPolicy())).certificatePem };
      },
      async close() {},
    };
    const result = await issueNewCertificate({ ...decodeNewCertificateRequest(DOC_7_6), profile: 'p', label: 'primary' }, remote, defaultSigningPolicy());
    expect(seen).toEqual([{ certificate_request: result.csrPem, profile: 'p', label: 'primary' }]);
    verifyIndependently(scratch.dir, ca, result.certificatePem, result.csrPem);
    expect(result.sums.certificate).toEqual(opensslDigests(pemDer(result.certificatePem)));
  });
});

describe('generateKeyAndCsr', () => {
  it('returns a verifiable CSR with its sums when given the behaviour-doc 7.10 newkey request', async () => {
    const result = await generateKeyAndCsr(decodeNewCertificateRequest({ request: { CN: 'nk.example', hosts: ['nk.example'], names: [{ O: 'X' }] } }).request);
    const text = opensslReqText(result.csrPem);
    expect(text).toContain('Subject: O = X, CN = nk.example');
    expect(text).toContain('DNS:nk.example');
    expect(result.sums.certificate_request).toEqual(opensslDigests(result.csrDer));
    expect(result.csrPem.endsWith('-----END CERTIFICATE REQUEST-----\n')).toBe(true);
  });

  it('omits the extension request attribute when there are no hosts or extensions', async () => {
    const result = await generateKeyAndCsr({ CN: 'bare' });
    expect(opensslReqText(result.csrPem)).toMatch(/Attributes:\s*\(none\)|Attributes:\s*\n\s*a0:00/);
  });
});
