import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertificatePool, createAiaFetcher, loadCertificatePool, type TrustPools } from '@certsmith/chain-builder';
import { loadPlatforms, spkiSha1, type Platform } from '@certsmith/ubiquity-rules';
import { LazyCertificate, parseCertificate, parseCertificates, certificateToPem, type Certificate } from '@certsmith/x509-core';
import { TestPki, chainPem, trimmedPem, type TestCertificate, type KeySpec } from '@certsmith/test-pki';
import { bundleCertificate as bundleCertificateUnchecked, type BundleDependencies, type BundleResult } from './bundle-certificate.js';
import { bundleResultJson } from './bundle-result-json.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** cfssl_trust data, used in place: the `shared/` folder beside the repository (CI), or /work/shared. */
const TRUST = [process.env.CERTSMITH_TRUST_DIR, fileURLToPath(new URL('../../../../shared/trust', import.meta.url)), '/work/shared/trust'].find(
  (dir): dir is string => typeof dir === 'string' && existsSync(dir),
) as string;

const SHA2_WARNING =
  'The bundle contains certificates signed with advanced hash functions such as SHA2, which are problematic for certain operating systems, e.g. Windows XP SP2.';
const ECDSA_WARNING =
  'The bundle contains ECDSA signatures, which are problematic for certain operating systems, e.g. Windows XP, Android 2.2 and Android 2.3.';
const NO_METADATA = 'Unable to measure bundle ubiquity: No platform metadata present.';

const now = new Date('2026-11-22T03:30:00Z');
const pki = new TestPki({ now });
const p = (c: TestCertificate): Certificate => parseCertificate(c.der);

/** Test PKI: RSA root → RSA inter (pathLen 1) → leaves. */
const root = pki.root('Bundle Root', { key: 'rsa-2048' });
const inter = pki.intermediate('Bundle Inter', root, { key: 'rsa-2048', pathLen: 1 });
const leaf = pki.leaf('www.example.com', inter, { key: 'rsa-2048', ips: ['192.0.2.10'] });

const pools = (roots: TestCertificate[], intermediates: TestCertificate[] = []): TrustPools => ({
  roots: new CertificatePool(roots.map(p)),
  intermediates: new CertificatePool(intermediates.map(p)),
});
const platform = (name: string, weight: number, trusted: TestCertificate[]): Platform => ({
  name,
  weight,
  hashAlgo: 'SHA2',
  keyAlgo: 'ECDSA256',
  keystoreFile: '',
  hashUbiquity: 70,
  keyAlgoUbiquity: 70,
  keystore: new Set(trusted.map((c) => spkiSha1(p(c)))),
});
const deps = (over: Partial<BundleDependencies> = {}): BundleDependencies => ({
  pools: pools([root], [inter]),
  platforms: [platform('Everyone', 1, [root])],
  aia: null,
  now,
  ...over,
});
/** The use case, with every result's hand-written JSON checked against `JSON.stringify`. */
async function bundleCertificate(...args: Parameters<typeof bundleCertificateUnchecked>): Promise<BundleResult> {
  const result = await bundleCertificateUnchecked(...args);
  expect(bundleResultJson(result)).toBe(JSON.stringify(result));
  return result;
}
const pemBlocks = (bundle: string): number => bundle.split('-----BEGIN CERTIFICATE-----').length - 1;

