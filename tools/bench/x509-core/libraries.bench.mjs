#!/usr/bin/env node
/**
 * Why x509-core's DER reader and writer stay hand-written (issue 18 item 5): the same work done by
 * the well-kept libraries, on the same inputs. Build first (`npm run build`), then, through the
 * machine's benchmark lock:
 *
 *   /work/bin/quiet node tools/bench/x509-core/libraries.bench.mjs [--passes 7]
 *
 * Parsing — every certificate of the cfssl_trust `ca-bundle.crt` and `int-bundle.crt` (read by path):
 *   - certsmith `parseCertificate` (names as text, validity, key facts, SAN/KU/EKU/BC/AIA/CRL DP/
 *     policies/name constraints/key identifiers decoded);
 *   - `@peculiar/asn1-schema` + `@peculiar/asn1-x509`: `AsnConvert.parse(der, Certificate)` alone, and
 *     with the same extensions decoded (`AsnConvert.parse(extnValue, <type>)`);
 *   - `@peculiar/x509` `new X509Certificate(der)` (asn1-schema underneath, extensions decoded);
 *   - `asn1js` + `pkijs`: `Certificate.fromBER(der)` (extensions decoded into `parsedValue`);
 *   - Node's `X509Certificate` (OpenSSL), for scale.
 * Building — a typical TLS leaf (C/ST/L/O/CN subject, 3 DNS SANs + 1 IP, KU, EKU, BC, SKI, AKI, AIA,
 *   CRL DP, policy) around an ECDSA P-256 key, with a fixed signature so only encoding is measured:
 *   the DER-writer calls certsmith's issuer makes, against `@peculiar/x509`
 *   `X509CertificateGenerator.create` with the same content (and a fixed signature).
 *
 * Each figure is the median of several passes after warm-up, in µs per certificate, wall and process
 * CPU time; CPU time is the one to read on a shared machine.
 */
import { X509Certificate as NodeX509Certificate, createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import 'reflect-metadata';

const here = fileURLToPath(new URL('.', import.meta.url));
const core = await import(join(here, '../../../packages/x509-core/dist/index.js'));
const { AsnConvert } = await import('@peculiar/asn1-schema');
const asnX509 = await import('@peculiar/asn1-x509');
const peculiar = await import('@peculiar/x509');
const asn1js = await import('asn1js');
const pkijs = await import('pkijs');

const { values } = parseArgs({ options: { passes: { type: 'string', default: '7' }, trust: { type: 'string', default: [process.env.CERTSMITH_TRUST_DIR, join(here, '../../../../shared/trust')].find((dir) => dir && existsSync(join(dir, 'ca-bundle.crt'))) ?? '/work/shared/trust' } } });
const PASSES = Number(values.passes);

const ders = ['ca-bundle.crt', 'int-bundle.crt'].flatMap((file) => core.decodePemBlocks(readFileSync(join(values.trust, file), 'utf8')).map((block) => block.bytes));

const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/** Median µs per operation (wall and CPU) of `fn` doing `ops` operations; async functions are awaited. */
async function measure(fn, ops, passes = PASSES, warmup = 2) {
  for (let i = 0; i < warmup; i++) await fn();
  const wall = [];
  const cpu = [];
  for (let i = 0; i < passes; i++) {
    const c0 = cpuMicros();
    const t0 = process.hrtime.bigint();
    await fn();
    wall.push(Number(process.hrtime.bigint() - t0) / 1e3 / ops);
    cpu.push((cpuMicros() - c0) / ops);
  }
  const median = (list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)];
  return { wall: median(wall), cpu: median(cpu) };
}

// The extensions certsmith decodes, by OID, with the asn1-x509 type that decodes each.
const PECULIAR_EXTENSION_TYPES = new Map([
  [asnX509.id_ce_subjectAltName, asnX509.SubjectAlternativeName],
  [asnX509.id_ce_basicConstraints, asnX509.BasicConstraints],
  [asnX509.id_ce_keyUsage, asnX509.KeyUsage],
  [asnX509.id_ce_extKeyUsage, asnX509.ExtendedKeyUsage],
  [asnX509.id_pe_authorityInfoAccess, asnX509.AuthorityInfoAccessSyntax],
  [asnX509.id_ce_cRLDistributionPoints, asnX509.CRLDistributionPoints],
  [asnX509.id_ce_certificatePolicies, asnX509.CertificatePolicies],
  [asnX509.id_ce_nameConstraints, asnX509.NameConstraints],
  [asnX509.id_ce_subjectKeyIdentifier, asnX509.SubjectKeyIdentifier],
  [asnX509.id_ce_authorityKeyIdentifier, asnX509.AuthorityKeyIdentifier],
]);

