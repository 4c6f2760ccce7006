import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Signer } from '@certsmith/signer-api';

import { createAuthenticatedRequest } from '@certsmith/signer-api';
import { decodeSignRequest } from './certificate-request.js';
import { defaultSigningPolicy, parseSigningPolicy } from './signing-policy-loader.js';
import type { TestCa } from './test-support/openssl.js';
import { extensionOrder, extensionValue, makeCa, openssl, opensslField, opensslText, scratchDir, signerFor, verifyIndependently } from './test-support/openssl.js';
import { authenticateSignRequest } from './authenticated-sign-request.js';
import { signerInfo } from './signer-info.js';
import { issuerFor, signCertificateRequest } from './test-support/issuing.js';

const scratch = scratchDir();
let ca: TestCa;
let signer: Signer;
let csrPem: string;

/** A CSR made by openssl (independent of our CSR writer). */
function opensslCsr(name: string, subject: string, extensions: string[] = []): string {
  const keyFile = join(scratch.dir, `${name}-key.pem`);
  const csrFile = join(scratch.dir, `${name}.csr`);
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', csrFile, '-subj', subject, ...extensions.flatMap((e) => ['-addext', e])]);
  return readFileSync(csrFile, 'utf8');
}

beforeAll(() => {
  ca = makeCa(scratch.dir, 'P-256');
  signer = signerFor(ca);
  csrPem = opensslCsr('web', '/C=US/ST=California/L=San Francisco/O=Example Inc/OU=Web/CN=www.example.com', ['subjectAltName=DNS:www.example.com,IP:192.168.1.10']);
});
afterAll(() => scratch.cleanup());

const policy = parseSigningPolicy({
  signing: {
    default: { usages: ['signing', 'key encipherment', 'server auth', 'client auth'], expiry: '8760h' },
    profiles: {
      intermediate: { usages: ['cert sign', 'crl sign'], expiry: '8760h', ca_constraint: { is_ca: true, max_path_len: 1 } },
      serial: { usages: ['server auth'], expiry: '1h', ClientProvidesSerialNumbers: true },
      extensible: { usages: ['server auth'], expiry: '1h', allowed_extensions: ['1.2.3.4.5'] },
      strict: { usages: ['server auth'], expiry: '1h', CSRWhitelist: { PublicKey: true, DNSNames: true } },
      client: { usages: ['client auth'], expiry: '1h', auth_key: 'primary', prev_auth_key: 'old' },
      dated: { usages: ['server auth'], expiry: '1h', not_before: '2030-01-01T00:00:00Z', not_after: '2031-01-01T00:00:00Z' },
    },
  },
  auth_keys: {
    primary: { type: 'standard', key: '00112233445566778899aabbccddeeff' },
    old: { type: 'standard', key: 'ffeeddccbbaa99887766554433221100' },
  },
});