describe('bundleCertificate', () => {
  describe('result shape', () => {
    it('returns CFSSL\'s alphabetical keys and status key order when bundling a leaf', async () => {
      const result = await bundleCertificate({ certificatePem: leaf.pem }, deps());
      expect(Object.keys(result)).toEqual([
        'bundle', 'crl_support', 'crt', 'expires', 'hostnames', 'issuer', 'key', 'key_size', 'key_type',
        'leaf_expires', 'ocsp', 'ocsp_support', 'root', 'signature', 'status', 'subject',
      ]);
      expect(Object.keys(result.status)).toEqual(['rebundled', 'expiring_SKIs', 'untrusted_root_stores', 'messages', 'code']);
      expect(result).toMatchObject({
        bundle: chainPem(leaf, inter).trim(),
        crt: trimmedPem(leaf),
        root: trimmedPem(root),
        key: '',
        key_size: 2048,
        key_type: '2048-bit RSA',
        hostnames: ['www.example.com'],
        subject: '/CommonName=www.example.com',
        issuer: '/CommonName=Bundle Inter',
        signature: 'SHA256WithRSA',
        ocsp: null,
        ocsp_support: false,
        crl_support: false,
        status: { rebundled: true, expiring_SKIs: null, untrusted_root_stores: [], messages: [SHA2_WARNING], code: 2 },
      });
      // `expires` is the earliest NotAfter of the returned chain (the leaf here).
      expect(result.expires).toBe(result.leaf_expires);
      expect(structuredClone(result)).toEqual(result);
    });

    it('reports OCSP and CRL support from the leaf', async () => {
      const withUrls = pki.leaf('urls.example.com', inter, { ocsp: ['http://ocsp.example.com'], crl: ['http://crl.example.com/a.crl'] });
      const result = await bundleCertificate({ certificatePem: withUrls.pem }, deps());
      expect(result).toMatchObject({ ocsp: ['http://ocsp.example.com'], ocsp_support: true, crl_support: true });
    });
  });

  describe('flavors', () => {
    // doc 6 TestUbiquitousBundle: L1 is also a root for one platform.
    const l1 = pki.intermediate('Flavor L1', root, { key: 'rsa-2048' });
    const l2 = pki.intermediate('Flavor L2', l1, { key: 'rsa-2048' });
    const flavorLeaf = pki.leaf('flavor.example.com', l2, { key: 'rsa-2048' });
    const flavorDeps = (): BundleDependencies =>
      deps({
        pools: pools([root, l1], [l1, l2]),
        platforms: [platform('Wide', 10, [root]), platform('Narrow', 1, [root, l1])],
      });

    it('picks the chain trusted by the most platform weight when ubiquitous', async () => {
      const result = await bundleCertificate({ certificatePem: flavorLeaf.pem, flavor: 'ubiquitous' }, flavorDeps());
      expect(pemBlocks(result.bundle)).toBe(3);
      expect(result.root).toBe(trimmedPem(root));
      expect(result.status.untrusted_root_stores).toEqual([]);
    });

    it('picks the shortest chain and reports who does not trust it when optimal', async () => {
      const result = await bundleCertificate({ certificatePem: flavorLeaf.pem, flavor: 'optimal' }, flavorDeps());
      expect(pemBlocks(result.bundle)).toBe(2);
      expect(result.root).toBe(trimmedPem(l1));
      expect(result.status.untrusted_root_stores).toEqual(['Wide']);
      expect(result.status.code & 2).toBe(2);
      expect(result.status.messages).toContain('The bundle may not be trusted by the following platform(s): Wide.');
    });

    it('ranks unknown flavors (and an empty one) like ubiquitous', async () => {
      for (const flavor of ['bogus', 'Optimal', '']) {
        const result = await bundleCertificate({ certificatePem: flavorLeaf.pem, flavor }, flavorDeps());
        expect(pemBlocks(result.bundle), flavor).toBe(3);
      }
    });

    it('picks the short chain without metadata and adds the no-metadata warning', async () => {
      const result = await bundleCertificate({ certificatePem: flavorLeaf.pem }, { ...flavorDeps(), platforms: [] });
      expect(pemBlocks(result.bundle)).toBe(2);
      expect(result.status).toMatchObject({ untrusted_root_stores: [], messages: [SHA2_WARNING, NO_METADATA], code: 2 });
    });

    it('keeps the input as is, without root or trust check, when forced', async () => {
      const input = chainPem(flavorLeaf, l2, l1, root);
      const result = await bundleCertificate({ certificatePem: input, flavor: 'force' }, flavorDeps());
      expect(result.bundle).toBe(input.trim());
      expect(result.root).toBe('');
      expect(result.status).toEqual({ rebundled: false, expiring_SKIs: null, untrusted_root_stores: null, messages: [SHA2_WARNING], code: 2 });
      const shortened = await bundleCertificate({ certificatePem: input, flavor: 'optimal' }, flavorDeps());
      expect(pemBlocks(shortened.bundle)).toBe(2);
      expect(shortened.status.rebundled).toBe(true);
    });

    it('returns a lone leaf unchanged when forced (no fallback)', async () => {
      const result = await bundleCertificate({ certificatePem: flavorLeaf.pem, flavor: 'force' }, flavorDeps());
      expect(pemBlocks(result.bundle)).toBe(1);
      expect(result.status.rebundled).toBe(false);
    });

    it('fails with 1200 when forced with certificates that do not chain', async () => {
      await expect(
        bundleCertificate({ certificatePem: chainPem(flavorLeaf, pki.root('Unrelated Root')), flavor: 'force' }, flavorDeps()),
      ).rejects.toMatchObject({ code: 1200, message: 'Unable to verify the certificate chain' });
    });

    it('prefers the SHA-2 copy of an intermediate over its SHA-1 twin when ubiquitous', async () => {
      const sha1Copy = pki.crossSign(inter, root, { signatureHash: 'SHA-1' });
      for (const order of [[sha1Copy, inter], [inter, sha1Copy]]) {
        const result = await bundleCertificate({ certificatePem: leaf.pem }, deps({ pools: pools([root], order) }));
        expect(result.bundle).toBe(chainPem(leaf, inter).trim());
      }
    });

    it('prefers the cross-signed path to the root more platforms trust when ubiquitous', async () => {
      const oldRoot = pki.root('Old Root', { key: 'rsa-2048' });
      const newRoot = pki.root('New Root', { key: 'ecdsa-p256' });
      const ca = pki.intermediate('Cross CA', newRoot, { key: 'ecdsa-p256' });
      const caByOld = pki.crossSign(ca, oldRoot);
      const l = pki.leaf('cross.example.com', ca, { key: 'ecdsa-p256' });
      const crossDeps = deps({
        pools: pools([oldRoot, newRoot], [ca, caByOld]),
        platforms: [platform('Legacy', 20, [oldRoot]), platform('Modern', 5, [oldRoot, newRoot])],
      });
      const ubiquitous = await bundleCertificate({ certificatePem: l.pem }, crossDeps);
      expect(ubiquitous.root).toBe(trimmedPem(oldRoot));
      expect(ubiquitous.bundle).toBe(chainPem(l, caByOld).trim());
      const optimal = await bundleCertificate({ certificatePem: l.pem, flavor: 'optimal' }, crossDeps);
      // Same length: later expiry then crypto suite decide; the all-ECDSA path wins.
      expect(optimal.root).toBe(trimmedPem(newRoot));
      expect(optimal.status.untrusted_root_stores).toEqual(['Legacy']);
    });
  });

  describe('input order and rebundling', () => {
    it('accepts a reversed bundle when the reversed list is a chain', async () => {
      const result = await bundleCertificate({ certificatePem: chainPem(inter, leaf) }, deps());
      expect(result.crt).toBe(trimmedPem(leaf));
      expect(result.bundle).toBe(chainPem(leaf, inter).trim());
      expect(result.status.rebundled).toBe(false);
    });

    it('reports rebundled false when the input already was the bundle', async () => {
      expect((await bundleCertificate({ certificatePem: chainPem(leaf, inter) }, deps())).status.rebundled).toBe(false);
      expect((await bundleCertificate({ certificatePem: leaf.pem }, deps())).status.rebundled).toBe(true);
    });

    it('learns a supplied intermediate missing from the pool', async () => {
      const d = deps({ pools: pools([root]) });
      const result = await bundleCertificate({ certificatePem: chainPem(leaf, inter) }, d);
      expect(pemBlocks(result.bundle)).toBe(2);
      expect(d.pools.intermediates.size).toBe(1);
      // The learned intermediate now serves a leaf-only request.
      expect(pemBlocks((await bundleCertificate({ certificatePem: leaf.pem }, d)).bundle)).toBe(2);
    });

    it('fails with 1220 when the partial chain misses an intermediate', async () => {
      await expect(bundleCertificate({ certificatePem: leaf.pem }, deps({ pools: pools([root]) }))).rejects.toMatchObject({
        code: 1220,
        message: 'x509: certificate signed by unknown authority',
      });
    });

    it('keeps leaf and root for an OCSP-enabled leaf whose chain has two certificates', async () => {
      const direct = pki.leaf('direct.example.com', root, { ocsp: ['http://ocsp.example.com'] });
      const result = await bundleCertificate({ certificatePem: direct.pem }, deps());
      expect(result.bundle).toBe(chainPem(direct, root).trim());
      const viaInter = pki.leaf('ocsp3.example.com', inter, { ocsp: ['http://ocsp.example.com'] });
      expect(pemBlocks((await bundleCertificate({ certificatePem: viaInter.pem }, deps())).bundle)).toBe(2);
    });
  });

  describe('key types', () => {
    const table: Array<[KeySpec, string, number, boolean]> = [
      ['rsa-2048', '2048-bit RSA', 2048, false],
      ['rsa-3072', '3072-bit RSA', 3072, false],
      ['rsa-4096', '4096-bit RSA', 4096, false],
      ['ecdsa-p256', '256-bit ECDSA', 256, true],
      ['ecdsa-p384', '384-bit ECDSA', 384, true],
      ['ecdsa-p521', '521-bit ECDSA', 521, true],
      ['ed25519', 'Ed25519', 32, true],
    ];
    for (const [spec, keyType, keySize, ecdsaWarning] of table) {
      it(`reports ${keyType} and round-trips the key when the leaf key is ${spec}`, async () => {
        const l = pki.leaf(`${spec}.keys.example.com`, inter, { key: spec });
        const result = await bundleCertificate({ certificatePem: l.pem, privateKeyPem: l.key.pkcs8Pem }, deps());
        expect(result.key_type).toBe(keyType);
        expect(result.key_size).toBe(keySize);
        expect(result.status.messages?.includes(ECDSA_WARNING)).toBe(ecdsaWarning);
        if (spec === 'ed25519') expect(result.key).toMatch(/^-----BEGIN Ed25519 PRIVATE KEY-----\n[\s\S]+-----END Ed25519 PRIVATE KEY-----$/);
        else expect(result.key).toBe(l.key.traditionalPem.trim());
      });
    }

    it('signs ECDSA leaves as ECDSAWithSHA384 when the issuer is P-384', async () => {
      const ecInter = pki.intermediate('EC Inter', root, { key: 'ecdsa-p384' });
      const l = pki.leaf('ec.example.com', ecInter, { key: 'ecdsa-p256' });
      const result = await bundleCertificate({ certificatePem: l.pem }, deps({ pools: pools([root], [ecInter]) }));
      expect(result.signature).toBe('ECDSAWithSHA384');
    });
  });

  describe('key checks', () => {
    const other = pki.leaf('other.example.com', inter, { key: 'rsa-2048', keyLabel: 'other-key' });
    it('fails with 2300 when the key does not match the leaf', async () => {
      await expect(bundleCertificate({ certificatePem: leaf.pem, privateKeyPem: other.key.pkcs8Pem }, deps())).rejects.toMatchObject({
        code: 2300,
        message: 'Private key does not match public key',
      });
      const ec = pki.leaf('ec-mismatch.example.com', inter, { key: 'ecdsa-p256' });
      await expect(bundleCertificate({ certificatePem: ec.pem, privateKeyPem: leaf.key.pkcs8Pem }, deps())).rejects.toMatchObject({ code: 2300 });
    });

    it('fails with 2002 / 2003 / 2100 for garbage, a certificate and an encrypted key', async () => {
      await expect(bundleCertificate({ certificatePem: leaf.pem, privateKeyPem: 'garbage' }, deps())).rejects.toMatchObject({ code: 2002 });
      await expect(bundleCertificate({ certificatePem: leaf.pem, privateKeyPem: leaf.pem }, deps())).rejects.toMatchObject({ code: 2003 });
      const encrypted = leaf.key.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }) as string;
      await expect(bundleCertificate({ certificatePem: leaf.pem, privateKeyPem: encrypted }, deps())).rejects.toMatchObject({ code: 2100 });
    });

    it('checks the key before the certificate', async () => {
      await expect(bundleCertificate({ certificatePem: 'garbage', privateKeyPem: 'garbage' }, deps())).rejects.toMatchObject({ code: 2002 });
    });

    it('fails with 2200 when the leaf key is DSA', async () => {
      const dsa = pki.leaf('dsa.example.com', inter, { key: 'dsa-2048' });
      await expect(bundleCertificate({ certificatePem: dsa.pem }, deps())).rejects.toMatchObject({ code: 2200 });
    });
  });

  describe('certificate errors', () => {
    it('fails with 1002 for text without a PEM block, empty input and trailing junk', async () => {
      for (const certificatePem of ['this is not a certificate', '', `${leaf.pem}trailing junk\n`]) {
        await expect(bundleCertificate({ certificatePem }, deps())).rejects.toMatchObject({ code: 1002, message: 'Failed to decode certificate' });
      }
    });

    it('fails with 1003 when a private key is pasted as certificate', async () => {
      await expect(bundleCertificate({ certificatePem: leaf.key.pkcs8Pem }, deps())).rejects.toMatchObject({ code: 1003 });
    });

    it('fails with 1100 when the leaf is self-signed, SHA-1 roots included', async () => {
      await expect(bundleCertificate({ certificatePem: root.pem }, deps())).rejects.toMatchObject({ code: 1100, message: 'Certificate is self signed' });
      const sha1Root = pki.root('SHA1 Self Root', { key: 'rsa-2048', signatureHash: 'SHA-1' });
      await expect(bundleCertificate({ certificatePem: sha1Root.pem }, deps({ pools: pools([sha1Root]) }))).rejects.toMatchObject({ code: 1100 });
    });

    it('fails with 1211 when the leaf has expired', async () => {
      const expired = pki.leaf('expired.example.com', inter, { notBefore: pki.days(-400), notAfter: pki.days(-2) });
      await expect(bundleCertificate({ certificatePem: expired.pem }, deps())).rejects.toMatchObject({ code: 1211 });
    });

    it('fails with 1211 when only the intermediate has expired', async () => {
      const oldInter = pki.intermediate('Expired Inter', root, { notBefore: pki.days(-400), notAfter: pki.days(-1) });
      const l = pki.leaf('under-expired.example.com', oldInter, { notBefore: pki.days(-10) });
      await expect(bundleCertificate({ certificatePem: l.pem }, deps({ pools: pools([root], [oldInter]) }))).rejects.toMatchObject({ code: 1211 });
    });

    it('fails with 1213 when an extra intermediate breaks the path length', async () => {
      const extra = pki.intermediate('Extra Inter', inter, { key: 'rsa-2048' });
      const extra2 = pki.intermediate('Extra Inter 2', extra, { key: 'rsa-2048' });
      const l = pki.leaf('deep.example.com', extra2);
      await expect(bundleCertificate({ certificatePem: l.pem }, deps({ pools: pools([root], [inter, extra, extra2]) }))).rejects.toMatchObject({ code: 1213 });
    });

    it('bundles an expired chain with the expiry warning when forced', async () => {
      const expired = pki.leaf('forced-expired.example.com', inter, { notBefore: pki.days(-400), notAfter: pki.days(-2) });
      const result = await bundleCertificate({ certificatePem: chainPem(expired, inter), flavor: 'force' }, deps());
      expect(result.status.code & 1).toBe(1);
      expect(result.status.expiring_SKIs).toEqual([expired.subjectKeyIdHex]);
    });
  });

  describe('expiry status', () => {
    it('flags a leaf expiring within 30 days with its SKI', async () => {
      const soon = pki.leaf('soon.example.com', inter, { key: 'rsa-2048', notAfter: pki.days(10) });
      const result = await bundleCertificate({ certificatePem: soon.pem }, deps());
      expect(result.status).toMatchObject({
        expiring_SKIs: [soon.subjectKeyIdHex],
        messages: ['The bundle is expiring within 30 days.The expiring cert is #1 in the chain.', SHA2_WARNING],
        code: 3,
      });
    });

    it('counts the root among expiring certificates', async () => {
      const shortRoot = pki.root('Short Root', { key: 'rsa-2048', notAfter: pki.days(20) });
      const shortInter = pki.intermediate('Short Inter', shortRoot, { key: 'rsa-2048', notAfter: pki.days(15) });
      const l = pki.leaf('short.example.com', shortInter, { notAfter: pki.days(14) });
      const result = await bundleCertificate({ certificatePem: l.pem }, deps({ pools: pools([shortRoot], [shortInter]), platforms: [] }));
      expect(result.status.messages?.[0]).toBe('The bundle is expiring within 30 days.The expiring certs are #1 #2 #3 in the chain.');
      expect(result.status.expiring_SKIs).toHaveLength(3);
      expect(result.expires).toBe(result.leaf_expires);
    });
  });

  describe('SHA-1 chains', () => {
    it('bundles a SHA-1 chain with the SHA-1 deprecation warnings', async () => {
      const sha1Inter = pki.intermediate('SHA1 Bundle Inter', root, { key: 'rsa-2048', signatureHash: 'SHA-1' });
      const l = pki.leaf('sha1.example.com', sha1Inter, { key: 'rsa-2048', signatureHash: 'SHA-1' });
      const result = await bundleCertificate({ certificatePem: l.pem }, deps({ pools: pools([root], [sha1Inter]) }));
      expect(result.signature).toBe('SHA1WithRSA');
      expect(result.status.messages).toEqual([
        SHA2_WARNING, // the root is SHA-256 signed
        'Google Chrome shows the SSL connection is untrusted due to SHA-1 deprecation',
        'Mozilla Firefox shows the SSL connection is untrusted due to SHA-1 deprecation',
        'Microsoft Windows Vista and later shows the SSL connection is untrusted due to SHA-1 deprecation',
      ]);
    });
  });

  describe('domain and ip', () => {
    it('verifies domain and ip against the leaf in certificate mode', async () => {
      await expect(bundleCertificate({ certificatePem: leaf.pem, domain: 'www.example.com', ip: '192.0.2.10' }, deps())).resolves.toBeDefined();
      await expect(bundleCertificate({ certificatePem: leaf.pem, domain: 'example.org' }, deps())).rejects.toMatchObject({
        code: 1200,
        message: 'x509: certificate is valid for www.example.com, not example.org',
      });
      await expect(bundleCertificate({ certificatePem: leaf.pem, ip: '10.0.0.1' }, deps())).rejects.toMatchObject({
        code: 1200,
        message: 'x509: certificate is valid for 192.0.2.10, not 10.0.0.1',
      });
    });
  });
});

