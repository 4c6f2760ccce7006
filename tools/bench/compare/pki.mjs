/**
 * Fixtures for the comparison benchmark, generated fresh into a temp dir on every run:
 *
 * - the newcert signer CA, made by `cfssl genkey -initca` exactly as CFSSL users make one
 *   (behaviour doc 7, setup), so both servers sign with a CA neither of them produced;
 * - a small generated PKI (root → intermediate → leaf, ECDSA P-256) for the "bundle a leaf" op;
 * - many generated intermediates for the pool-size measurement;
 * - the trust files handed to both servers (combined ca-bundle, per-pool int-bundles).
 *
 * Certificates are written with x509-core's DER writer and signed with node:crypto: no shell-out
 * per certificate, so 12,000 intermediates take a second or two (generation is not measured).
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  derBitString,
  derBoolean,
  derDirectoryString,
  derExplicit,
  derImplicit,
  derInteger,
  derNamedBitString,
  derOctetString,
  derOid,
  derSequence,
  derSetOf,
  derTime,
} from '@certsmith/x509-core';

const ECDSA_WITH_SHA256 = derSequence(derOid('1.2.840.10045.4.3.2'));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** RFC 5280 4.2.1.3 bit numbers. */
const KeyUsage = { digitalSignature: 1 << 0, keyEncipherment: 1 << 2, keyCertSign: 1 << 5, cRLSign: 1 << 6 };

/**
 * @typedef {object} BenchCertificate
 * @property {string} pem   PEM text ending in a newline.
 * @property {Uint8Array} name  DER of the subject Name (the issuer Name of what it signs).
 * @property {Uint8Array} ski   subject key identifier (the AKI of what it signs).
 * @property {import('node:crypto').KeyObject} privateKey
 */

