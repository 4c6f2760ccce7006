/**
 * A development CA for servers started without one: an ECDSA P-256 self-signed CA created on first
 * start in `<dataDir>/dev-ca/` (key file mode 0600, directory 0700) and reused afterwards. The
 * certificate follows CFSSL's init_ca profile (behaviour doc 3.10, 7): key usage certSign + cRLSign
 * (critical), CA:TRUE (critical, no path length), SKI, no AKI, 5 years (43800h), notBefore = now
 * rounded to the minute minus 5 minutes, ECDSA-SHA256. It is built here with the DER writer because
 * plugins stand on the contract and x509-core only.
 */
import { generateKeyPair, randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { chmod, mkdir, mkdtemp, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { signWithKeyObject } from '@certsmith/signer-api';
import {
  CertsmithError,
  buildSelfSignedCaTbs,
  ErrorCode,
  derBitString,
  derDirectoryString,
  derOid,
  derSequence,
  derSetOf,
  encodePem,
} from '@certsmith/x509-core';

const generateKeyPairAsync = promisify(generateKeyPair);

/** Where the development CA lives and whether this call created it. */
export interface DevelopmentCa {
  /** Absolute path of the CA certificate PEM. */
  certFile: string;
  /** Absolute path of the CA key PEM (mode 0600). */
  keyFile: string;
  /** True when this call generated the CA, false when an existing one was reused. */
  created: boolean;
}

/** Options of {@link createDevelopmentCa}. */
export interface DevelopmentCaOptions {
  /** Subject common name (default `certsmith development CA`). */
  commonName?: string;
  /** Clock, for tests. */
  now?: () => Date;
}

const FIVE_YEARS_MS = 43_800 * 3_600_000;

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Write a new file with `mode`, flushed to disk. */
async function writeNewFile(path: string, content: string, mode: number): Promise<void> {
  const handle = await open(path, 'wx', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Build the self-signed CA certificate DER for `key`. */
export async function buildSelfSignedCaCertificate(key: { privateKey: KeyObject; publicKey: KeyObject }, commonName: string, now: Date): Promise<Uint8Array> {
  const spki = new Uint8Array(key.publicKey.export({ type: 'spki', format: 'der' }));
  const name = derSequence(
    derSetOf([derSequence(derOid('2.5.4.10'), derDirectoryString('certsmith'))]),
    derSetOf([derSequence(derOid('2.5.4.3'), derDirectoryString(commonName))]),
  );
  const serial = randomBytes(20);
  serial[0] = (serial[0] as number) & 0x7f;
  const notBefore = new Date(Math.round(now.getTime() / 60_000) * 60_000 - 5 * 60_000);
  const notAfter = new Date(notBefore.getTime() + FIVE_YEARS_MS);
  const algorithm = derSequence(derOid('1.2.840.10045.4.3.2'));
  const tbs = buildSelfSignedCaTbs({ name, spki, signatureAlgorithm: algorithm, serial, notBefore, notAfter });
  const signature = await signWithKeyObject(key.privateKey, tbs, 'ECDSA-SHA256');
  return derSequence(tbs, algorithm, derBitString(signature));
}

/**
 * Return the development CA under `dataDir`, creating it on first use. Concurrent first starts are
 * safe (the directory appears atomically; the loser of a race reuses the winner's CA).
 * Throws 2000 when only one of the two files exists (a damaged directory the user must clear).
 */
export async function createDevelopmentCa(dataDir: string, options: DevelopmentCaOptions = {}): Promise<DevelopmentCa> {
  const directory = join(dataDir, 'dev-ca');
  const certFile = join(directory, 'ca.pem');
  const keyFile = join(directory, 'ca-key.pem');
  const [haveCert, haveKey] = await Promise.all([exists(certFile), exists(keyFile)]);
  if (haveCert && haveKey) return { certFile, keyFile, created: false };
  if (haveCert !== haveKey) {
    throw new CertsmithError(ErrorCode.PrivateKeyUnknown, `development CA in ${directory} is incomplete (one of ca.pem, ca-key.pem is missing); remove the directory to recreate it`);
  }
  const key = await generateKeyPairAsync('ec', { namedCurve: 'P-256' });
  const der = await buildSelfSignedCaCertificate(key, options.commonName ?? 'certsmith development CA', (options.now ?? (() => new Date()))());
  const keyPem = key.privateKey.export({ type: 'sec1', format: 'pem' }) as string;
  // Both files are written into a private temporary directory that is then renamed into place in
  // one step, so a concurrent first start can never pair one process's key with another's cert.
  await mkdir(dataDir, { recursive: true });
  const staging = await mkdtemp(join(dataDir, '.dev-ca-'));
  try {
    await chmod(staging, 0o700);
    await writeNewFile(join(staging, 'ca-key.pem'), keyPem, 0o600);
    await writeNewFile(join(staging, 'ca.pem'), encodePem('CERTIFICATE', der), 0o644);
    try {
      await rename(staging, directory);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // Another process won the race: use its CA.
      if ((await exists(certFile)) && (await exists(keyFile))) return { certFile, keyFile, created: false };
      throw error;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return { certFile, keyFile, created: true };
}

/** Read a development CA's PEM files (for callers that want the texts rather than paths). */
export async function readDevelopmentCa(ca: DevelopmentCa): Promise<{ certificatePem: string; keyPem: string }> {
  const [certificatePem, keyPem] = await Promise.all([readFile(ca.certFile, 'utf8'), readFile(ca.keyFile, 'utf8')]);
  return { certificatePem, keyPem };
}
