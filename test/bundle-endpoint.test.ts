/**
 * `POST /api/v1/cfssl/bundle` end to end: the built `certsmith serve` with real trust files, a
 * loopback AIA server and a loopback TLS server. Three servers:
 * - `main`: the shared cfssl_trust data (`--ca-bundle` extended with generated test roots,
 *   `--int-bundle` extended with one generated intermediate, the shared `--metadata`);
 * - `ranking`: two generated roots, a cross-sign and a two-platform metadata file, to tell the
 *   flavors apart;
 * - `embedded`: no trust flags (Node's root store as one `System` platform, AIA for intermediates).
 * Expected values come from the behaviour doc (sections 2, 7.1–7.5) and from node:crypto/openssl,
 * never from the code under test.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { promisify } from 'node:util';
import { TestPki, chainPem, trimmedPem, type KeySpec, type TestCertificate } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from './peers/free-port.js';
import { killAllCertsmith, startCertsmith, type StartedCertsmith } from './helpers/certsmith-process.js';
import { TRUST_FILES, findTrustCertificates, isCurrentlyValid, writeExtendedBundle } from './helpers/trust-dir.js';

const execFileAsync = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// Exact texts (behaviour doc 2.8, 7.1)

const SHA2_WARNING =
  'The bundle contains certificates signed with advanced hash functions such as SHA2, which are problematic for certain operating systems, e.g. Windows XP SP2.';
const ECDSA_WARNING =
  'The bundle contains ECDSA signatures, which are problematic for certain operating systems, e.g. Windows XP, Android 2.2 and Android 2.3.';
/** The 12 cfssl_trust platforms with a keystore: none holds a generated root or ISRG Root X1 (doc 7.1). */
const KEYSTORE_PLATFORMS = [
  'Mozilla',
  'Windows XP',
  'Windows Vista and up',
  'Windows Phone 8+',
  'Mac OSX',
  'Apple ios',
  'Android 2.2 Froyo',
  'Android 2.3 Gingerbread',
  'Android 3.0 Honeycomb',
  'Android 4.0 ICS',
  'Android 4.4 KitKat',
  'Ubuntu',
];
const UNTRUSTED_WARNING = `The bundle may not be trusted by the following platform(s): ${KEYSTORE_PLATFORMS.join(', ')}.`;
const UNKNOWN_AUTHORITY = { code: 1220, message: 'x509: certificate signed by unknown authority' };

// ---------------------------------------------------------------------------------------------
// Generated PKI (relative to the real clock: the server uses it too). All keys are made here, up
// front: RSA generation can block for seconds on a loaded machine. Leaves whose RSA key does not
// matter share one key (a certificate never shares a key with its issuer); intermediates that only
// need to exist are ECDSA.

const pki = new TestPki({ now: new Date() });
const RSA_LEAF = { key: 'rsa-2048', keyLabel: 'e2e shared rsa leaf key' } as const;
const root = pki.root({ C: 'US', O: 'certsmith e2e', CN: 'E2E Bundle Root' }, { key: 'rsa-2048' });
const inter = pki.intermediate({ O: 'certsmith e2e', CN: 'E2E Bundle Inter' }, root, { key: 'rsa-2048' });
/** In main's int-bundle, never sent by clients. */
const pooledInter = pki.intermediate('E2E Pooled Inter', root, { key: 'ecdsa-p256' });
/** Known to no server and without AIA. */
const orphanInter = pki.intermediate('E2E Orphan Inter', root, { key: 'ecdsa-p256' });

const leaf = pki.leaf('www.example.com', inter, {
  key: 'ecdsa-p256',
  dns: ['www.example.com', 'example.com'],
  ips: ['192.0.2.10'],
});
const leafPooled = pki.leaf('pooled.example.com', pooledInter, RSA_LEAF);
const leafOrphan = pki.leaf('orphan.example.com', orphanInter, { key: 'ecdsa-p256' });
const leafExpiring = pki.leaf('expiring.example.com', inter, { ...RSA_LEAF, notAfter: pki.days(10) });
const leafExpired = pki.leaf('expired.example.com', inter, { ...RSA_LEAF, notBefore: pki.days(-30), notAfter: pki.days(-1) });
const interExpiring = pki.intermediate('E2E Expiring Inter', root, { key: 'ecdsa-p256', notAfter: pki.days(5) });
const leafUnderExpiring = pki.leaf('under-expiring.example.com', interExpiring, { ...RSA_LEAF, notAfter: pki.days(3) });
const leafOcsp = pki.leaf('ocsp.example.com', root, { ...RSA_LEAF, ocsp: ['http://ocsp.example.com'], crl: ['http://crl.example.com/r.crl'] });
const leafHostnames = pki.issue({
  subject: 'cn.example.com',
  issuer: inter,
  ca: false,
  ...RSA_LEAF,
  dns: ['b.example.com', 'cn.example.com', 'a.example.com'],
});
/** SHA-1 intermediate: bundled with SHA-1 warnings (Go >= 1.18 CFSSL refuses it). */
const sha1Inter = pki.intermediate('E2E SHA-1 Inter', root, { key: 'rsa-2048', signatureHash: 'SHA-1' });
const leafUnderSha1 = pki.leaf('sha1.example.com', sha1Inter, RSA_LEAF);
/** A SHA-1 self-signed root in main's ca-bundle: CFSSL crashes when it is sent as the leaf (doc 2.5). */
const sha1Root = pki.root('E2E SHA-1 Root', { key: 'rsa-2048', signatureHash: 'SHA-1' });
/** Self-signed and trusted by nobody. */
const untrustedSelfSigned = pki.root('E2E Untrusted Self-Signed', { key: 'ecdsa-p256' });
const otherKey = pki.leaf('other-key.example.com', inter, { key: 'ecdsa-p256', keyLabel: 'e2e other key' }).key;

