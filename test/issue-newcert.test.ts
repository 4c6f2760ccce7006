/**
 * newcert, newkey and info against the real built server (behaviour doc 3.1–3.9, 7.6–7.10): a
 * signing intermediate made by openssl, configured as the `default` signer through the config
 * file's `signers` section (relative paths), with `--ca-bundle`/`--int-bundle` so `"bundle": true`
 * works. Every certificate is checked with `openssl verify`, its fields with `openssl x509 -text`,
 * every CSR with `openssl req -verify`, and the sums are recomputed from the PEMs.
 */
import { NO_HOSTS_MESSAGE } from '@certsmith/issuer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith } from './helpers/certsmith-process.js';
import {
  TLS_USAGES,
  certificateText,
  createScratch,
  makeIntermediateCa,
  makeRootCa,
  post,
  startServer,
  sumsOf,
  verifyCertificate,
  verifyCsr,
} from './fixtures-issue.js';
import type { OpensslCa, Scratch, Server } from './fixtures-issue.js';

let scratch: Scratch;
let root: OpensslCa;
let issuing: OpensslCa;
let server: Server;

beforeAll(async () => {
  scratch = await createScratch('newcert');
  root = await makeRootCa(scratch, 'root', 'E2E Root');
  issuing = await makeIntermediateCa(scratch, 'issuing', root);
  const config = await scratch.write('certsmith.json', {
    signing: {
      default: { expiry: '8760h', usages: TLS_USAGES },
      profiles: { client: { expiry: '2h', usages: ['signing', 'client auth'] } },
    },
    // CFSSL sections certsmith does not use are tolerated.
    ocsp: { ca_cert: 'unused.pem' },
    signers: { default: { plugin: '@certsmith/signer-local', options: { certFile: 'issuing.pem', keyFile: 'file:issuing-key.pem' } } },
  });
  server = await startServer([
    '--config', config,
    '--data-dir', scratch.path('data'),
    '--ca-bundle', root.certFile,
    '--int-bundle', issuing.certFile,
  ]);
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

/** Verify the chain leaf → issuing → root with openssl. */
async function expectVerifies(certificatePem: string): Promise<void> {
  expect(await verifyCertificate(scratch, certificatePem, root.certFile, issuing.certFile)).toMatch(/: OK\n$/);
}

describe('newcert', () => {
  it('issues the behaviour-doc 7.6 request: chain, subject, extensions, SANs, sums, key order', async () => {
    const { status, envelope, text } = await post(server.url, 'newcert', {
      request: {
        CN: 'www.example.com',
        hosts: ['www.example.com', '192.168.1.10', 'admin@example.com', 'spiffe://example.org/svc', 'localhost:8080'],
        names: [{ C: 'US', ST: 'California', L: 'San Francisco', O: 'Example Inc', OU: 'Web' }],
      },
    });
    expect(status).toBe(200);
    expect(text.endsWith('\n')).toBe(true);
    expect(envelope).toMatchObject({ success: true, errors: [], messages: [] });
    const result = envelope.result;
    expect(Object.keys(result)).toEqual(['certificate', 'certificate_request', 'private_key', 'sums']);
    expect(result.private_key).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n[\s\S]+-----END EC PRIVATE KEY-----\n$/);
    expect(result.certificate).toMatch(/-----END CERTIFICATE-----\n$/);
    expect(result.certificate_request).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n[\s\S]+\n$/);
    expect(result.sums).toEqual({ certificate: sumsOf(result.certificate), certificate_request: sumsOf(result.certificate_request) });
    expect(Object.keys(result.sums.certificate)).toEqual(['md5', 'sha-1', 'sha-256']);

    await expectVerifies(result.certificate);
    await verifyCsr(scratch, result.certificate_request);
    const textOut = await certificateText(scratch, result.certificate);
    expect(textOut).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(textOut).toContain('Issuer: CN=issuing CA,O=certsmith e2e');
    expect(textOut).toContain('Subject: CN=www.example.com,OU=Web,O=Example Inc,L=San Francisco,ST=California,C=US');
    expect(textOut).toMatch(/X509v3 Key Usage: critical\n\s+Digital Signature, Key Encipherment/);
    expect(textOut).toMatch(/X509v3 Extended Key Usage: \n\s+TLS Web Server Authentication, TLS Web Client Authentication/);
    expect(textOut).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:FALSE/);
    expect(textOut).toContain('X509v3 Authority Key Identifier');
    expect(textOut).toContain(
      'DNS:www.example.com, email:admin@example.com, IP Address:192.168.1.10, URI:spiffe://example.org/svc, URI:localhost:8080',
    );
  });

  it.each([
    [{ algo: 'ecdsa', size: 256 }, 'EC PRIVATE KEY', /Public-Key: \(256 bit\)/, 'ecdsa-with-SHA256'],
    [{ algo: 'ecdsa', size: 384 }, 'EC PRIVATE KEY', /Public-Key: \(384 bit\)/, 'ecdsa-with-SHA384'],
    [{ algo: 'ecdsa', size: 521 }, 'EC PRIVATE KEY', /Public-Key: \(521 bit\)/, 'ecdsa-with-SHA512'],
    [{ algo: 'rsa', size: 2048 }, 'RSA PRIVATE KEY', /Public-Key: \(2048 bit\)/, 'sha256WithRSAEncryption'],
    [{ algo: 'rsa', size: 3072 }, 'RSA PRIVATE KEY', /Public-Key: \(3072 bit\)/, 'sha384WithRSAEncryption'],
    [{ algo: 'ed25519' }, 'Ed25519 PRIVATE KEY', /Public Key Algorithm: ED25519/, 'ED25519'],
  ])('issues a %j key: key label, key in the certificate, CSR hash, chain verifies', async (key, label, publicKey, csrAlgorithm) => {
    const { envelope } = await post(server.url, 'newcert', { request: { CN: 'k.example', hosts: ['k.example'], key } });
    expect(envelope.errors).toEqual([]);
    const { certificate, certificate_request: csr, private_key: privateKey } = envelope.result;
    expect(privateKey.startsWith(`-----BEGIN ${label}-----\n`)).toBe(true);
    await expectVerifies(certificate);
    const textOut = await certificateText(scratch, certificate);
    expect(textOut).toMatch(publicKey);
    // The certificate's signature algorithm comes from the CA key (ECDSA P-256), whatever the leaf key.
    expect(textOut).toContain('Signature Algorithm: ecdsa-with-SHA256');
    const csrText = await verifyCsr(scratch, csr);
    expect(csrText).toContain(`Signature Algorithm: ${csrAlgorithm}`);
    expect(envelope.result.sums.certificate_request).toEqual(sumsOf(csr));
  });

  it.each([
    [{ algo: 'rsa', size: 1024 }, 'RSA key is too weak'],
    [{ algo: 'rsa', size: 9000 }, 'RSA key size too large'],
    [{ algo: 'rsa' }, 'RSA key is too weak'],
    [{ algo: 'ecdsa', size: 224 }, 'invalid curve'],
    [{ algo: 'dsa', size: 2048 }, 'invalid algorithm'],
    [{ algo: 'RSA', size: 2048 }, 'invalid algorithm'],
  ])('refuses key %j with 2400 and CFSSL\'s text', async (key, message) => {
    const { status, envelope } = await post(server.url, 'newcert', { request: { CN: 'a.example.com', hosts: ['a.example.com'], key } });
    expect(status).toBe(400);
    expect(envelope).toEqual({ success: false, result: null, errors: [{ code: 2400, message }], messages: [] });
  });

  it('classifies every kind of host as CFSSL does', async () => {
    const hosts = ['*.example.com', 'example.com:443', 'John Doe <jd@example.com>', '/just/a/path', '::1', 'ftp://x.y/z', 'UPPER.Example.COM'];
    const { envelope } = await post(server.url, 'newcert', { request: { CN: 'hosts', hosts } });
    await expectVerifies(envelope.result.certificate);
    expect(await certificateText(scratch, envelope.result.certificate)).toContain(
      'DNS:*.example.com, DNS:UPPER.Example.COM, email:jd@example.com, IP Address:0:0:0:0:0:0:0:1, URI:example.com:443, URI:/just/a/path, URI:ftp://x.y/z',
    );
  });

  it('merges repeated name attributes into multi-valued RDNs, with case-insensitive keys', async () => {
    const { envelope } = await post(server.url, 'newcert', {
      REQUEST: { cn: 'mn', HOSTS: ['mn.example'], Names: [{ c: 'US', O: 'A', OU: 'u1' }, { C: 'GB', O: 'B', OU: 'u2', L: 'London' }], serialnumber: 'SN123' },
    });
    await expectVerifies(envelope.result.certificate);
    const subject = /Subject: (.*)\n/.exec(await certificateText(scratch, envelope.result.certificate))![1];
    // RFC 2253 prints the RDNs, and the values inside each, last first: the DER order is
    // C=GB+C=US (sorted by DER, behaviour doc 3.4), L, O=A+O=B, OU=u1+OU=u2, CN, serialNumber.
    expect(subject).toBe('serialNumber=SN123,CN=mn,OU=u2+OU=u1,O=B+O=A,L=London,C=US+C=GB');
  });

  it('signs under the chosen profile', async () => {
    const { envelope } = await post(server.url, 'newcert', { request: { CN: 'c.example', hosts: ['c.example'] }, profile: 'client' });
    await expectVerifies(envelope.result.certificate);
    const textOut = await certificateText(scratch, envelope.result.certificate);
    expect(textOut).toMatch(/X509v3 Extended Key Usage: \n\s+TLS Web Client Authentication\n/);
    const notBefore = Date.parse(/Not Before: (.*)\n/.exec(textOut)![1]!);
    const notAfter = Date.parse(/Not After : (.*)\n/.exec(textOut)![1]!);
    expect(notAfter - notBefore).toBe(2 * 3_600_000);
  });

  it('refuses an unknown profile with 5400 and an unknown label with 5200', async () => {
    expect((await post(server.url, 'newcert', { request: { CN: 'x' }, profile: 'nosuchprofile' })).envelope.errors).toEqual([
      { code: 5400, message: 'Unknown policy profile' },
    ]);
    const unknownLabel = await post(server.url, 'newcert', { request: { CN: 'x' }, label: 'nosuch' });
    expect(unknownLabel.status).toBe(400);
    expect(unknownLabel.envelope.errors).toEqual([{ code: 5200, message: 'unknown label "nosuch": no signer is configured for it' }]);
  });

  it.each([
    [{}, 'request is required'],
    [null, 'request is required'],
    [{ request: null }, 'missing request section'],
    [{ request: { CN: 'a', ca: { pathlen: 1 } } }, 'ca section only permitted in initca'],
    ['', 'unexpected end of JSON input'],
    [{ request: { CN: 'a', hosts: 'a' } }, 'json: cannot unmarshal string into Go struct field CertificateRequest.request.hosts of type []string'],
  ])('answers 400 code 400 for body %j', async (body, message) => {
    const { status, envelope } = await post(server.url, 'newcert', body);
    expect(status).toBe(400);
    expect(envelope.errors).toEqual([{ code: 400, message }]);
  });

  it('succeeds without hosts with the exact 5300 message', async () => {
    for (const body of [{ request: { CN: 'nohosts' } }, { request: {} }]) {
      const { envelope } = await post(server.url, 'newcert', body);
      expect(envelope.success).toBe(true);
      expect(envelope.messages).toEqual([{ code: 5300, message: NO_HOSTS_MESSAGE }]);
      await expectVerifies(envelope.result.certificate);
    }
  });

  it('adds an optimal bundle of the new certificate when asked', async () => {
    const { envelope } = await post(server.url, 'newcert', { request: { CN: 'b.example', hosts: ['b.example'] }, bundle: true });
    expect(envelope.errors).toEqual([]);
    expect(envelope.messages).toEqual([]);
    const { bundle, certificate } = envelope.result;
    expect(Object.keys(envelope.result)).toEqual(['bundle', 'certificate', 'certificate_request', 'private_key', 'sums']);
    expect(bundle.crt).toBe(certificate.trim());
    expect(bundle.bundle).toBe(`${certificate.trim()}\n${issuing.certificatePem.trim()}`);
    expect(bundle.root).toBe(root.certificatePem.trim());
    expect(bundle.hostnames).toEqual(expect.arrayContaining(['b.example']));
  });
});