/** PEM-encode DER with 64-character lines, as every PEM reader (Go's included) expects. */
export function toPem(der, label = 'CERTIFICATE') {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** Name as `O=certsmith bench, CN=<cn>`, PrintableString where possible (Go's encoding). */
function benchName(cn) {
  const attribute = (oid, value) => derSetOf([derSequence(derOid(oid), derDirectoryString(value))]);
  return derSequence(attribute('2.5.4.10', 'certsmith bench'), attribute('2.5.4.3', cn));
}

function extension(oid, critical, value) {
  return critical ? derSequence(derOid(oid), derBoolean(true), derOctetString(value)) : derSequence(derOid(oid), derOctetString(value));
}

/**
 * Build and sign one X.509 v3 certificate.
 *
 * @param {object} options
 * @param {Uint8Array} options.subject  subject Name DER
 * @param {Uint8Array} options.spki     SubjectPublicKeyInfo DER
 * @param {Uint8Array} options.ski      subject key identifier to write (need not be the key hash;
 *   distinct values keep generated intermediates that share a key distinct to an SKI index)
 * @param {{ name: Uint8Array, ski: Uint8Array, privateKey: import('node:crypto').KeyObject } | undefined} options.issuer
 *   absent → self-signed with `options.privateKey`
 * @param {import('node:crypto').KeyObject} options.privateKey  the subject's own key (self-signed only)
 * @param {boolean} options.ca
 * @param {string[]} [options.dnsNames]
 * @param {Date} options.notBefore
 * @param {Date} options.notAfter
 * @returns {Uint8Array} certificate DER
 */
function buildCertificate({ subject, spki, ski, issuer, privateKey, ca, dnsNames = [], notBefore, notAfter }) {
  const signer = issuer ?? { name: subject, ski, privateKey };
  const extensions = [
    extension(
      '2.5.29.15',
      true,
      derNamedBitString(ca ? KeyUsage.keyCertSign | KeyUsage.cRLSign : KeyUsage.digitalSignature | KeyUsage.keyEncipherment)
    ),
    extension('2.5.29.19', true, ca ? derSequence(derBoolean(true)) : derSequence()),
    extension('2.5.29.14', false, derOctetString(ski)),
  ];
  if (issuer) extensions.push(extension('2.5.29.35', false, derSequence(derImplicit(0, signer.ski, false))));
  if (!ca) {
    // serverAuth + clientAuth, as CFSSL's default profile issues.
    extensions.push(extension('2.5.29.37', false, derSequence(derOid('1.3.6.1.5.5.7.3.1'), derOid('1.3.6.1.5.5.7.3.2'))));
  }
  if (dnsNames.length > 0) {
    extensions.push(extension('2.5.29.17', false, derSequence(...dnsNames.map((dns) => derImplicit(2, Buffer.from(dns, 'ascii'), false)))));
  }
  // 16 random bytes with the top bit cleared: positive, unique, like CFSSL's 20-byte serials.
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x01;
  const tbs = derSequence(
    derExplicit(0, derInteger(2)),
    derInteger(serial),
    ECDSA_WITH_SHA256,
    signer.name,
    derSequence(derTime(notBefore), derTime(notAfter)),
    subject,
    spki,
    derExplicit(3, derSequence(...extensions))
  );
  const signature = sign('sha256', tbs, signer.privateKey); // DER ECDSA-Sig-Value, as X.509 wants
  return derSequence(tbs, ECDSA_WITH_SHA256, derBitString(new Uint8Array(signature)));
}

function newKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  // RFC 5280 4.2.1.2 method 1 (SHA-1 of the subjectPublicKey bits): the last 65 bytes of a P-256 SPKI.
  const ski = createHash('sha1')
    .update(spki.subarray(spki.length - 65))
    .digest();
  return { privateKey, spki, ski: new Uint8Array(ski) };
}

/**
 * Generate root → intermediate → leaf (ECDSA P-256). The leaf has `bench.example` as its DNS SAN
 * and no AIA/OCSP, so CFSSL removes the root from the returned chain (behaviour doc 2.5 step 7).
 *
 * @param {Date} [now]
 * @returns {{ root: BenchCertificate, intermediate: BenchCertificate, leaf: BenchCertificate }}
 */
export function generateBenchPki(now = new Date()) {
  const notBefore = new Date(now.getTime() - HOUR);
  const make = (cn, issuer, ca, dnsNames) => {
    const key = newKey();
    const name = benchName(cn);
    const notAfter = new Date(now.getTime() + (ca ? 3650 : 365) * DAY);
    const der = buildCertificate({
      subject: name,
      spki: key.spki,
      ski: key.ski,
      issuer,
      privateKey: key.privateKey,
      ca,
      dnsNames,
      notBefore,
      notAfter,
    });
    return { pem: toPem(der), name, ski: key.ski, privateKey: key.privateKey };
  };
  const root = make('certsmith bench root', undefined, true);
  const intermediate = make('certsmith bench intermediate', root, true);
  const leaf = make('bench.example', intermediate, false, ['bench.example']);
  return { root, intermediate, leaf };
}

/**
 * Generate `count` valid intermediates issued by `root`, all sharing one key (generation speed) but
 * with distinct subjects and distinct SKIs, so a lookup by subject or by key id finds exactly one —
 * the pool-size measurement is about pool size, not about pathological candidate lists.
 *
 * @param {BenchCertificate} root
 * @param {number} count
 * @param {Date} [now]
 * @returns {string} concatenated PEM
 */
export function generateIntermediates(root, count, now = new Date()) {
  const key = newKey();
  const notBefore = new Date(now.getTime() - HOUR);
  const notAfter = new Date(now.getTime() + 3 * 365 * DAY);
  const parts = [];
  for (let i = 0; i < count; i++) {
    const ski = new Uint8Array(createHash('sha1').update(`certsmith-bench-intermediate-${i}`).digest());
    const der = buildCertificate({
      subject: benchName(`certsmith bench pool intermediate ${i}`),
      spki: key.spki,
      ski,
      issuer: root,
      ca: true,
      notBefore,
      notAfter,
    });
    parts.push(toPem(der));
  }
  return parts.join('');
}

/**
 * Create the newcert signer CA with `cfssl genkey -initca | cfssljson -bare` (ECDSA P-256).
 *
 * @param {string} dir
 * @returns {{ certFile: string, keyFile: string }}
 */
export function createSignerCa(dir) {
  const csrFile = join(dir, 'ca-csr.json');
  writeFileSync(
    csrFile,
    JSON.stringify({ CN: 'certsmith bench signer CA', names: [{ O: 'certsmith bench' }], key: { algo: 'ecdsa', size: 256 } })
  );
  const genkey = spawnSync('cfssl', ['genkey', '-initca', csrFile], { encoding: 'utf8', timeout: 30_000 });
  if (genkey.status !== 0) throw new Error(`cfssl genkey -initca failed (${genkey.error?.message ?? genkey.status}): ${genkey.stderr}`);
  const json = spawnSync('cfssljson', ['-bare', join(dir, 'ca')], { input: genkey.stdout, encoding: 'utf8', timeout: 30_000 });
  if (json.status !== 0) throw new Error(`cfssljson -bare failed (${json.error?.message ?? json.status}): ${json.stderr}`);
  return { certFile: join(dir, 'ca.pem'), keyFile: join(dir, 'ca-key.pem') };
}

/** Split a PEM bundle into its CERTIFICATE blocks (each ending in a newline). */
export function splitPemCertificates(text) {
  return (
    text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)?.map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`)) ??
    []
  );
}

/**
 * @typedef {object} TrustFiles
 * @property {string} caBundle        shared ca-bundle.crt + the generated root (both servers)
 * @property {string} intBundle       shared int-bundle.crt, by path
 * @property {string} metadata        shared ca-bundle.crt.metadata, by path
 * @property {string} poolSmall       shared int-bundle + generated intermediate (pool-size "A")
 * @property {string} poolLarge       poolSmall + the generated pool intermediates (pool-size "B")
 * @property {number} poolSmallCount
 * @property {number} poolLargeCount
 */

/**
 * Write the trust files. The shared bundles are used by path where they can be; the generated root
 * must be trusted for the generated-PKI ops, so the ca-bundle is a combined copy — one file, given
 * to both servers.
 *
 * @param {object} options
 * @param {string} options.dir
 * @param {string} options.trustDir   e.g. /work/shared/trust
 * @param {{ root: BenchCertificate, intermediate: BenchCertificate }} options.pki
 * @param {string} [options.poolPem]  generated intermediates (omit to skip the pool files)
 * @returns {TrustFiles}
 */
export function writeTrustFiles({ dir, trustDir, pki, poolPem }) {
  const sharedCa = readFileSync(join(trustDir, 'ca-bundle.crt'), 'utf8');
  const sharedInt = readFileSync(join(trustDir, 'int-bundle.crt'), 'utf8');
  const caBundle = join(dir, 'ca-bundle-with-bench-root.crt');
  writeFileSync(caBundle, `${sharedCa.trimEnd()}\n${pki.root.pem}`);
  const files = {
    caBundle,
    intBundle: join(trustDir, 'int-bundle.crt'),
    metadata: join(trustDir, 'ca-bundle.crt.metadata'),
    poolSmall: '',
    poolLarge: '',
    poolSmallCount: 0,
    poolLargeCount: 0,
  };
  if (poolPem !== undefined) {
    // The leaf's intermediate lives in the pool (not in the request), so the pool is really searched.
    const small = `${sharedInt.trimEnd()}\n${pki.intermediate.pem}`;
    files.poolSmall = join(dir, 'int-bundle-small.crt');
    files.poolLarge = join(dir, 'int-bundle-large.crt');
    writeFileSync(files.poolSmall, small);
    writeFileSync(files.poolLarge, `${small}${poolPem}`);
    files.poolSmallCount = splitPemCertificates(small).length;
    files.poolLargeCount = files.poolSmallCount + splitPemCertificates(poolPem).length;
  }
  return files;
}