/** Every leaf key type, signed by the RSA intermediate (so `signature` is always SHA256WithRSA). */
const KEY_TYPES: Array<[KeySpec, string, number]> = [
  ['ecdsa-p256', '256-bit ECDSA', 256],
  ['ecdsa-p384', '384-bit ECDSA', 384],
  ['ecdsa-p521', '521-bit ECDSA', 521],
  ['rsa-2048', '2048-bit RSA', 2048],
  ['rsa-3072', '3072-bit RSA', 3072],
  ['rsa-4096', '4096-bit RSA', 4096],
  ['ed25519', 'Ed25519', 32],
];
const typedLeaves = new Map(
  KEY_TYPES.map(([spec]) => [spec, pki.leaf(`${spec}.example.com`, inter, spec === 'rsa-2048' ? RSA_LEAF : { key: spec })]),
);
const ed25519Leaf = typedLeaves.get('ed25519')!;

// Ranking PKI: rootNew is trusted by one light platform, rootOld (which cross-signed rootNew) by both.
const rootOld = pki.root('E2E Old Root', { key: 'rsa-2048' });
const rootNew = pki.root('E2E New Root', { key: 'rsa-2048' });
const crossNew = pki.crossSign(rootNew, rootOld);
const interNew = pki.intermediate('E2E New Inter', rootNew, { key: 'ecdsa-p256' });
const leafRanked = pki.leaf('ranked.example.com', interNew, { key: 'ecdsa-p256' });

// ---------------------------------------------------------------------------------------------
// Loopback AIA server: issuers by path, hit counts, and misbehaving answers.

interface AiaFixture {
  inter: TestCertificate;
  leaf: TestCertificate;
}
/** Leaves whose issuer is only reachable through their AIA URL, one per server behaviour. */
interface AiaFixtures extends Record<'der' | 'pem' | 'p7c' | 'missing' | 'garbage' | 'slow' | 'hanging', AiaFixture> {
  /** leaf → lower (AIA) → upper (AIA) → root. */
  hop: { upper: TestCertificate; lower: TestCertificate; leaf: TestCertificate };
}
const aiaHits = new Map<string, number>();
let aiaServer: HttpServer;
const aiaSockets = new Set<Socket>();
/** Made once the AIA server has a port: the URLs are inside the certificates. */
let aia: AiaFixtures;
const aiaBodies = new Map<string, { body: Buffer; delayMs?: number; hang?: boolean }>();

function makeAiaFixtures(base: string): AiaFixtures {
  const issuedVia = (name: string, path: string): AiaFixture => {
    const fixtureInter = pki.intermediate(`E2E AIA ${name} Inter`, root, { key: 'ecdsa-p256' });
    const fixtureLeaf = pki.leaf(`aia-${name}.example.com`, fixtureInter, { key: 'ecdsa-p256', caIssuers: [`${base}${path}`] });
    return { inter: fixtureInter, leaf: fixtureLeaf };
  };
  const upper = pki.intermediate('E2E AIA Upper Inter', root, { key: 'ecdsa-p256' });
  const lower = pki.intermediate('E2E AIA Lower Inter', upper, { key: 'ecdsa-p256', caIssuers: [`${base}/hop/upper.cer`] });
  return {
    der: issuedVia('der', '/der/inter.cer'),
    pem: issuedVia('pem', '/pem/inter.crt'),
    p7c: issuedVia('p7c', '/p7c/inter.p7c'),
    missing: issuedVia('missing', '/missing.cer'),
    garbage: issuedVia('garbage', '/garbage.cer'),
    slow: issuedVia('slow', '/slow.cer'),
    hanging: issuedVia('hanging', '/hanging.cer'),
    hop: { upper, lower, leaf: pki.leaf('aia-hop.example.com', lower, { key: 'ecdsa-p256', caIssuers: [`${base}/hop/lower.cer`] }) },
  };
}