describe('bundleCertificate with AIA', () => {
  let server: HttpServer;
  let base = '';
  const bodies = new Map<string, Uint8Array | string>();
  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      const body = bodies.get(req.url ?? '');
      if (body === undefined) {
        res.statusCode = 404;
        res.end();
      } else res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('rebundles through the caIssuers URL when the pool lacks the intermediate', async () => {
    bodies.set('/inter.cer', inter.der);
    const l = pki.leaf('aia.example.com', inter, { caIssuers: [`${base}/inter.cer`] });
    const aia = createAiaFetcher();
    try {
      const result = await bundleCertificate({ certificatePem: l.pem }, deps({ pools: pools([root]), aia }));
      expect(result.bundle).toBe(chainPem(l, inter).trim());
      expect(result.status.rebundled).toBe(true);
    } finally {
      await aia.close();
    }
  });

  it('fails with 1220 when the caIssuers URL answers garbage', async () => {
    bodies.set('/garbage.cer', 'garbage');
    const l = pki.leaf('aia-garbage.example.com', inter, { caIssuers: [`${base}/garbage.cer`, `${base}/missing.cer`] });
    const aia = createAiaFetcher();
    try {
      await expect(bundleCertificate({ certificatePem: l.pem }, deps({ pools: pools([root]), aia }))).rejects.toMatchObject({ code: 1220 });
    } finally {
      await aia.close();
    }
  });
});

