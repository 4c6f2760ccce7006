// @ts-check
/**
 * The seed corpus: the cfssl_trust bundles (read by path, never copied) and keys, CSRs, certificates
 * and PKCS#7 files generated now — RSA, ECDSA P-256/384/521 and Ed25519 keys in PKCS#8, PKCS#1 and
 * SEC 1, CSRs and certificates with every extension the parser decodes, made by the openssl CLI.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodePemBlocks, encodePem } from '@certsmith/x509-core';

/**
 * Where the cfssl_trust data lives: `$CERTSMITH_TRUST_DIR`, else `<repo>/../shared/trust` (CI clones
 * the repository with `shared/` beside it), else `/work/shared/trust`.
 */
export const TRUST_DIR =
  [process.env.CERTSMITH_TRUST_DIR, fileURLToPath(new URL('../../../../shared/trust', import.meta.url)), '/work/shared/trust'].find(
    (candidate) => candidate !== undefined && candidate !== '' && existsSync(join(candidate, 'ca-bundle.crt')),
  ) ?? '/work/shared/trust';

/**
 * @typedef {'certificate' | 'csr' | 'private-key' | 'pkcs7'} SeedKind
 * @typedef {{ kind: SeedKind, name: string, der: Uint8Array, label: string }} Seed
 * @typedef {{ seeds: Record<SeedKind, Seed[]>, all: Seed[], trustCertificates: number }} Corpus
 */

