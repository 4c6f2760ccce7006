import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, sign as signWithKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issuedCertificateFields, serialToDecimal } from '@certsmith/cert-store';
import { DEFAULT_LABEL, createIssuer, createSignerDirectory, parseSigningPolicy } from '@certsmith/issuer';
import { parseOcspResponse } from '@certsmith/revocation';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import type { SignRequest, Signer } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createIssuedHook, isIssuedRecordingAttachment } from './issued-recording-worker.js';
import type { IssuedRecordingAttachment } from './issued-recording-worker.js';

const pki = new TestPki();
const root = pki.root({ CN: 'Worker Hook Root' }, { key: 'ecdsa-p256' });
const otherRoot = pki.root({ CN: 'Another Root' }, { key: 'ecdsa-p256' });
const aki = toHex(root.subjectKeyId!);

/** The CA key as a contract signer (what the worker's copy of a local signer is). */
function caSigner(ca = root): Signer & { calls: number } {
  const key = createPrivateKey(ca.key.pkcs8Pem);
  const signer = {
    calls: 0,
    algorithms: ['ECDSA-SHA256' as const],
    getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
    async sign(tbs: Uint8Array): Promise<Uint8Array> {
      signer.calls++;
      return new Uint8Array(signWithKey('sha256', tbs, key));
    },
    close: async () => {},
  };
  return signer;
}

const leafOf = (name: string, ca = root) => pki.leaf(name, ca, { key: 'ecdsa-p256' });

describe('createIssuedHook', () => {
  it("signs the first OCSP response (good) with the worker's CA key, and reads the row's fields", async () => {
    const hook = createIssuedHook({ ocspLabels: ['default'], ocspIntervalMs: 3_600_000 });
    const signer = caSigner();
    const leaf = leafOf('hooked.example');
    const before = Date.now();
    const result = await hook({ label: 'default', certificateDer: leaf.der, certificatePem: leaf.pem, signer });
    const attachment = structuredClone(result.attachment) as IssuedRecordingAttachment;
    expect(isIssuedRecordingAttachment(attachment)).toBe(true);
    expect(attachment.fields).toMatchObject({ serial: serialToDecimal(leaf.serialHex.toLowerCase()), authorityKeyId: aki, commonName: 'hooked.example', sansJson: '["hooked.example"]', pem: leaf.pem });
    expect(signer.calls).toBe(1);
    expect(result.signSeconds).toHaveLength(1);
    expect(result.signSeconds[0]).toBeGreaterThan(0);

    const response = parseOcspResponse(attachment.ocspResponse!.body);
    const single = response.basic!.responses[0]!;
    expect(response.status).toBe('successful');
    expect(single.status).toBe('good');
    expect(toHex(single.certId.serialNumber)).toBe(leaf.serialHex.toLowerCase());
    expect(single.nextUpdate!.getTime()).toBe(attachment.ocspResponse!.expiry.getTime());
    expect(attachment.ocspResponse!.expiry.getTime()).toBeGreaterThan(before);
    // Signed by the CA itself: the signature verifies with the CA certificate's key.
    expect(verify('sha256', response.basic!.tbsResponseData, createPublicKey(root.pem), response.basic!.signature)).toBe(true);
  });

  it('prepares the OCSP identity once per worker signer', async () => {
    const hook = createIssuedHook({ ocspLabels: ['default'], ocspIntervalMs: 3_600_000 });
    const signer = caSigner();
    let certificateFetches = 0;
    const counting: Signer = { ...signer, getCertificate: async () => (certificateFetches++, await signer.getCertificate()) };
    for (const name of ['a.example', 'b.example', 'c.example']) {
      const leaf = leafOf(name);
      await hook({ label: 'default', certificateDer: leaf.der, certificatePem: leaf.pem, signer: counting });
    }
    expect(certificateFetches).toBe(1);
    expect(signer.calls).toBe(3);
  });

  it('gives the fields only for a label it does not sign for, or a certificate of another CA', async () => {
    const hook = createIssuedHook({ ocspLabels: ['default'], ocspIntervalMs: 3_600_000 });
    const signer = caSigner();
    const leaf = leafOf('delegated.example');
    const delegated = await hook({ label: 'delegated', certificateDer: leaf.der, certificatePem: leaf.pem, signer });
    expect(delegated.attachment).toMatchObject({ kind: 'issued-recording', ocspResponse: null, fields: { authorityKeyId: aki } });
    expect(delegated.signSeconds).toEqual([]);
    const foreign = leafOf('foreign.example', otherRoot);
    const other = await hook({ label: 'default', certificateDer: foreign.der, certificatePem: foreign.pem, signer });
    expect(other.attachment).toMatchObject({ ocspResponse: null, fields: { authorityKeyId: toHex(otherRoot.subjectKeyId!) } });
    expect(signer.calls).toBe(0);
  });

  it("fails with the signer's error when the OCSP response cannot be signed", async () => {
    const hook = createIssuedHook({ ocspLabels: ['default'], ocspIntervalMs: 3_600_000 });
    const signer: Signer = {
      ...caSigner(),
      sign: async () => {
        throw Object.assign(new Error('signer "default" failed'), { code: 2500 });
      },
    };
    const leaf = leafOf('down.example');
    await expect(hook({ label: 'default', certificateDer: leaf.der, certificatePem: leaf.pem, signer })).rejects.toMatchObject({ code: 2500 });
  });
});