describe('bundleCertificate in remote mode', () => {
  let server: TlsServer;
  let port = 0;
  const remoteLeaf = pki.leaf('localhost', inter, { key: 'rsa-2048', dns: ['localhost'], ips: ['127.0.0.1'] });
  beforeAll(async () => {
    server = createTlsServer({ key: remoteLeaf.key.pkcs8Pem, cert: chainPem(remoteLeaf, inter) }, (s) => s.end());
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('bundles the chain the server presents when dialling domain and ip', async () => {
    const result = await bundleCertificate({ domain: 'localhost', ip: '127.0.0.1' }, deps({ remote: { port } }));
    expect(result.crt).toBe(trimmedPem(remoteLeaf));
    expect(result.bundle).toBe(chainPem(remoteLeaf, inter).trim());
    expect(result.status).toMatchObject({ rebundled: false, messages: [SHA2_WARNING], code: 2 });
  });

  it('reports rebundled when the server sends its root, which the bundle drops (as CFSSL)', async () => {
    const withRoot = createTlsServer({ key: remoteLeaf.key.pkcs8Pem, cert: chainPem(remoteLeaf, inter, root) }, (s) => s.end());
    withRoot.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => withRoot.listen(0, '127.0.0.1', resolve));
    try {
      const result = await bundleCertificate({ domain: 'localhost', ip: '127.0.0.1' }, deps({ remote: { port: (withRoot.address() as AddressInfo).port } }));
      expect(result.bundle).toBe(chainPem(remoteLeaf, inter).trim());
      expect(result.root).toBe(trimmedPem(root));
      expect(result.status).toMatchObject({ rebundled: true, messages: [SHA2_WARNING], code: 2 });
    } finally {
      await new Promise((resolve) => withRoot.close(resolve));
    }
  });

  it('appends the rigid handshake failure without changing the code', async () => {
    // The strict handshake trusts only an unrelated root; bundling still uses the real pools.
    const otherRoots = new CertificatePool([p(pki.root('Remote Other Root', { key: 'ecdsa-p256' }))]);
    const strictFails: BundleDependencies = {
      ...deps(),
      remote: {
        port,
        fetchPeer: async (options) => {
          const { fetchPeerCertificates } = await import('@certsmith/chain-builder');
          return fetchPeerCertificates({ ...options, trust: otherRoots });
        },
      },
    };
    const result = await bundleCertificate({ domain: `localhost:${port}` }, strictFails);
    expect(result.status.code).toBe(2);
    expect(result.status.messages?.at(-1)).toBe(`Failed rigid TLS handshake with localhost:${port}: x509: certificate signed by unknown authority`);
  });

  it('fails with 1200 when the presented certificate does not match the domain', async () => {
    await expect(bundleCertificate({ domain: 'wrong.example', ip: '127.0.0.1' }, deps({ remote: { port } }))).rejects.toMatchObject({
      code: 1200,
      message: 'x509: certificate is valid for localhost, not wrong.example',
    });
  });

  it('fails with 6000 when nothing listens', async () => {
    await expect(
      bundleCertificate({ domain: 'localhost', ip: '127.0.0.1' }, deps({ remote: { port: 1, timeoutMs: 1_000 } })),
    ).rejects.toMatchObject({ code: 6000, message: 'dial tcp 127.0.0.1:1: connect: connection refused' });
  });
});

describe('bundleCertificate against the real cfssl_trust data', () => {
  let trustDeps: BundleDependencies;
  let bundleCerts: Certificate[];
  const find = (prefix: string): string => {
    const cert = bundleCerts.find((c) => Buffer.from(c.der).toString('base64').startsWith(prefix));
    if (!cert) throw new Error(`no certificate starting ${prefix}`);
    return certificateToPem(cert.der);
  };
  const freshDeps = async (metadata: boolean): Promise<BundleDependencies> => ({
    pools: {
      roots: await loadCertificatePool(`${TRUST}/ca-bundle.crt`, 'roots'),
      intermediates: await loadCertificatePool(`${TRUST}/int-bundle.crt`, 'intermediates'),
    },
    platforms: metadata ? await loadPlatforms(`${TRUST}/ca-bundle.crt.metadata`) : [],
    aia: null,
    now,
  });

  beforeAll(async () => {
    trustDeps = await freshDeps(true);
    bundleCerts = parseCertificates(readFileSync(`${TRUST}/int-bundle.crt`, 'utf8'));
  });

  const R10 = 'MIIFBTCCAu2gAwIBAgIQS6hSk/eaL6JzBkuoBI11';

  it('bundles Let\'s Encrypt R10 exactly as CFSSL does (doc 7.1)', async () => {
    const r10 = find(R10);
    const result: BundleResult = await bundleCertificate({ certificatePem: r10 }, trustDeps);
    expect(result).toMatchObject({
      bundle: r10.trim(),
      crl_support: true,
      crt: r10.trim(),
      expires: '2027-03-12T23:59:59Z',
      hostnames: ['R10'],
      issuer: '/Country=US/Organization=Internet Security Research Group/CommonName=ISRG Root X1',
      key: '',
      key_size: 2048,
      key_type: '2048-bit RSA',
      leaf_expires: '2027-03-12T23:59:59Z',
      ocsp: null,
      ocsp_support: false,
      signature: 'SHA256WithRSA',
      subject: "/Country=US/Organization=Let's Encrypt/CommonName=R10",
    });
    expect(result.root).toMatch(/^-----BEGIN CERTIFICATE-----\nMIIFazCCA1OgAwIBAgIRAIIQz7DSQONZRGPgu2OCiwAw/);
    expect(result.status).toEqual({
      rebundled: false,
      expiring_SKIs: null,
      untrusted_root_stores: [
        'Mozilla', 'Windows XP', 'Windows Vista and up', 'Windows Phone 8+', 'Mac OSX', 'Apple ios',
        'Android 2.2 Froyo', 'Android 2.3 Gingerbread', 'Android 3.0 Honeycomb', 'Android 4.0 ICS', 'Android 4.4 KitKat', 'Ubuntu',
      ],
      messages: [
        SHA2_WARNING,
        'The bundle may not be trusted by the following platform(s): Mozilla, Windows XP, Windows Vista and up, Windows Phone 8+, Mac OSX, Apple ios, Android 2.2 Froyo, Android 2.3 Gingerbread, Android 3.0 Honeycomb, Android 4.0 ICS, Android 4.4 KitKat, Ubuntu.',
      ],
      code: 2,
    });
  });

  it('bundles R10 with force and without metadata as CFSSL does', async () => {
    const r10 = find(R10);
    const forced = await bundleCertificate({ certificatePem: r10, flavor: 'force' }, trustDeps);
    expect(forced.root).toBe('');
    expect(forced.status).toEqual({ rebundled: false, expiring_SKIs: null, untrusted_root_stores: null, messages: [SHA2_WARNING], code: 2 });
    const noMetadata = { ...(await freshDeps(false)) };
    for (const flavor of ['ubiquitous', 'optimal']) {
      const result = await bundleCertificate({ certificatePem: r10, flavor }, noMetadata);
      expect(result.status).toEqual({ rebundled: false, expiring_SKIs: null, untrusted_root_stores: [], messages: [SHA2_WARNING, NO_METADATA], code: 2 });
    }
  });

  it('rejects R10 with the domain and ip texts of doc 7.5', async () => {
    const r10 = find(R10);
    await expect(bundleCertificate({ certificatePem: r10, domain: 'example.com' }, trustDeps)).rejects.toMatchObject({
      code: 1200,
      message: 'x509: certificate is not valid for any names, but wanted to match example.com',
    });
    await expect(bundleCertificate({ certificatePem: r10, ip: '10.0.0.1' }, trustDeps)).rejects.toMatchObject({
      code: 1200,
      message: "x509: cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs",
    });
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    await expect(bundleCertificate({ certificatePem: r10, privateKeyPem: otherKey }, trustDeps)).rejects.toMatchObject({ code: 2300 });
  });

  it('reports the expiring DigiCert intermediate as CFSSL does (doc 7.2)', async () => {
    const digicert = find('MIIGyzCCBbOgAwIBAgIQDFWl6NPPT7NZ8Asrci/u');
    const result = await bundleCertificate({ certificatePem: digicert }, trustDeps);
    expect(result).toMatchObject({
      expires: '2026-12-07T12:00:00Z',
      key_type: '2048-bit RSA',
      ocsp: ['http://ocsp.digicert.com'],
      ocsp_support: true,
      issuer: '/Country=US/Organization=DigiCert Inc/OrganizationalUnit=www.digicert.com/CommonName=DigiCert Assured ID Root CA',
    });
    expect(result.status).toEqual({
      rebundled: false,
      expiring_SKIs: ['7665C62A05AB8D8679257C7457EAB1BE5AAED46C'],
      untrusted_root_stores: [],
      messages: ['The bundle is expiring within 30 days.The expiring cert is #1 in the chain.', SHA2_WARNING],
      code: 3,
    });
  });

  it('rebundles the cPanel ECC intermediate through the AAA cross-sign as CFSSL does (doc 7.2)', async () => {
    const cpanel = find('MIIDkDCCAxegAwIBAgIQNAhsIM7ejUlvD4HVEhIo');
    const result = await bundleCertificate({ certificatePem: cpanel }, trustDeps);
    expect(result).toMatchObject({ key_type: '256-bit ECDSA', signature: 'ECDSAWithSHA384' });
    expect(result.status.rebundled).toBe(true);
    expect(result.status.untrusted_root_stores).toEqual(['Android 2.2 Froyo']);
    expect(result.status.code).toBe(3);
    expect(result.status.messages?.slice(1)).toEqual([
      SHA2_WARNING,
      ECDSA_WARNING,
      'The bundle may not be trusted by the following platform(s): Android 2.2 Froyo.',
    ]);
    expect(result.status.messages?.[0]).toMatch(/^The bundle is expiring within 30 days\.The expiring cert is #1 in the chain\.$/);
  });

  it('fails with 1220 for a leaf from an unknown CA', async () => {
    await expect(bundleCertificate({ certificatePem: leaf.pem }, trustDeps)).rejects.toMatchObject({
      code: 1220,
      message: 'x509: certificate signed by unknown authority',
    });
  });
});

describe('bundleCertificate with submitted certificates the pools hold', () => {
  /** Fresh pools per call (bundling learns intermediates); the pool copies lazy, as trust files load them. */
  const lazyPools = (intermediates: TestCertificate[]): TrustPools => ({
    roots: new CertificatePool([root].map((c) => LazyCertificate.from(p(c)))),
    intermediates: new CertificatePool(intermediates.map((c) => LazyCertificate.from(p(c)))),
  });
  const run = (certificatePem: string, flavor: string, intermediates: TestCertificate[]): Promise<BundleResult> =>
    bundleCertificate({ certificatePem, flavor }, deps({ pools: lazyPools(intermediates) }));

  it('gives the same result whether the pools hold the submitted intermediate or not', async () => {
    const inputs = [chainPem(leaf, inter), chainPem(inter, leaf), chainPem(leaf, inter, root)];
    for (const input of inputs) {
      for (const flavor of ['', 'optimal', 'force']) {
        const held = await run(input, flavor, [inter]);
        const notHeld = await run(input, flavor, []);
        expect(JSON.stringify(held)).toBe(JSON.stringify(notHeld));
      }
    }
    // The same once the intermediate was learned from an earlier request (a plain pool certificate).
    const learning = deps({ pools: lazyPools([]) });
    const first = await bundleCertificate({ certificatePem: chainPem(leaf, inter) }, learning);
    const second = await bundleCertificate({ certificatePem: chainPem(leaf, inter) }, learning);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it('bundles a submitted intermediate that differs from the pool one by one byte as submitted', async () => {
    const changed = new Uint8Array(inter.der);
    changed[changed.length - 1] = changed[changed.length - 1]! ^ 0x01;
    const input = leaf.pem + certificateToPem(changed);
    const held = await run(input, 'force', [inter]);
    const notHeld = await run(input, 'force', []);
    expect(JSON.stringify(held)).toBe(JSON.stringify(notHeld));
    expect(held.bundle).toBe(input.trim());
    expect(held.bundle).not.toContain(trimmedPem(inter));
  });
});