describe('newkey', () => {
  it('returns a key and a verifiable CSR with its sums', async () => {
    const { envelope } = await post(server.url, 'newkey', { CN: 'nk.example', hosts: ['nk.example'], names: [{ O: 'X' }], key: { algo: 'rsa', size: 2048 } });
    expect(envelope.messages).toEqual([]);
    expect(Object.keys(envelope.result)).toEqual(['private_key', 'certificate_request', 'sums']);
    expect(envelope.result.private_key).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
    const csrText = await verifyCsr(scratch, envelope.result.certificate_request);
    expect(csrText).toContain('DNS:nk.example');
    expect(envelope.result.sums).toEqual({ certificate_request: sumsOf(envelope.result.certificate_request) });
  });
});

describe('info and health', () => {
  it('answers the signing CA (trimmed) with the profile usages and expiry', async () => {
    expect((await post(server.url, 'info', {})).envelope.result).toEqual({
      certificate: issuing.certificatePem.trim(),
      usages: TLS_USAGES,
      expiry: '8760h',
    });
    expect((await post(server.url, 'info', { profile: 'client' })).envelope.result).toMatchObject({ usages: ['signing', 'client auth'], expiry: '2h' });
  });

  it('reports the signers in health', async () => {
    const response = await fetch(`${server.url}/api/v1/cfssl/health`);
    expect(await response.json()).toEqual({ success: true, result: { healthy: true, signers: { default: { healthy: true } }, store: { healthy: true, driver: 'sqlite3' } }, errors: [], messages: [] });
  });
});