/** Start the AIA server; resolves with its base URL. */
async function startAiaServer(): Promise<string> {
  aiaServer = createHttpServer((request, response) => {
    const path = request.url ?? '';
    aiaHits.set(path, (aiaHits.get(path) ?? 0) + 1);
    const entry = aiaBodies.get(path);
    if (entry === undefined) {
      response.writeHead(404).end('not found');
      return;
    }
    if (entry.hang) return; // never answers; the client's timeout must end it
    const timer = setTimeout(() => response.writeHead(200).end(entry.body), entry.delayMs ?? 0);
    response.on('close', () => clearTimeout(timer));
  });
  aiaServer.on('connection', (socket: Socket) => {
    aiaSockets.add(socket);
    socket.on('close', () => aiaSockets.delete(socket));
  });
  await new Promise<void>((resolve) => aiaServer.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(aiaServer.address() as AddressInfo).port}`;
}

async function serveAiaFixtures(): Promise<void> {
  aiaBodies.set('/der/inter.cer', { body: Buffer.from(aia.der.inter.der) });
  aiaBodies.set('/pem/inter.crt', { body: Buffer.from(aia.pem.inter.pem) });
  aiaBodies.set('/p7c/inter.p7c', { body: await pkcs7(aia.p7c.inter.pem, 'DER') });
  aiaBodies.set('/garbage.cer', { body: Buffer.from('this is not a certificate') });
  aiaBodies.set('/slow.cer', { body: Buffer.from(aia.slow.inter.der), delayMs: 1_000 });
  aiaBodies.set('/hanging.cer', { body: Buffer.alloc(0), hang: true });
  aiaBodies.set('/hop/lower.cer', { body: Buffer.from(aia.hop.lower.der) });
  aiaBodies.set('/hop/upper.cer', { body: Buffer.from(aia.hop.upper.der) });
}

// ---------------------------------------------------------------------------------------------
// Loopback TLS server for remote mode: presents localhost's leaf + the intermediate.

const tlsLeaf = pki.leaf('localhost', inter, { key: 'ecdsa-p256', dns: ['localhost'], ips: ['127.0.0.1'] });
let tlsServer: TlsServer;
let tlsPort: number;

async function startTlsServer(): Promise<void> {
  tlsServer = createTlsServer({ key: tlsLeaf.key.pkcs8Pem, cert: chainPem(tlsLeaf, inter) }, (socket) => socket.end());
  tlsServer.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsServer.address() as AddressInfo).port;
}

// ---------------------------------------------------------------------------------------------
// Helpers

let workDir: string;
let main: StartedCertsmith;
let ranking: StartedCertsmith;
let embedded: StartedCertsmith;

/** PKCS#7 "certs-only" without CRLs, made by openssl. */
async function pkcs7(pemText: string, form: 'PEM' | 'DER'): Promise<Buffer> {
  const input = join(workDir, `p7-${Math.random().toString(16).slice(2)}.pem`);
  await writeFile(input, pemText);
  const { stdout } = await execFileAsync('openssl', ['crl2pkcs7', '-nocrl', '-certfile', input, '-outform', form], { encoding: 'buffer' });
  return stdout;
}

interface Reply {
  status: number;
  contentType: string | null;
  body: {
    success: boolean;
    result: Record<string, unknown> & { status: Record<string, unknown> };
    errors: Array<{ code: number; message: string }>;
    messages: unknown[];
  };
}

async function post(server: StartedCertsmith, body: unknown, path = '/api/v1/cfssl/bundle'): Promise<Reply> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, contentType: response.headers.get('content-type'), body: (await response.json()) as Reply['body'] };
}

/** POST and expect success; returns the result. */
async function bundle(server: StartedCertsmith, body: Record<string, unknown>): Promise<Reply['body']['result']> {
  const reply = await post(server, body);
  expect(reply.body.errors, 'errors').toEqual([]);
  expect(reply.status).toBe(200);
  return reply.body.result;
}

/** POST and expect one coded error with status 400. */
async function bundleError(server: StartedCertsmith, body: unknown): Promise<{ code: number; message: string }> {
  const reply = await post(server, body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(400);
  expect(reply.contentType).toBe('application/json');
  expect(reply.body).toMatchObject({ success: false, result: null, messages: [] });
  expect(reply.body.errors).toHaveLength(1);
  return reply.body.errors[0]!;
}

const pem = (...certs: TestCertificate[]): string => chainPem(...certs);
const joined = (...certs: TestCertificate[]): string => chainPem(...certs).trim();
/** Doc 2.8 expiry message. */
const expiryWarning = (indices: number[]): string =>
  `The bundle is expiring within 30 days.${indices.length === 1 ? 'The expiring cert is' : 'The expiring certs are'}${indices.map((i) => ` #${i}`).join('')} in the chain.`;

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'certsmith-bundle-e2e-'));
  const [aiaBase] = await Promise.all([startAiaServer(), startTlsServer()]);
  aia = makeAiaFixtures(aiaBase);
  await serveAiaFixtures();

  const mainCa = await writeExtendedBundle(TRUST_FILES.caBundle, [root.pem, sha1Root.pem], join(workDir, 'main-ca.crt'));
  const mainInt = await writeExtendedBundle(TRUST_FILES.intBundle, [pooledInter.pem], join(workDir, 'main-int.crt'));
  const rankingCa = await writeExtendedBundle(null, [rootOld.pem, rootNew.pem], join(workDir, 'ranking-ca.crt'));
  const rankingInt = await writeExtendedBundle(null, [crossNew.pem], join(workDir, 'ranking-int.crt'));
  await writeFile(join(workDir, 'legacy.pem'), rootOld.pem);
  await writeFile(join(workDir, 'modern.pem'), rootOld.pem + rootNew.pem);
  const rankingMetadata = join(workDir, 'ranking.metadata');
  await writeFile(
    rankingMetadata,
    JSON.stringify([
      { name: 'Legacy', weight: 10, hash_algo: 'SHA2', key_algo: 'ECDSA256', keystore: 'legacy.pem' },
      { name: 'Modern', weight: 5, hash_algo: 'SHA2', key_algo: 'ECDSA256', keystore: 'modern.pem' },
    ]),
  );
  // One process each: the intermediates a server learns (supplied or fetched over AIA) stay in the
  // process that learned them, and the AIA tests count fetches of one process's cache.
  const common = (name: string): string[] => ['--port', '0', '--processes', '1', '--data-dir', join(workDir, name), '--workers', '1', '--loglevel', 'warn'];
  // The AIA and TLS fixtures listen on 127.0.0.1, which the SSRF guard refuses by default: `main` and
  // `embedded` allow it; `ranking` keeps the default and shows the refusal.
  const allowLoopback = ['--allow-private-networks'];
  [main, ranking, embedded] = await Promise.all([
    startCertsmith([...common('main'), ...allowLoopback, '--ca-bundle', mainCa, '--int-bundle', mainInt, '--metadata', TRUST_FILES.metadata]),
    startCertsmith([...common('ranking'), '--ca-bundle', rankingCa, '--int-bundle', rankingInt, '--metadata', rankingMetadata]),
    startCertsmith([...common('embedded'), ...allowLoopback]),
  ]);
});

afterAll(async () => {
  await killAllCertsmith();
  for (const socket of aiaSockets) socket.destroy();
  await Promise.all([
    aiaServer ? new Promise<void>((resolve) => aiaServer.close(() => resolve())) : undefined,
    tlsServer ? new Promise<void>((resolve) => tlsServer.close(() => resolve())) : undefined,
  ]);
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('POST /api/v1/cfssl/bundle', () => {
  describe('certificate mode', () => {
    it.each(KEY_TYPES)('bundles a %s leaf with its intermediate', async (spec, keyType, keySize) => {
      const typed = typedLeaves.get(spec)!;
      const result = await bundle(main, { certificate: pem(typed, inter) });
      const ecdsaLike = !spec.startsWith('rsa');
      expect(result).toEqual({
        bundle: joined(typed, inter),
        crl_support: false,
        crt: trimmedPem(typed),
        expires: new Date(new X509Certificate(typed.pem).validTo).toISOString().replace('.000Z', 'Z'),
        hostnames: [`${spec}.example.com`],
        issuer: '/Organization=certsmith e2e/CommonName=E2E Bundle Inter',
        key: '',
        key_size: keySize,
        key_type: keyType,
        leaf_expires: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        ocsp: null,
        ocsp_support: false,
        root: trimmedPem(root),
        signature: 'SHA256WithRSA',
        status: {
          rebundled: false,
          expiring_SKIs: null,
          untrusted_root_stores: KEYSTORE_PLATFORMS,
          messages: [SHA2_WARNING, ...(ecdsaLike ? [ECDSA_WARNING] : []), UNTRUSTED_WARNING],
          code: 2,
        },
        subject: `/CommonName=${spec}.example.com`,
      });
      expect(result['leaf_expires']).toBe(result['expires']);
    });

    it('keeps CFSSL\'s key order in the result and the status', async () => {
      const result = await bundle(main, { certificate: pem(leaf, inter) });
      expect(Object.keys(result)).toEqual([
        'bundle', 'crl_support', 'crt', 'expires', 'hostnames', 'issuer', 'key', 'key_size', 'key_type',
        'leaf_expires', 'ocsp', 'ocsp_support', 'root', 'signature', 'status', 'subject',
      ]);
      expect(Object.keys(result.status)).toEqual(['rebundled', 'expiring_SKIs', 'untrusted_root_stores', 'messages', 'code']);
    });

    it('accepts a reversed bundle (intermediate first) without rebundling', async () => {
      const result = await bundle(main, { certificate: pem(inter, leaf) });
      expect(result).toMatchObject({ bundle: joined(leaf, inter), crt: trimmedPem(leaf), status: { rebundled: false } });
    });

    it('completes a partial bundle from the int-bundle and reports it as rebundled', async () => {
      const result = await bundle(main, { certificate: pem(leafPooled) });
      expect(result).toMatchObject({ bundle: joined(leafPooled, pooledInter), root: trimmedPem(root), status: { rebundled: true } });
    });

    it('drops a submitted root from the bundle and reports it as rebundled', async () => {
      const result = await bundle(main, { certificate: pem(leaf, inter, root) });
      expect(result).toMatchObject({ bundle: joined(leaf, inter), root: trimmedPem(root), status: { rebundled: true } });
    });

    it('keeps leaf and root when an OCSP-enabled leaf would otherwise be alone (doc 2.5 step 7)', async () => {
      const result = await bundle(main, { certificate: pem(leafOcsp) });
      expect(result).toMatchObject({
        bundle: joined(leafOcsp, root),
        ocsp: ['http://ocsp.example.com'],
        ocsp_support: true,
        crl_support: true,
        status: { rebundled: true },
      });
    });

    it('answers 1220 when no chain to a trusted root exists', async () => {
      expect(await bundleError(main, { certificate: pem(leafOrphan) })).toEqual(UNKNOWN_AUTHORITY);
    });

    it('lists the CN first, then the DNS SANs in certificate order, without duplicates', async () => {
      const result = await bundle(main, { certificate: pem(leafHostnames, inter) });
      expect(result['hostnames']).toEqual(['cn.example.com', 'b.example.com', 'a.example.com']);
    });

    it('accepts PKCS#7 (PEM, no CRLs) as the certificate', async () => {
      const p7 = (await pkcs7(pem(leaf, inter), 'PEM')).toString('utf8');
      expect(p7).toMatch(/^-----BEGIN PKCS7-----/);
      const result = await bundle(main, { certificate: p7 });
      expect(result).toMatchObject({ crt: trimmedPem(leaf), bundle: joined(leaf, inter), status: { rebundled: false } });
    });

    it('skips text before the first PEM block and ignores the PEM label', async () => {
      const relabelled = pem(leaf, inter).replaceAll('CERTIFICATE-----', 'FOO BAR-----');
      const result = await bundle(main, { certificate: `leading junk\n${relabelled}` });
      expect(result['bundle']).toBe(joined(leaf, inter));
    });
  });

  describe('expiry', () => {
    it('flags a leaf expiring within 30 days with bit 1, its SKI and CFSSL\'s message', async () => {
      const result = await bundle(main, { certificate: pem(leafExpiring, inter) });
      expect(result.status).toEqual({
        rebundled: false,
        expiring_SKIs: [leafExpiring.subjectKeyIdHex],
        untrusted_root_stores: KEYSTORE_PLATFORMS,
        messages: [expiryWarning([1]), SHA2_WARNING, UNTRUSTED_WARNING],
        code: 3,
      });
    });

    it('names every expiring certificate of the chain by position', async () => {
      const result = await bundle(main, { certificate: pem(leafUnderExpiring, interExpiring) });
      expect(result.status).toMatchObject({
        expiring_SKIs: [leafUnderExpiring.subjectKeyIdHex, interExpiring.subjectKeyIdHex],
        messages: [expiryWarning([1, 2]), SHA2_WARNING, ECDSA_WARNING, UNTRUSTED_WARNING],
        code: 3,
      });
      // `expires` is the earliest NotAfter of the returned chain.
      expect(result['expires']).toBe(new Date(new X509Certificate(leafUnderExpiring.pem).validTo).toISOString().replace('.000Z', 'Z'));
    });

    it('answers 1211 for an expired leaf, and bundles it with force', async () => {
      const error = await bundleError(main, { certificate: pem(leafExpired, inter) });
      expect(error.code).toBe(1211);
      expect(error.message).toMatch(/^x509: certificate has expired or is not yet valid: current time \S+Z is after \S+Z$/);
      const forced = await bundle(main, { certificate: pem(leafExpired, inter), flavor: 'force' });
      expect(forced.status).toMatchObject({ expiring_SKIs: [leafExpired.subjectKeyIdHex], messages: [expiryWarning([1]), SHA2_WARNING], code: 3 });
    });
  });

  describe('flavors', () => {
    it('returns the input as is with force: no root, no platform check', async () => {
      const result = await bundle(main, { certificate: pem(leaf, inter, root), flavor: 'force' });
      expect(result).toMatchObject({
        bundle: joined(leaf, inter, root),
        root: '',
        status: { rebundled: false, expiring_SKIs: null, untrusted_root_stores: null, messages: [SHA2_WARNING, ECDSA_WARNING], code: 2 },
      });
    });

    it('answers 1200 with force when the input is not a signature chain', async () => {
      expect(await bundleError(main, { certificate: pem(leaf, pooledInter), flavor: 'force' })).toEqual({
        code: 1200,
        message: 'Unable to verify the certificate chain',
      });
    });

    it('prefers the chain more platforms trust when ubiquitous (cross-signed intermediate)', async () => {
      const result = await bundle(ranking, { certificate: pem(leafRanked, interNew) });
      expect(result).toMatchObject({
        bundle: joined(leafRanked, interNew, crossNew),
        root: trimmedPem(rootOld),
        status: { rebundled: true, untrusted_root_stores: [], messages: [SHA2_WARNING, ECDSA_WARNING], code: 2 },
      });
    });

    it('treats an unknown flavor as ubiquitous', async () => {
      const result = await bundle(ranking, { certificate: pem(leafRanked, interNew), flavor: 'Optimal' });
      expect(result['root']).toBe(trimmedPem(rootOld));
    });

    it('prefers the shortest chain when optimal and names the platforms that do not trust it', async () => {
      const result = await bundle(ranking, { certificate: pem(leafRanked, interNew), flavor: 'optimal' });
      expect(result).toMatchObject({
        bundle: joined(leafRanked, interNew),
        root: trimmedPem(rootNew),
        status: {
          rebundled: false,
          untrusted_root_stores: ['Legacy'],
          messages: [SHA2_WARNING, ECDSA_WARNING, 'The bundle may not be trusted by the following platform(s): Legacy.'],
          code: 2,
        },
      });
    });

    it('keeps the cross-signed chain as given with force', async () => {
      const result = await bundle(ranking, { certificate: pem(leafRanked, interNew, crossNew), flavor: 'force' });
      expect(result).toMatchObject({ bundle: joined(leafRanked, interNew, crossNew), root: '', status: { untrusted_root_stores: null } });
    });
  });

  describe('SHA-1 and self-signed input', () => {
    it('bundles a chain with a SHA-1 intermediate and adds the SHA-1 warnings in a fixed order', async () => {
      const sha1Messages = [
        'Google Chrome shows the SSL connection is untrusted due to SHA-1 deprecation',
        'Mozilla Firefox shows the SSL connection is untrusted due to SHA-1 deprecation',
        'Microsoft Windows Vista and later shows the SSL connection is untrusted due to SHA-1 deprecation',
      ];
      for (let i = 0; i < 3; i += 1) {
        const result = await bundle(main, { certificate: pem(leafUnderSha1, sha1Inter) });
        expect(result.status).toEqual({
          rebundled: false,
          expiring_SKIs: null,
          untrusted_root_stores: KEYSTORE_PLATFORMS,
          messages: [SHA2_WARNING, UNTRUSTED_WARNING, ...sha1Messages],
          code: 2,
        });
      }
    });

    it('answers 1100 for a self-signed certificate', async () => {
      expect(await bundleError(main, { certificate: pem(untrustedSelfSigned) })).toEqual({
        code: 1100,
        message: 'Certificate is self signed',
      });
    });

    it('answers 1100 for a trusted SHA-1 root sent as the leaf (CFSSL crashes)', async () => {
      expect(await bundleError(main, { certificate: pem(sha1Root) })).toEqual({ code: 1100, message: 'Certificate is self signed' });
      expect(await bundleError(main, { certificate: pem(root) })).toEqual({ code: 1100, message: 'Certificate is self signed' });
    });
  });

  describe('hostname and IP checks', () => {
    it('passes when domain and ip match the leaf', async () => {
      const result = await bundle(main, { certificate: pem(leaf, inter), domain: 'example.com', ip: '192.0.2.10' });
      expect(result['hostnames']).toEqual(['www.example.com', 'example.com']);
    });

    it.each([
      [{ domain: 'other.example.net' }, 'x509: certificate is valid for www.example.com, example.com, not other.example.net'],
      [{ ip: '10.0.0.1' }, 'x509: certificate is valid for 192.0.2.10, not 10.0.0.1'],
    ])('answers 1200 with Go\'s text when %o does not match', async (extra, message) => {
      expect(await bundleError(main, { certificate: pem(leaf, inter), ...extra })).toEqual({ code: 1200, message });
    });
  });

  describe('private keys', () => {
    it('returns a matching PKCS#8 key re-encoded as CFSSL does', async () => {
      const ec = await bundle(main, { certificate: pem(leaf, inter), private_key: leaf.key.pkcs8Pem });
      expect(ec['key']).toBe(leaf.key.traditionalPem.trim());
      expect(ec['key']).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
      const edResult = await bundle(main, { certificate: pem(ed25519Leaf, inter), private_key: ed25519Leaf.key.pkcs8Pem });
      expect(edResult['key']).toMatch(/^-----BEGIN Ed25519 PRIVATE KEY-----\n[\s\S]+\n-----END Ed25519 PRIVATE KEY-----$/);
    });

    it.each([
      ['another key', () => otherKey.pkcs8Pem, { code: 2300, message: 'Private key does not match public key' }],
      ['a key of another type', () => leafPooled.key.pkcs8Pem, { code: 2300, message: 'Private key does not match public key' }],
      ['garbage', () => 'garbage', { code: 2002, message: 'Failed to decode private key' }],
      ['a certificate', () => leaf.pem, { code: 2003, message: 'Failed to parse private key' }],
    ])('answers CFSSL\'s error for %s as private_key', async (_name, key, expected) => {
      expect(await bundleError(main, { certificate: pem(leaf, inter), private_key: key() })).toEqual(expected);
    });
  });

  describe('garbage certificates', () => {
    it.each([
      ['text', 'this is not a certificate', 1002, 'Failed to decode certificate'],
      ['an empty string', '', 1002, 'Failed to decode certificate'],
      ['trailing junk', `${pem(leaf)}trailing junk\n`, 1002, 'Failed to decode certificate'],
      ['a private key', leaf.key.traditionalPem, 1003, 'Failed to parse certificate'],
      ['a corrupted certificate', pem(leaf).replace(/^(-----BEGIN CERTIFICATE-----\n)..../, '$1AAAA'), 1003, 'Failed to parse certificate'],
    ])('answers %s with %i', async (_name, certificate, code, message) => {
      expect(await bundleError(main, { certificate })).toEqual({ code, message });
    });

    it('never answers 500 for mangled input (bounded, seeded fuzz)', async () => {
      let seed = 0x2545f491;
      const random = (n: number): number => {
        seed ^= seed << 13;
        seed ^= seed >>> 17;
        seed ^= seed << 5;
        return (seed >>> 0) % n;
      };
      const source = pem(leaf, inter);
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-\n ';
      const statuses = new Set<number>();
      for (let i = 0; i < 60; i += 1) {
        const chars = [...source];
        for (let flips = 1 + random(8); flips > 0; flips -= 1) chars[random(chars.length)] = alphabet[random(alphabet.length)]!;
        const cut = random(4) === 0 ? random(chars.length) : chars.length;
        const body = { certificate: chars.slice(0, cut).join(''), flavor: ['', 'force', 'optimal'][random(3)] };
        const reply = await post(main, body);
        statuses.add(reply.status);
        expect([200, 400], JSON.stringify(reply.body.errors)).toContain(reply.status);
        if (reply.status === 400) expect(reply.body.errors[0]!.code).toBeGreaterThanOrEqual(1000);
      }
      expect(statuses.has(400)).toBe(true);
    });
  });

  describe('AIA', () => {
    it.each([
      ['DER', 'der', '/der/inter.cer'],
      ['PEM', 'pem', '/pem/inter.crt'],
      ['PKCS#7 DER (.p7c)', 'p7c', '/p7c/inter.p7c'],
    ] as const)('fetches a missing intermediate served as %s, and remembers it', async (_name, kind, path) => {
      const fixture = aia[kind];
      const result = await bundle(main, { certificate: pem(fixture.leaf) });
      expect(result).toMatchObject({ bundle: joined(fixture.leaf, fixture.inter), root: trimmedPem(root), status: { rebundled: true } });
      expect(aiaHits.get(path)).toBe(1);
      // Learned (as CFSSL's bundler learns): a second request does not fetch again.
      await bundle(main, { certificate: pem(fixture.leaf) });
      expect(aiaHits.get(path)).toBe(1);
    });

    it('follows AIA over two hops', async () => {
      const result = await bundle(main, { certificate: pem(aia.hop.leaf) });
      expect(result['bundle']).toBe(joined(aia.hop.leaf, aia.hop.lower, aia.hop.upper));
      expect([aiaHits.get('/hop/lower.cer'), aiaHits.get('/hop/upper.cer')]).toEqual([1, 1]);
    });

    it('waits for a slow but timely AIA server', async () => {
      const result = await bundle(main, { certificate: pem(aia.slow.leaf) });
      expect(result['bundle']).toBe(joined(aia.slow.leaf, aia.slow.inter));
    });

    it.each([
      ['404', 'missing', '/missing.cer'],
      ['garbage', 'garbage', '/garbage.cer'],
    ] as const)('answers 1220 when the AIA URL answers %s', async (_name, kind, path) => {
      expect(await bundleError(main, { certificate: pem(aia[kind].leaf) })).toEqual(UNKNOWN_AUTHORITY);
      expect(aiaHits.get(path)).toBeGreaterThanOrEqual(1);
    });

    it('gives up on an AIA server that never answers (5 s bound) with 1220', async () => {
      const started = Date.now();
      expect(await bundleError(main, { certificate: pem(aia.hanging.leaf) })).toEqual(UNKNOWN_AUTHORITY);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(4_500);
      expect(elapsed).toBeLessThan(15_000);
    }, 30_000);
  });

  describe('remote mode', () => {
    it('bundles the chain a TLS server presents (`domain` with a port)', async () => {
      const result = await bundle(main, { domain: `localhost:${tlsPort}` });
      expect(result).toMatchObject({
        crt: trimmedPem(tlsLeaf),
        bundle: joined(tlsLeaf, inter),
        root: trimmedPem(root),
        hostnames: ['localhost'],
        key: '',
        status: { rebundled: false, code: 2 },
      });
      // The strict handshake succeeded (the root is in --ca-bundle): no handshake message.
      expect((result.status['messages'] as string[]).some((m) => m.startsWith('Failed rigid TLS handshake'))).toBe(false);
    });

    it('dials `ip` and checks the certificate against `domain`', async () => {
      const result = await bundle(main, { domain: `localhost:${tlsPort}`, ip: '127.0.0.1', flavor: 'optimal' });
      expect(result['crt']).toBe(trimmedPem(tlsLeaf));
    });

    it('answers 1200 when the server\'s certificate does not match `domain`', async () => {
      expect(await bundleError(main, { domain: `wrong.example:${tlsPort}`, ip: '127.0.0.1' })).toEqual({
        code: 1200,
        message: 'x509: certificate is valid for localhost, not wrong.example',
      });
    });

    it('refuses a loopback target with 6000 when private networks are not allowed (the default)', async () => {
      const error = await bundleError(ranking, { domain: `localhost:${tlsPort}` });
      expect(error.code).toBe(6000);
      expect(error.message).toContain('127.0.0.1');
      expect(error.message).toContain('--allow-private-networks');
    });

    it('answers 6000 with Go\'s dial text when nothing listens', async () => {
      const port = await findFreePort();
      expect(await bundleError(main, { domain: `127.0.0.1:${port}` })).toEqual({
        code: 6000,
        message: `dial tcp 127.0.0.1:${port}: connect: connection refused`,
      });
    });

    it('reports rebundled when the server also sends its root (dropped from the bundle), as CFSSL', async () => {
      const withRoot = createTlsServer({ key: tlsLeaf.key.pkcs8Pem, cert: chainPem(tlsLeaf, inter, root) }, (socket) => socket.end());
      withRoot.on('tlsClientError', () => undefined);
      await new Promise<void>((resolve) => withRoot.listen(0, '127.0.0.1', resolve));
      try {
        const result = await bundle(main, { domain: `localhost:${(withRoot.address() as AddressInfo).port}` });
        expect(result).toMatchObject({ bundle: joined(tlsLeaf, inter), root: trimmedPem(root), status: { rebundled: true } });
      } finally {
        await new Promise((resolve) => withRoot.close(resolve));
      }
    });

    it.each([
      ['localhost:99999', 'dial tcp: address 99999: invalid port'],
      ['localhost:-1', 'dial tcp: address -1: invalid port'],
      ['localhost:abc', 'dial tcp: address tcp/abc: unknown port'],
    ])('answers %s with 6000 and Go\'s text, never Node\'s', async (domain, message) => {
      expect(await bundleError(main, { domain })).toEqual({ code: 6000, message });
    });
  });

  describe('request bodies', () => {
    it.each([
      ['a boolean certificate', '{"certificate":true}', 400, /^certificate must be a string/],
      ['a number domain', '{"certificate":"x","domain":5}', 400, /^domain must be a string/],
      ['an object private_key', '{"certificate":"x","private_key":{}}', 400, /^private_key must be a string/],
      ['an array flavor', '{"certificate":"x","flavor":[]}', 400, /^flavor must be a string/],
      ['a number ip', '{"domain":"x","ip":1}', 400, /^ip must be a string/],
      ['neither certificate nor domain', '{"flavor":"optimal"}', 400, /^no valid parameter sets found$/],
      ['a null body', 'null', 400, /^no valid parameter sets found$/],
      ['an empty body', '', 400, /^unexpected end of JSON input$/],
      ['truncated JSON', '{"certificate":', 400, /^unexpected end of JSON input$/],
      ['an array body', '[]', 400, /^request body must be a JSON object, got array$/],
    ])('answers %s with 400 code 400', async (_name, body, code, message) => {
      const error = await bundleError(main, body);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    });

    it('treats null values as empty strings (certificate mode with an empty certificate)', async () => {
      expect(await bundleError(main, { certificate: null, domain: null })).toEqual({ code: 1002, message: 'Failed to decode certificate' });
    });

    it('prefers certificate mode when both certificate and domain are sent', async () => {
      const result = await bundle(main, { certificate: pem(leaf, inter), domain: '' });
      expect(result['crt']).toBe(trimmedPem(leaf));
    });

    it('serves the /api/v1/svc alias and refuses other methods', async () => {
      const reply = await post(main, { certificate: pem(leaf, inter) }, '/api/v1/svc/bundle');
      expect(reply.status).toBe(200);
      const get = await fetch(`${main.url}/api/v1/cfssl/bundle`, { signal: AbortSignal.timeout(10_000) });
      expect(get.status).toBe(405);
      expect(await get.json()).toMatchObject({ errors: [{ code: 405, message: 'Method is not allowed:"GET"' }] });
    });
  });

  describe('real trust data', () => {
    const [r10] = findTrustCertificates(TRUST_FILES.intBundle, 'R10');
    const [isrgRootX1] = findTrustCertificates(TRUST_FILES.caBundle, 'ISRG Root X1');
    const r10Valid = r10 !== undefined && isCurrentlyValid(r10.x509);

    it('finds Let\'s Encrypt R10 in int-bundle.crt and ISRG Root X1 in ca-bundle.crt', () => {
      expect(r10).toBeDefined();
      expect(isrgRootX1).toBeDefined();
    });

    it.skipIf(!r10Valid)('bundles R10 exactly as doc 7.1 shows', async () => {
      const result = await bundle(main, { certificate: r10!.pem });
      expect(result).toEqual({
        bundle: r10!.pem.trim(),
        crl_support: true,
        crt: r10!.pem.trim(),
        expires: '2027-03-12T23:59:59Z',
        hostnames: ['R10'],
        issuer: '/Country=US/Organization=Internet Security Research Group/CommonName=ISRG Root X1',
        key: '',
        key_size: 2048,
        key_type: '2048-bit RSA',
        leaf_expires: '2027-03-12T23:59:59Z',
        ocsp: null,
        ocsp_support: false,
        root: isrgRootX1!.pem.trim(),
        signature: 'SHA256WithRSA',
        status: {
          rebundled: false,
          expiring_SKIs: null,
          untrusted_root_stores: KEYSTORE_PLATFORMS,
          messages: [SHA2_WARNING, UNTRUSTED_WARNING],
          code: 2,
        },
        subject: "/Country=US/Organization=Let's Encrypt/CommonName=R10",
      });
    });

    it.skipIf(!r10Valid)('bundles R10 with force as doc 7.1 shows', async () => {
      const result = await bundle(main, { certificate: r10!.pem, flavor: 'force' });
      expect(result).toMatchObject({
        bundle: r10!.pem.trim(),
        root: '',
        status: { rebundled: false, expiring_SKIs: null, untrusted_root_stores: null, messages: [SHA2_WARNING], code: 2 },
      });
    });

    it.skipIf(!r10Valid)('answers doc 7.5\'s errors for R10 with a domain, an IP or another key', async () => {
      expect(await bundleError(main, { certificate: r10!.pem, domain: 'example.com' })).toEqual({
        code: 1200,
        message: 'x509: certificate is not valid for any names, but wanted to match example.com',
      });
      expect(await bundleError(main, { certificate: r10!.pem, ip: '10.0.0.1' })).toEqual({
        code: 1200,
        message: "x509: cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs",
      });
      expect(await bundleError(main, { certificate: r10!.pem, private_key: leafPooled.key.pkcs8Pem })).toEqual({
        code: 2300,
        message: 'Private key does not match public key',
      });
    });

    it.skipIf(!r10Valid)('bundles R10 against the embedded default: Node\'s roots as one trusting platform', async () => {
      const result = await bundle(embedded, { certificate: r10!.pem });
      expect(result).toMatchObject({
        bundle: r10!.pem.trim(),
        root: isrgRootX1!.pem.trim(),
        status: { rebundled: false, expiring_SKIs: null, untrusted_root_stores: [], messages: [SHA2_WARNING], code: 2 },
      });
    });

    it('answers 1220 on the embedded default for a chain to a root it does not know', async () => {
      expect(await bundleError(embedded, { certificate: pem(leaf, inter) })).toEqual(UNKNOWN_AUTHORITY);
    });
  });
});
