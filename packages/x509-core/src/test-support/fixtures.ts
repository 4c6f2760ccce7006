/**
 * Test fixtures generated at test time (never pasted blobs): keys from node:crypto, certificates,
 * CSRs, PKCS#7 and encrypted keys from the `openssl` CLI. Excluded from the build (tsconfig).
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPair, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

/** A private-arc OID usable in `-subj` as `/testAttribute=value` (custom subject attribute). */
export const TEST_ATTRIBUTE_OID = '1.3.6.1.4.1.55555.1';

/** Key kinds the tests use. */
export type KeyKind = 'rsa1024' | 'rsa2048' | 'rsa3072' | 'p256' | 'p384' | 'p521' | 'ed25519' | 'dsa';

/** A generated key pair with its PKCS#8 PEM written to disk for openssl. */
export interface TestKey {
  kind: KeyKind;
  privateKey: KeyObject;
  publicKey: KeyObject;
  pkcs8Pem: string;
  path: string;
}

let directory: string | null = null;
let counter = 0;

/**
 * A per-test-file scratch directory, removed after the file's tests. The `afterAll` is registered
 * when this module is imported (collection time), which is when vitest accepts file-level hooks;
 * `process.on('exit')` does not fire reliably in vitest workers.
 */
afterAll(() => {
  if (directory !== null) rmSync(directory, { recursive: true, force: true });
  directory = null;
});

/** The scratch directory, created on first use. */
export function scratchDir(): string {
  directory ??= mkdtempSync(join(tmpdir(), 'x509-core-test-'));
  return directory;
}

/** A fresh file path in the scratch directory. */
export function scratchPath(name: string): string {
  counter += 1;
  return join(scratchDir(), `${counter}-${name}`);
}

/** Run openssl with arguments; returns stdout as a Buffer. */
export function openssl(args: string[], input?: string | Uint8Array): Buffer {
  return execFileSync('openssl', args, { input, stdio: ['pipe', 'pipe', 'pipe'] });
}

const keys = new Map<KeyKind, TestKey>();

type KeyGenArgs = [type: 'rsa' | 'ec' | 'ed25519' | 'dsa', options: Record<string, unknown>];

function keyGenArgs(kind: KeyKind): KeyGenArgs {
  switch (kind) {
    case 'rsa1024':
      // Only as "some other RSA key" in negative tests: cheap to generate.
      return ['rsa', { modulusLength: 1024 }];
    case 'rsa2048':
      return ['rsa', { modulusLength: 2048 }];
    case 'rsa3072':
      return ['rsa', { modulusLength: 3072 }];
    case 'p256':
      return ['ec', { namedCurve: 'P-256' }];
    case 'p384':
      return ['ec', { namedCurve: 'P-384' }];
    case 'p521':
      return ['ec', { namedCurve: 'P-521' }];
    case 'ed25519':
      return ['ed25519', {}];
    case 'dsa':
      return ['dsa', { modulusLength: 1024, divisorLength: 160 }];
  }
}

function remember(kind: KeyKind, pair: { privateKey: KeyObject; publicKey: KeyObject }): TestKey {
  const pkcs8Pem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const path = scratchPath(`${kind}.key`);
  writeFileSync(path, pkcs8Pem);
  const key = { kind, ...pair, pkcs8Pem, path };
  keys.set(kind, key);
  return key;
}

/**
 * Generate the given key kinds concurrently on libuv's thread pool (call from `beforeAll`): RSA
 * generation dominates fixture time, and this keeps the second core busy while tests start.
 */
export async function prepareKeys(kinds: KeyKind[]): Promise<void> {
  await Promise.all(
    kinds
      .filter((kind) => !keys.has(kind))
      .map(
        (kind) =>
          new Promise<void>((resolve, reject) => {
            const [type, options] = keyGenArgs(kind);
            const done = (error: Error | null, publicKey: KeyObject, privateKey: KeyObject): void => {
              if (error) reject(error);
              else {
                if (!keys.has(kind)) remember(kind, { publicKey, privateKey });
                resolve();
              }
            };
            (generateKeyPair as unknown as (t: string, o: object, cb: typeof done) => void)(type, options, done);
          }),
      ),
  );
}

/** A key pair of `kind`, generated once per test file (synchronously unless {@link prepareKeys} ran). */
export function testKey(kind: KeyKind): TestKey {
  const cached = keys.get(kind);
  if (cached) return cached;
  const [type, options] = keyGenArgs(kind);
  const pair = (generateKeyPairSync as unknown as (t: string, o: object) => { privateKey: KeyObject; publicKey: KeyObject })(type, options);
  return remember(kind, pair);
}

/** Options of {@link makeCertificate}. */
export interface CertificateOptions {
  key: TestKey;
  /** openssl `-subj` form, e.g. `/C=US/O=Example/CN=leaf`. */
  subject: string;
  /** Allow `+` multi-valued RDNs in `subject`. */
  multivalueRdn?: boolean;
  /** Body of the `[ext]` config section (one `name = value` per line). */
  extensions?: string;
  /** Issuer; self-signed when absent. */
  issuer?: { certPath: string; key: TestKey };
  /** Digest (`sha256`, `sha384`, `sha1`…); omitted for Ed25519. */
  digest?: string;
  /** Extra `-sigopt` values, e.g. `rsa_padding_mode:pss`. */
  sigopts?: string[];
  /** Serial as hex (without 0x). */
  serialHex?: string;
  days?: number;
}