/** @param {string[]} args @param {string} [input] */
function openssl(args, input) {
  return execFileSync('openssl', args, { input, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** DER of the first PEM block of `pem`. @param {string} pem */
function derOf(pem) {
  const block = decodePemBlocks(pem)[0];
  if (block === undefined) throw new Error('no PEM block');
  return block.bytes;
}

const RICH_EXTENSIONS = [
  'basicConstraints = critical,CA:TRUE,pathlen:2',
  'keyUsage = critical,digitalSignature,keyAgreement,keyCertSign,cRLSign,decipherOnly',
  'extendedKeyUsage = serverAuth,clientAuth,1.2.3.4.5',
  'subjectAltName = DNS:example.com,DNS:*.example.com,IP:192.0.2.1,IP:2001:db8::1,IP:::ffff:1.2.3.4,email:a@example.com,URI:https://example.com/x,otherName:1.2.3.4;UTF8:hello,dirName:dir_sect,RID:1.2.3.4',
  'authorityInfoAccess = OCSP;URI:http://ocsp.example.com,caIssuers;URI:http://ca.example.com/ca.crt',
  'crlDistributionPoints = URI:http://crl.example.com/ca.crl',
  'subjectKeyIdentifier = hash',
  'authorityKeyIdentifier = keyid',
  '1.2.3.4.5.6 = critical,ASN1:UTF8String:custom',
  'certificatePolicies = 2.23.140.1.2.1,1.2.3.99',
  'nameConstraints = critical,permitted;DNS:example.com,excluded;IP:192.168.0.0/255.255.0.0,permitted;IP:2001:db8::/ffff:ffff::,permitted;email:example.com',
  '',
  '[dir_sect]',
  'C = US',
  'O = Dir Org',
].join('\n');

/** Generate keys, CSRs, certificates and PKCS#7 with node:crypto and the openssl CLI. @returns {Seed[]} */
function generatedSeeds() {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-fuzz-'));
  /** @type {Seed[]} */
  const seeds = [];
  try {
    const keys = [
      ['rsa-2048', generateKeyPairSync('rsa', { modulusLength: 2048 })],
      ['p256', generateKeyPairSync('ec', { namedCurve: 'P-256' })],
      ['p384', generateKeyPairSync('ec', { namedCurve: 'P-384' })],
      ['p521', generateKeyPairSync('ec', { namedCurve: 'P-521' })],
      ['ed25519', generateKeyPairSync('ed25519')],
    ];
    const extFile = join(dir, 'rich.ext');
    writeFileSync(extFile, RICH_EXTENSIONS);
    let caPath = '';
    let caKeyPath = '';
    for (const [name, pair] of /** @type {[string, import('node:crypto').KeyPairKeyObjectResult][]} */ (keys)) {
      const pkcs8 = /** @type {Buffer} */ (pair.privateKey.export({ type: 'pkcs8', format: 'der' }));
      seeds.push({ kind: 'private-key', name: `${name} PKCS#8`, der: new Uint8Array(pkcs8), label: 'PRIVATE KEY' });
      if (name.startsWith('rsa')) {
        const pkcs1 = /** @type {Buffer} */ (pair.privateKey.export({ type: 'pkcs1', format: 'der' }));
        seeds.push({ kind: 'private-key', name: `${name} PKCS#1`, der: new Uint8Array(pkcs1), label: 'RSA PRIVATE KEY' });
      } else if (name.startsWith('p')) {
        const sec1 = /** @type {Buffer} */ (pair.privateKey.export({ type: 'sec1', format: 'der' }));
        seeds.push({ kind: 'private-key', name: `${name} SEC 1`, der: new Uint8Array(sec1), label: 'EC PRIVATE KEY' });
      }
      const keyPath = join(dir, `${name}.key`);
      writeFileSync(keyPath, /** @type {string} */ (pair.privateKey.export({ type: 'pkcs8', format: 'pem' })));
      const csrPath = join(dir, `${name}.csr`);
      openssl(['req', '-new', '-key', keyPath, '-out', csrPath, '-subj', `/C=US/O=Fuzz Org/OU=Unit+CN=${name}.example/emailAddress=x@example.com`, '-multivalue-rdn',
        '-addext', `subjectAltName=DNS:${name}.example,IP:10.0.0.1,IP:::1,email:a@example.com,URI:spiffe://example.org/x`,
        '-addext', 'keyUsage=critical,digitalSignature', '-addext', 'extendedKeyUsage=serverAuth', '-addext', 'basicConstraints=CA:FALSE',
        '-addext', '1.2.3.4=ASN1:NULL']);
      seeds.push({ kind: 'csr', name: `${name} CSR`, der: derOf(readFileSync(csrPath, 'utf8')), label: 'CERTIFICATE REQUEST' });
      const certPath = join(dir, `${name}.pem`);
      if (caPath === '') {
        openssl(['req', '-x509', '-key', keyPath, '-out', certPath, '-days', '30', '-subj', `/C=US/O=Fuzz CA/CN=${name} CA/emailAddress=ca@example.com`, '-extensions', 'v3', '-config', writeConfig(dir, RICH_EXTENSIONS)]);
        caPath = certPath;
        caKeyPath = keyPath;
      } else {
        openssl(['x509', '-req', '-in', csrPath, '-CA', caPath, '-CAkey', caKeyPath, '-set_serial', name === 'p384' ? '-5' : '0x00ff01', '-out', certPath, '-extfile', extFile, '-days', name === 'p521' ? '40000' : '30']);
      }
      seeds.push({ kind: 'certificate', name: `${name} certificate`, der: derOf(readFileSync(certPath, 'utf8')), label: 'CERTIFICATE' });
    }
    const p7Path = join(dir, 'chain.p7b');
    openssl(['crl2pkcs7', '-nocrl', '-certfile', caPath, '-certfile', join(dir, 'p256.pem'), '-out', p7Path]);
    seeds.push({ kind: 'pkcs7', name: 'generated PKCS#7', der: derOf(readFileSync(p7Path, 'utf8')), label: 'PKCS7' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return seeds;
}

/** @param {string} dir @param {string} extensions */
function writeConfig(dir, extensions) {
  const path = join(dir, 'openssl.cnf');
  const [v3, ...rest] = extensions.split('\n\n');
  writeFileSync(path, `[req]\ndistinguished_name = dn\n[dn]\n[v3]\n${v3}\n\n${rest.join('\n\n')}\n`);
  return path;
}

/** PKCS#7 seeds made of trust certificates (a few certs each). @param {Uint8Array[]} ders */
function trustPkcs7Seeds(ders) {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-fuzz-p7-'));
  /** @type {Seed[]} */
  const seeds = [];
  try {
    for (let i = 0; i < 4 && i * 3 + 2 < ders.length; i++) {
      const file = join(dir, `${i}.pem`);
      const pem = ders
        .slice(i * 3, i * 3 + 3)
        .map((der) => encodePem('CERTIFICATE', der))
        .join('');
      writeFileSync(file, pem);
      const out = openssl(['crl2pkcs7', '-nocrl', '-certfile', file, '-outform', 'DER']);
      seeds.push({ kind: 'pkcs7', name: `trust PKCS#7 ${i}`, der: new Uint8Array(out), label: 'PKCS7' });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return seeds;
}

/** @type {Corpus | null} */
let corpus = null;

/**
 * The generated seeds: read from `file` when it exists (so a later run or a `--replay` sees the same
 * keys and certificates — Node cannot generate keys from a seed), else generated now and, when `file`
 * is given, saved there.
 * @param {string | undefined} file @returns {Seed[]}
 */
function generatedOrSaved(file) {
  if (file !== undefined && existsSync(file)) {
    /** @type {{ kind: SeedKind, name: string, der: string, label: string }[]} */
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    return saved.map((seed) => ({ ...seed, der: new Uint8Array(Buffer.from(seed.der, 'base64')) }));
  }
  const seeds = generatedSeeds();
  if (file !== undefined) writeFileSync(file, JSON.stringify(seeds.map((seed) => ({ ...seed, der: Buffer.from(seed.der).toString('base64') }))));
  return seeds;
}

/**
 * Build (once per process) the corpus: every certificate of `ca-bundle.crt` and `int-bundle.crt`
 * plus the generated seeds (see {@link generatedOrSaved}; `CERTSMITH_FUZZ_CORPUS` names the file).
 * Throws when the trust data is missing: the seeds are the point.
 * @returns {Corpus}
 */
export function loadCorpus() {
  if (corpus !== null) return corpus;
  /** @type {Record<SeedKind, Seed[]>} */
  const seeds = { certificate: [], csr: [], 'private-key': [], pkcs7: [] };
  for (const file of ['ca-bundle.crt', 'int-bundle.crt']) {
    const path = join(TRUST_DIR, file);
    if (!existsSync(path)) throw new Error(`cfssl_trust file ${path} is missing (set CERTSMITH_TRUST_DIR)`);
    for (const block of decodePemBlocks(readFileSync(path, 'utf8'))) {
      seeds.certificate.push({ kind: 'certificate', name: `${file} #${seeds.certificate.length}`, der: block.bytes, label: 'CERTIFICATE' });
    }
  }
  const trustCertificates = seeds.certificate.length;
  const generated = generatedOrSaved(process.env.CERTSMITH_FUZZ_CORPUS || undefined);
  for (const seed of [...generated, ...trustPkcs7Seeds(seeds.certificate.map((seed) => seed.der))]) seeds[seed.kind].push(seed);
  corpus = { seeds, all: Object.values(seeds).flat(), trustCertificates };
  return corpus;
}