/** Only certificates every parser accepts are timed, so each does the same work. */
const usable = ders.filter((der) => {
  try {
    core.parseCertificate(der);
    AsnConvert.parse(der, asnX509.Certificate);
    new peculiar.X509Certificate(der);
    pkijs.Certificate.fromBER(der);
    return true;
  } catch {
    return false;
  }
});

function peculiarWithExtensions(der) {
  const cert = AsnConvert.parse(der, asnX509.Certificate);
  for (const extension of cert.tbsCertificate.extensions ?? []) {
    const type = PECULIAR_EXTENSION_TYPES.get(extension.extnID);
    if (type) AsnConvert.parse(extension.extnValue, type);
  }
  return cert;
}

const parseRows = [
  ['certsmith parseCertificate', await measure(() => { for (const der of usable) core.parseCertificate(der); }, usable.length)],
  ['@peculiar/asn1-schema parse (no extension values)', await measure(() => { for (const der of usable) AsnConvert.parse(der, asnX509.Certificate); }, usable.length)],
  ['@peculiar/asn1-schema parse + extensions', await measure(() => { for (const der of usable) peculiarWithExtensions(der); }, usable.length)],
  ['@peculiar/x509 new X509Certificate', await measure(() => { for (const der of usable) new peculiar.X509Certificate(der); }, usable.length)],
  ['asn1js + pkijs Certificate.fromBER', await measure(() => { for (const der of usable) pkijs.Certificate.fromBER(der); }, usable.length)],
  ['node:crypto X509Certificate (OpenSSL)', await measure(() => { for (const der of usable) new NodeX509Certificate(der); }, usable.length, Math.min(PASSES, 3), 1)],
];

// --- Building ------------------------------------------------------------------------------------

const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
const keyId = createHash('sha1').update(spki.subarray(spki.length - 65)).digest();
const authorityKeyId = createHash('sha1').update('bench issuer').digest();
const serial = Uint8Array.from(Buffer.from('4b1f0c9a7d3e2f61a5c8b90d1e2f3a4b5c6d7e8f', 'hex'));
const notBefore = new Date('2026-01-01T00:00:00Z');
const notAfter = new Date('2027-01-01T00:00:00Z');
const fixedSignatureRaw = new Uint8Array(64).fill(0x5a); // r‖s, what WebCrypto returns for P-256
const ecdsaSha256 = core.derSequence(core.derOid('1.2.840.10045.4.3.2'));
const dns = ['www.example.com', 'example.com', 'api.example.com'];
const issuerName = [['2.5.4.6', 'US'], ['2.5.4.10', 'Bench CA Inc'], ['2.5.4.3', 'Bench Issuing CA']];
const subjectName = [['2.5.4.6', 'US'], ['2.5.4.8', 'California'], ['2.5.4.7', 'San Francisco'], ['2.5.4.10', 'Example Inc'], ['2.5.4.3', 'www.example.com']];

/** The certificate the issuer writes for a newcert, with x509-core's DER writer (same calls). */
function buildWithDerWriter() {
  const {
    derSequence, derSetOf, derOid, derDirectoryString, derInteger, derExplicit, derImplicit, derTime, derBitString,
    derNamedBitString, derOctetString, derBoolean, derExtension, encodeIa5String,
  } = core;
  const name = (attributes) => derSequence(...attributes.map(([oid, value]) => derSetOf([derSequence(derOid(oid), derDirectoryString(value))])));
  const uri = (url) => derImplicit(6, encodeIa5String(url), false);
  const sans = derSequence(...dns.map((host) => derImplicit(2, encodeIa5String(host), false)), derImplicit(7, Uint8Array.of(192, 0, 2, 10), false));
  const extensions = [
    derExtension('2.5.29.15', true, derNamedBitString(0b101)),
    derExtension('2.5.29.37', false, derSequence(derOid('1.3.6.1.5.5.7.3.1'), derOid('1.3.6.1.5.5.7.3.2'))),
    derExtension('2.5.29.19', true, derSequence()),
    derExtension('2.5.29.14', false, derOctetString(keyId)),
    derExtension('2.5.29.35', false, derSequence(derImplicit(0, authorityKeyId, false))),
    derExtension('1.3.6.1.5.5.7.1.1', false, derSequence(
      derSequence(derOid('1.3.6.1.5.5.7.48.1'), uri('http://ocsp.example.com')),
      derSequence(derOid('1.3.6.1.5.5.7.48.2'), uri('http://certs.example.com/ca.crt')),
    )),
    derExtension('2.5.29.17', false, sans),
    derExtension('2.5.29.31', false, derSequence(derSequence(derExplicit(0, core.derTlv(0xa0, uri('http://crl.example.com/ca.crl')))))),
    derExtension('2.5.29.32', false, derSequence(derSequence(derOid('2.23.140.1.2.2')))),
  ];
  void derBoolean;
  const tbs = derSequence(
    derExplicit(0, derInteger(2)),
    derInteger(serial),
    ecdsaSha256,
    name(issuerName),
    derSequence(derTime(notBefore), derTime(notAfter)),
    name(subjectName),
    spki,
    derExplicit(3, derSequence(...extensions)),
  );
  const signature = derSequence(derInteger(fixedSignatureRaw.subarray(0, 32)), derInteger(fixedSignatureRaw.subarray(32)));
  return derSequence(tbs, ecdsaSha256, derBitString(signature));
}