/** A generated certificate: PEM, DER and file path. */
export interface TestCertificate {
  pem: string;
  der: Uint8Array;
  path: string;
}

/** Build a certificate with `openssl req -x509` (self-signed or `-CA` signed). */
export function makeCertificate(options: CertificateOptions): TestCertificate {
  const config = scratchPath('openssl.cnf');
  writeFileSync(
    config,
    ['oid_section = new_oids', '[new_oids]', `testAttribute = ${TEST_ATTRIBUTE_OID}`, '[req]', 'distinguished_name = dn', 'prompt = no', '[dn]', 'CN = unused', '[ext]', options.extensions ?? 'basicConstraints = CA:FALSE', '', '[dir_sect]', 'C = US', 'O = Directory Name', 'CN = dir', ''].join('\n'),
  );
  const out = scratchPath('cert.pem');
  const args = ['req', '-x509', '-new', '-key', options.key.path, '-subj', options.subject, '-config', config, '-extensions', 'ext'];
  args.push('-days', String(options.days ?? 30), '-set_serial', `0x${options.serialHex ?? randomBytes(8).toString('hex')}`, '-out', out);
  if (options.multivalueRdn) args.push('-multivalue-rdn');
  if (options.digest) args.push(`-${options.digest}`);
  for (const opt of options.sigopts ?? []) args.push('-sigopt', opt);
  if (options.issuer) args.push('-CA', options.issuer.certPath, '-CAkey', options.issuer.key.path);
  openssl(args);
  const pem = readFileSync(out, 'utf8');
  // Plain base64 of the single PEM block (not via the parser under test).
  const der = new Uint8Array(Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64'));
  return { pem, der, path: out };
}

/** cfssl_trust data, used in place: the `shared/` folder beside the repository (CI), or /work/shared. */
export const TRUST_DIR = [process.env.CERTSMITH_TRUST_DIR, fileURLToPath(new URL('../../../../../shared/trust', import.meta.url)), '/work/shared/trust'].find(
  (dir): dir is string => typeof dir === 'string' && existsSync(dir),
) as string;

/**
 * Bytes every reader of one DER certificate refuses with 1003, each made from a good certificate's
 * DER: `[what, mangle]` for `it.each`.
 */
export const MALFORMED_CERTIFICATE_CASES: ReadonlyArray<readonly [string, (der: Uint8Array) => Uint8Array]> = [
  ['trailing bytes after the certificate', (der) => Buffer.concat([der, Buffer.of(0)])],
  ['a truncated certificate', (der) => der.subarray(0, der.length - 10)],
  ['a private key instead of a certificate', () => testKey('p256').privateKey.export({ format: 'der', type: 'pkcs8' })],
];

/** PKCS#7 SignedData (PEM) carrying the given certificate files, optionally with a CRL. */
export function makePkcs7(certPaths: string[], options: { crlPath?: string; outform?: 'PEM' | 'DER' } = {}): Buffer {
  const args = ['crl2pkcs7'];
  if (options.crlPath) args.push('-in', options.crlPath);
  else args.push('-nocrl');
  for (const path of certPaths) args.push('-certfile', path);
  args.push('-outform', options.outform ?? 'PEM');
  return openssl(args);
}

/** An empty CRL issued by a CA (for PKCS#7 with CRLs). */
export function makeCrl(ca: { certPath: string; key: TestKey }): string {
  const dir = scratchPath('ca');
  const index = `${dir}-index.txt`;
  writeFileSync(index, '');
  const config = scratchPath('ca.cnf');
  writeFileSync(
    config,
    ['[ca]', 'default_ca = test', '[test]', `database = ${index}`, 'default_md = sha256', 'default_crl_days = 30', `crlnumber = ${dir}-crlnumber`, ''].join('\n'),
  );
  writeFileSync(`${dir}-crlnumber`, '01\n');
  const out = scratchPath('crl.pem');
  openssl(['ca', '-gencrl', '-config', config, '-cert', ca.certPath, '-keyfile', ca.key.path, '-out', out]);
  return out;
}

/** Write text to a scratch file and return its path. */
export function writeScratch(name: string, content: string | Uint8Array): string {
  const path = scratchPath(name);
  writeFileSync(path, content);
  return path;
}

/**
 * A certificate index's fields as hex (null where absent), for comparing what two readers found
 * (certificate-index.test.ts, certificate-index-scan.test.ts).
 */
export function certificateIndexHex(index: {
  subjectDer: Uint8Array;
  issuerDer: Uint8Array;
  subjectKeyId: Uint8Array | null;
  authorityKeyId: Uint8Array | null;
  signature: Uint8Array;
  spki: Uint8Array;
}): Record<'subject' | 'issuer' | 'ski' | 'aki' | 'signature' | 'spki', string | null> {
  const hex = (bytes: Uint8Array | null): string | null => (bytes === null ? null : Buffer.from(bytes).toString('hex'));
  return {
    subject: hex(index.subjectDer),
    issuer: hex(index.issuerDer),
    ski: hex(index.subjectKeyId),
    aki: hex(index.authorityKeyId),
    signature: hex(index.signature),
    spki: hex(index.spki),
  };
}