describe('createIssuedHook row fields', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'certsmith-hook-fields-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let csrCount = 0;
  /** A CSR made by openssl (independent of the issuer's CSR writer). */
  const opensslCsr = (subject: string, extensions: string[] = []): string => {
    csrCount += 1;
    const out = join(scratch, `${csrCount}.csr`);
    execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(scratch, `${csrCount}.key`), '-out', out, '-subj', subject, ...extensions.flatMap((e) => ['-addext', e])], { stdio: 'ignore' });
    return readFileSync(out, 'utf8');
  };
  const policy = parseSigningPolicy({
    signing: {
      default: { usages: ['signing', 'key encipherment', 'server auth'], expiry: '8760h' },
      profiles: {
        serial: { usages: ['server auth'], expiry: '1h', ClientProvidesSerialNumbers: true },
        strict: { usages: ['server auth'], expiry: '1h', CSRWhitelist: { PublicKey: true, DNSNames: true } },
        intermediate: { usages: ['cert sign', 'crl sign'], expiry: '8760h', ca_constraint: { is_ca: true, max_path_len: 1 } },
      },
    },
  });
  // The CA's SKI as the AKI; a CA certificate without SKI gives its certificates no AKI (as Go), so no OCSP response in the worker.
  const withSki = pki.root({ CN: 'Fields Root' }, { key: 'ecdsa-p256' });
  const withoutSki = pki.root({ CN: 'Fields Root Without SKI' }, { key: 'ecdsa-p256', subjectKeyId: false });
  const contractSigner = (ca: TestCertificate): Signer => ({
    algorithms: algorithmsForKeyObject(ca.key.privateKey),
    getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
    sign: (tbs, algorithm) => signWithKeyObject(ca.key.privateKey, tbs, algorithm),
    close: async () => {},
  });

  const webCsr = () => opensslCsr('/C=US/O=Example/CN=www.example.com', ['subjectAltName=DNS:www.example.com,DNS:alt.example.com,IP:192.168.1.10,email:web@example.com,URI:https://example.com/']);
  const cases: Array<[string, () => Omit<SignRequest, 'certificate_request'> & { certificate_request: string }]> = [
    ['SANs only in the CSR (DNS, IP, email, URI)', () => ({ certificate_request: webCsr() })],
    ["the request's hosts replacing the CSR's SANs", () => ({ certificate_request: webCsr(), hosts: ['override.example', '10.1.1.1', 'ops@example.com', 'spiffe://example/x', '2001:db8::1'] })],
    ['hosts without a DNS name', () => ({ certificate_request: webCsr(), hosts: ['10.1.1.1'] })],
    ['an empty hosts list (no SAN at all)', () => ({ certificate_request: webCsr(), hosts: [] })],
    ['no CN in the subject', () => ({ certificate_request: opensslCsr('/O=No Common Name/OU=unit', ['subjectAltName=DNS:nocn.example']) })],
    ['no CN and no SAN', () => ({ certificate_request: opensslCsr('/O=Nothing') })],
    ['a subject override with its own CN', () => ({ certificate_request: webCsr(), subject: { CN: 'override', names: [{ O: 'Override Org' }] } })],
    ['a client serial of one', () => ({ certificate_request: webCsr(), profile: 'serial', serial: '1' })],
    ['a long client serial', () => ({ certificate_request: webCsr(), profile: 'serial', serial: ((1n << 250n) + 977n).toString() })],
    ['a CSR whitelist keeping DNS names only', () => ({ certificate_request: webCsr(), profile: 'strict' })],
    ['a CA profile (DNS, email and URI names dropped)', () => ({ certificate_request: webCsr(), profile: 'intermediate' })],
    ['validity overrides with milliseconds', () => ({ certificate_request: webCsr(), NotBefore: '2026-01-01T00:00:00.250Z', NotAfter: '2051-06-30T12:34:56.789Z' })],
  ];

  for (const [caName, ca] of [['an AKI from the CA SKI', withSki], ['no AKI (a CA without SKI)', withoutSki]] as const) {
    it.each(cases)(`gives the row fields the full parse gives for %s (${caName})`, async (_what, request) => {
      const signer = contractSigner(ca);
      const issuer = createIssuer({ signers: createSignerDirectory([{ label: DEFAULT_LABEL, signer, policy, forwardsLabels: false }]) });
      const { certificatePem } = await issuer.signCertificate(request(), { authenticated: true });
      const der = new Uint8Array(Buffer.from(certificatePem.replace(/-----[^-]+-----|\s/g, ''), 'base64'));
      const hook = createIssuedHook({ ocspLabels: [DEFAULT_LABEL], ocspIntervalMs: 3_600_000 });
      const result = await hook({ label: DEFAULT_LABEL, certificateDer: der, certificatePem, signer });
      const attachment = result.attachment as IssuedRecordingAttachment;
      expect(attachment.fields).toEqual(issuedCertificateFields(der));
      if (ca === withoutSki) {
        expect(attachment.fields.authorityKeyId).toBe('');
        expect(attachment.ocspResponse).toBeNull();
        return;
      }
      // The first response is about this certificate, and signed by its CA.
      const response = parseOcspResponse(attachment.ocspResponse!.body).basic!;
      expect(serialToDecimal(toHex(response.responses[0]!.certId.serialNumber))).toBe(attachment.fields.serial);
      expect(verify('sha256', response.tbsResponseData, createPublicKey(ca.pem), response.signature)).toBe(true);
    });
  }
});