describe('Issuer.signCertificate', () => {
  it('keeps the CSR subject and SANs when there are no overrides', async () => {
    const { certificatePem } = await signCertificateRequest({ certificate_request: csrPem }, signer, policy);
    expect(opensslField(certificatePem, 'subject')).toBe('C = US, ST = California, L = San Francisco, O = Example Inc, OU = Web, CN = www.example.com');
    expect(extensionValue(verifyIndependently(scratch.dir, ca, certificatePem), 'X509v3 Subject Alternative Name')).toBe('DNS:www.example.com, IP Address:192.168.1.10');
  });

  it('replaces SANs and subject fields when the request overrides them (behaviour doc 7.10)', async () => {
    const request = decodeSignRequest({
      certificate_request: csrPem,
      hosts: ['override.example', '10.1.1.1'],
      subject: { CN: 'override', names: [{ O: 'OverrideOrg' }] },
    });
    const { certificatePem } = await signCertificateRequest(request, signer, policy);
    expect(opensslField(certificatePem, 'subject')).toBe('C = US, ST = California, L = San Francisco, O = OverrideOrg, OU = Web, CN = override');
    expect(extensionValue(verifyIndependently(scratch.dir, ca, certificatePem), 'X509v3 Subject Alternative Name')).toBe('DNS:override.example, IP Address:10.1.1.1');
  });

  it('drops every SAN when hosts is an empty list', async () => {
    const { certificatePem } = await signCertificateRequest({ certificate_request: csrPem, hosts: [] }, signer, policy);
    expect(extensionOrder(opensslText(certificatePem))).not.toContain('X509v3 Subject Alternative Name');
  });

  it.each([
    ['garbage', 9002, 'CSR Decode failed'],
    ['-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n', 9300, 'not a csr'],
    ['-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n', 9003, undefined],
  ])('throws the CFSSL CSR error when the CSR is %j', async (pem, code, message) => {
    const error = (await signCertificateRequest({ certificate_request: pem }, signer, policy).then(
      () => ({ code: 0, message: 'resolved' }),
      (e: unknown) => e as { code: number; message: string },
    ));
    expect(error.code).toBe(code);
    if (message) expect(error.message).toBe(message);
  });

  it('throws 9300 when the CSR self-signature does not verify', async () => {
    const der = Buffer.from(csrPem.split('\n').filter((l) => l && !l.startsWith('-----')).join(''), 'base64');
    der[der.length - 5] = (der[der.length - 5] as number) ^ 0xff;
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    await expect(signCertificateRequest({ certificate_request: tampered }, signer, policy)).rejects.toMatchObject({ code: 9300 });
  });

  it('throws 5400 when the profile is unknown', async () => {
    await expect(signCertificateRequest({ certificate_request: csrPem, profile: 'nosuch' }, signer, policy)).rejects.toMatchObject({ code: 5400 });
  });

  describe('with a CA CSR', () => {
    let caCsr: string;
    let deepCsr: string;
    beforeAll(() => {
      caCsr = opensslCsr('subca', '/CN=Sub CA', ['basicConstraints=critical,CA:TRUE,pathlen:0']);
      deepCsr = opensslCsr('deepca', '/CN=Deep CA', ['basicConstraints=critical,CA:TRUE,pathlen:1']);
    });

    it('throws 5300 when the profile is not a CA profile', async () => {
      await expect(signCertificateRequest({ certificate_request: caCsr }, signer, policy)).rejects.toMatchObject({ code: 5300, message: 'Policy violation request' });
    });

    it('issues a CA certificate with the profile path length when the profile is a CA profile', async () => {
      const { certificatePem } = await signCertificateRequest({ certificate_request: caCsr, profile: 'intermediate' }, signer, policy);
      expect(extensionValue(verifyIndependently(scratch.dir, ca, certificatePem), 'X509v3 Basic Constraints')).toBe('CA:TRUE, pathlen:1');
    });

    it('throws 5300 when the issuing CA has pathlen 0', async () => {
      const leafOnly = makeCa(scratch.dir, 'P-256', { name: 'pathlen0', pathlen: 0 });
      await expect(signCertificateRequest({ certificate_request: caCsr, profile: 'intermediate' }, signerFor(leafOnly), policy)).rejects.toMatchObject({ code: 5300 });
    });

    it('throws 5300 when the CSR path length is not below the issuing CA path length', async () => {
      const limited = makeCa(scratch.dir, 'P-256', { name: 'pathlen1', pathlen: 1 });
      await expect(signCertificateRequest({ certificate_request: deepCsr, profile: 'intermediate' }, signerFor(limited), policy)).rejects.toMatchObject({ code: 5300 });
      await expect(signCertificateRequest({ certificate_request: caCsr, profile: 'intermediate' }, signerFor(limited), policy)).resolves.toBeDefined();
    });
  });

  it('throws 1400 when the profile needs a client serial and none is given', async () => {
    await expect(signCertificateRequest({ certificate_request: csrPem, profile: 'serial' }, signer, policy)).rejects.toMatchObject({
      code: 1400,
      message: 'Missing serial number in request',
    });
  });

  it('uses the client serial when the profile allows it', async () => {
    const { certificatePem } = await signCertificateRequest({ certificate_request: csrPem, profile: 'serial', serial: 123456789012345678901234567890n }, signer, policy);
    verifyIndependently(scratch.dir, ca, certificatePem);
    expect(BigInt(`0x${opensslField(certificatePem, 'serial')}`)).toBe(123456789012345678901234567890n);
  });

  it('ignores a client serial when the profile does not allow it', async () => {
    const { certificatePem } = await signCertificateRequest({ certificate_request: csrPem, serial: 5n }, signer, policy);
    expect(opensslField(certificatePem, 'serial')).not.toBe('05');
  });

  it('adds an allowed request extension when the profile lists its OID', async () => {
    const { certificatePem } = await signCertificateRequest(
      { certificate_request: csrPem, profile: 'extensible', extensions: [{ id: '1.2.3.4.5', critical: false, value: '0500' }] },
      signer,
      policy,
    );
    expect(extensionOrder(verifyIndependently(scratch.dir, ca, certificatePem)).at(-1)).toBe('1.2.3.4.5');
  });

  it('throws 1300 when a request extension is not allowed', async () => {
    await expect(
      signCertificateRequest({ certificate_request: csrPem, extensions: [{ id: '1.2.3.4.5', critical: false, value: '0500' }] }, signer, policy),
    ).rejects.toMatchObject({ code: 1300, message: 'Invalid certificate request' });
  });

  it('writes the CRL override when crl_override is set', async () => {
    const { certificatePem } = await signCertificateRequest({ certificate_request: csrPem, crl_override: 'http://crl.example/x.crl' }, signer, policy);
    expect(extensionValue(verifyIndependently(scratch.dir, ca, certificatePem), 'X509v3 CRL Distribution Points')).toContain('URI:http://crl.example/x.crl');
  });

  it('copies only whitelisted CSR fields and marks SAN critical when the subject is dropped', async () => {
    const withEmail = opensslCsr('mixed', '/CN=mixed.example', ['subjectAltName=DNS:mixed.example,email:a@b.c']);
    const { certificatePem } = await signCertificateRequest({ certificate_request: withEmail, profile: 'strict' }, signer, policy);
    const text = verifyIndependently(scratch.dir, ca, certificatePem);
    expect(text).toMatch(/Subject: ?\n/);
    expect(extensionOrder(text)).toContain('X509v3 Subject Alternative Name (critical)');
    expect(extensionValue(text, 'X509v3 Subject Alternative Name')).toBe('DNS:mixed.example');
  });

  it('uses the profile not_before and not_after when set', async () => {
    const { certificatePem } = await signCertificateRequest({ certificate_request: csrPem, profile: 'dated' }, signer, policy);
    const certificate = new X509Certificate(certificatePem);
    expect(new Date(certificate.validFrom).toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(new Date(certificate.validTo).toISOString()).toBe('2031-01-01T00:00:00.000Z');
  });

  it('uses request NotBefore and treats NotAfter as unset when it is Go\'s zero time', async () => {
    const { certificatePem } = await signCertificateRequest(
      { certificate_request: csrPem, NotBefore: '2029-05-05T10:00:00Z', NotAfter: '0001-01-01T00:00:00Z' },
      signer,
      policy,
    );
    const certificate = new X509Certificate(certificatePem);
    expect(new Date(certificate.validFrom).toISOString()).toBe('2029-05-05T10:00:00.000Z');
    expect(new Date(certificate.validTo).getTime() - new Date(certificate.validFrom).getTime()).toBe(8760 * 3_600_000);
  });
});

describe('signCertificate without authentication', () => {
  it('throws 400 authentication required when the profile has an auth key', async () => {
    const issuer = issuerFor(signer, policy);
    await expect(issuer.signCertificate({ certificate_request: csrPem, profile: 'client' })).rejects.toMatchObject({ code: 400, message: 'authentication required' });
    await expect(issuer.signCertificate({ certificate_request: csrPem, profile: '' })).resolves.toMatchObject({ messages: [] });
  });
});

describe('authenticateSignRequest', () => {
  const key = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
  const old = Buffer.from('ffeeddccbbaa99887766554433221100', 'hex');
  const inner = (extra: Record<string, unknown> = {}): string => JSON.stringify({ certificate_request: csrPem, profile: 'client', ...extra });

  it('returns the inner request when the token was made with auth_key', async () => {
    const body = authenticateSignRequest(createAuthenticatedRequest(inner(), key), policy);
    expect(body.profile).toBe('client');
    const { certificatePem } = await signCertificateRequest(body, signer, policy);
    expect(extensionValue(verifyIndependently(scratch.dir, ca, certificatePem), 'X509v3 Extended Key Usage')).toBe('TLS Web Client Authentication');
  });

  it('accepts the token when it was made with prev_auth_key', () => {
    expect(authenticateSignRequest(createAuthenticatedRequest(inner(), old), policy).certificate_request).toBe(csrPem);
  });

  it.each([
    ['a token made with another key', () => createAuthenticatedRequest(inner(), Buffer.alloc(16, 1)), 'invalid token'],
    ['a profile without auth key', () => createAuthenticatedRequest(inner({ profile: '' }), key), 'no authentication provider'],
    ['an inner body that is not JSON', () => createAuthenticatedRequest('not json', key), 'Unable to parse authenticated sign request'],
    ['an inner body with a wrong type', () => createAuthenticatedRequest(JSON.stringify({ certificate_request: 1 }), key), 'Unable to parse authenticated sign request'],
    ['a valid token without CSR', () => createAuthenticatedRequest(JSON.stringify({ profile: 'client' }), key), "missing parameter 'certificate_request'"],
  ])('throws 400 when given %s', (_what, make, message) => {
    expect(() => authenticateSignRequest(make(), policy)).toThrow(expect.objectContaining({ code: 400, message }) as Error);
  });

  it('throws 400 with Go\'s text when the outer body has a wrong type', () => {
    expect(() => authenticateSignRequest({ token: 5 }, policy)).toThrow(
      expect.objectContaining({ code: 400, message: 'json: cannot unmarshal number into Go struct field AuthenticatedRequest.token of type []uint8' }) as Error,
    );
  });
});

describe('signerInfo', () => {
  it('returns the trimmed CA PEM, usages and expiry when the policy is DefaultConfig', async () => {
    const info = await signerInfo(signer, defaultSigningPolicy());
    expect(info).toEqual({ certificate: ca.certPem.trim(), usages: ['signing', 'key encipherment', 'server auth', 'client auth'], expiry: '8760h' });
  });

  it('reports the named profile when one is given', async () => {
    expect(await signerInfo(signer, policy, 'client')).toMatchObject({ usages: ['client auth'], expiry: '1h' });
  });

  it('throws 5400 when the profile is unknown', async () => {
    await expect(signerInfo(signer, policy, 'nosuch')).rejects.toMatchObject({ code: 5400 });
  });

  it('asks the signer when it answers info itself', async () => {
    const remote: Signer = {
      algorithms: [],
      getCertificate: () => signer.getCertificate(),
      signRequest: async () => ({ certificatePem: '' }),
      info: async (request) => ({ certificate: 'remote', usages: [request.label ?? ''], expiry: request.profile ?? '' }),
      close: async () => {},
    };
    expect(await signerInfo(remote, policy, 'p', 'primary')).toEqual({ certificate: 'remote', usages: ['primary'], expiry: 'p' });
  });
});
