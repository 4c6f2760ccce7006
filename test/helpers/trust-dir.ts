/**
 * The shared cfssl_trust data (`ca-bundle.crt`, `int-bundle.crt`, `ca-bundle.crt.metadata` and the
 * keystores it names), used in place and never copied into the repository. Where it is:
 * `$CERTSMITH_TRUST_DIR`, else `<repo>/../shared/trust` (CI clones the repository with `shared/`
 * beside it), else `/work/shared/trust`.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

function locateTrustDir(): string {
  const candidates = [
    process.env['CERTSMITH_TRUST_DIR'],
    fileURLToPath(new URL('../../../shared/trust', import.meta.url)),
    '/work/shared/trust',
  ];
  const found = candidates.find((dir): dir is string => typeof dir === 'string' && dir !== '' && existsSync(join(dir, 'ca-bundle.crt')));
  if (found === undefined) {
    throw new Error(`cfssl_trust data not found (looked in: ${candidates.filter(Boolean).join(', ')}); set CERTSMITH_TRUST_DIR`);
  }
  return found;
}

/** The trust directory (resolved once). */
export const TRUST_DIR = locateTrustDir();

/** The three files `cfssl serve` and certsmith take, as absolute paths. */
export const TRUST_FILES = {
  caBundle: join(TRUST_DIR, 'ca-bundle.crt'),
  intBundle: join(TRUST_DIR, 'int-bundle.crt'),
  /** Its keystore paths are relative to the trust directory, so it is always used from there. */
  metadata: join(TRUST_DIR, 'ca-bundle.crt.metadata'),
} as const;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Every PEM certificate block of a bundle file, in file order (each without trailing newline). */
export function readPemBlocks(file: string): string[] {
  return readFileSync(file, 'utf8').match(PEM_BLOCK) ?? [];
}

/** One certificate of a trust file, found by subject CommonName. */
export interface TrustCertificate {
  /** PEM with a trailing newline, as a client would send it. */
  pem: string;
  /** node:crypto's view of it (independent of the code under test). */
  x509: X509Certificate;
}

/** Every certificate of a bundle file, in file order. */
export function readTrustCertificates(file: string): TrustCertificate[] {
  return readPemBlocks(file).map((pem) => ({ pem: `${pem}\n`, x509: new X509Certificate(pem) }));
}

/** The certificates of `file` whose subject CN is exactly `commonName` (usually one). */
export function findTrustCertificates(file: string, commonName: string): TrustCertificate[] {
  return readTrustCertificates(file).filter(({ x509 }) => x509.subject.split('\n').includes(`CN=${commonName}`));
}

/** True when `cert` is valid at `now` (both ends inclusive). */
export function isCurrentlyValid(cert: X509Certificate, now = new Date()): boolean {
  return new Date(cert.validFrom) <= now && now <= new Date(cert.validTo);
}

/**
 * Write a bundle file that is a shared trust file plus extra PEM certificates (e.g. a generated test
 * root, so generated chains are trusted by certsmith and `cfssl serve` alike). Returns the path.
 */
export async function writeExtendedBundle(sharedFile: string | null, extraPems: readonly string[], target: string): Promise<string> {
  const base = sharedFile === null ? '' : readFileSync(sharedFile, 'utf8');
  const text = [base.trimEnd(), ...extraPems.map((pem) => pem.trim())].filter((part) => part !== '').join('\n') + '\n';
  await writeFile(target, text);
  return target;
}