const peculiarName = (attributes) => attributes.map(([oid, value]) => ({ [oid]: [value] }));

/** The same certificate with @peculiar/x509 (fixed signature: no WebCrypto call). */
async function buildWithPeculiar() {
  const { X509CertificateGenerator, BasicConstraintsExtension, KeyUsagesExtension, KeyUsageFlags, ExtendedKeyUsageExtension,
    SubjectKeyIdentifierExtension, AuthorityKeyIdentifierExtension, AuthorityInfoAccessExtension, SubjectAlternativeNameExtension,
    CRLDistributionPointsExtension, CertificatePolicyExtension } = peculiar;
  const cert = await X509CertificateGenerator.create({
    serialNumber: Buffer.from(serial).toString('hex'),
    subject: peculiarName(subjectName),
    issuer: peculiarName(issuerName),
    notBefore,
    notAfter,
    publicKey: spki,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    signature: fixedSignatureRaw,
    extensions: [
      new KeyUsagesExtension(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment, true),
      new ExtendedKeyUsageExtension(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']),
      new BasicConstraintsExtension(false, undefined, true),
      new SubjectKeyIdentifierExtension(keyId.toString('hex')),
      new AuthorityKeyIdentifierExtension(authorityKeyId.toString('hex')),
      new AuthorityInfoAccessExtension({ ocsp: ['http://ocsp.example.com'], caIssuers: ['http://certs.example.com/ca.crt'] }),
      new SubjectAlternativeNameExtension([...dns.map((value) => ({ type: 'dns', value })), { type: 'ip', value: '192.0.2.10' }]),
      new CRLDistributionPointsExtension(['http://crl.example.com/ca.crl']),
      new CertificatePolicyExtension(['2.23.140.1.2.2']),
    ],
  });
  return new Uint8Array(cert.rawData);
}

// Both must build a certificate certsmith parses with the same facts, or the comparison is void.
const ours = core.parseCertificate(buildWithDerWriter());
const theirs = core.parseCertificate(await buildWithPeculiar());
for (const field of ['subjectAltNames', 'keyUsage', 'extKeyUsage', 'ocspUrls', 'caIssuerUrls', 'crlDistributionPoints', 'certificatePolicies', 'basicConstraints']) {
  if (JSON.stringify(ours[field]) !== JSON.stringify(theirs[field])) throw new Error(`the two builders disagree on ${field}`);
}
if (ours.extensions.length !== theirs.extensions.length) throw new Error('the two builders wrote different extension counts');

const BUILD_OPS = 2000;
const buildRows = [
  ['certsmith DER writer (issuer calls)', await measure(() => { for (let i = 0; i < BUILD_OPS; i++) buildWithDerWriter(); }, BUILD_OPS)],
  ['@peculiar/x509 X509CertificateGenerator.create', await measure(async () => { for (let i = 0; i < BUILD_OPS / 10; i++) await buildWithPeculiar(); }, BUILD_OPS / 10)],
];

const versions = Object.fromEntries(
  ['@peculiar/asn1-schema', '@peculiar/asn1-x509', '@peculiar/x509', 'asn1js', 'pkijs'].map((name) => [name, JSON.parse(readFileSync(join(here, '../../../node_modules', name, 'package.json'), 'utf8')).version]),
);
console.log(`node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown cpu'}), median of ${PASSES} passes`);
console.log(`libraries: ${Object.entries(versions).map(([name, version]) => `${name} ${version}`).join(', ')}`);
console.log(`\nparse, per certificate (${usable.length} of the ${ders.length} cfssl_trust certificates every parser accepts):`);
const base = parseRows[0][1].cpu;
for (const [label, { wall, cpu }] of parseRows) console.log(`  ${label.padEnd(52)} ${wall.toFixed(1).padStart(8)} µs wall ${cpu.toFixed(1).padStart(8)} µs cpu  ${(cpu / base).toFixed(1).padStart(6)}×`);
console.log('\nbuild a TLS leaf certificate (fixed signature), per certificate:');
const buildBase = buildRows[0][1].cpu;
for (const [label, { wall, cpu }] of buildRows) console.log(`  ${label.padEnd(52)} ${wall.toFixed(1).padStart(8)} µs wall ${cpu.toFixed(1).padStart(8)} µs cpu  ${(cpu / buildBase).toFixed(1).padStart(6)}×`);
