/**
 * Test helpers that check certsmith's output with an independent implementation: the openssl CLI
 * (and Node's X509Certificate). Every CA used by the tests is generated here at test time.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { SignatureAlgorithm, Signer } from '@certsmith/signer-api';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import { decodePemBlock } from '@certsmith/x509-core';

/** Run openssl; returns stdout (stderr folded in on failure). */
export function openssl(args: string[], input?: string): string {
  return execFileSync('openssl', args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

/** A scratch directory removed by the returned cleanup function. */
export function scratchDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-issuer-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** CA key kinds the tests use. */
export type CaKind = 'P-256' | 'P-384' | 'P-521' | 'RSA-2048' | 'RSA-3072' | 'Ed25519';

const KEY_ARGS: Record<CaKind, string[]> = {
  'P-256': ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  'P-384': ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  'P-521': ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-521'],
  'RSA-2048': ['-newkey', 'rsa:2048'],
  'RSA-3072': ['-newkey', 'rsa:3072'],
  Ed25519: ['-newkey', 'ed25519'],
};

/** A CA made by openssl. */
export interface TestCa {
  certPem: string;
  keyPem: string;
  certFile: string;
  keyFile: string;
}

/** Create a self-signed CA with openssl in `dir` (CA:TRUE, keyCertSign, SKI). */
export function makeCa(dir: string, kind: CaKind, options: { name?: string; pathlen?: number } = {}): TestCa {
  const name = options.name ?? `ca-${kind}`;
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}-key.pem`);
  const constraints = options.pathlen === undefined ? 'critical,CA:TRUE' : `critical,CA:TRUE,pathlen:${options.pathlen}`;
  openssl([
    'req', '-x509', ...KEY_ARGS[kind], '-nodes', '-keyout', keyFile, '-out', certFile,
    '-subj', `/C=US/O=certsmith tests/CN=Test ${kind} CA`, '-days', '30',
    '-addext', `basicConstraints=${constraints}`,
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
    '-addext', 'subjectKeyIdentifier=hash',
  ]);
  return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8'), certFile, keyFile };
}

/** A minimal in-memory signer over a CA's PEM files (the issuer must not depend on plugins). */
export function signerFor(ca: TestCa): Signer & { signCalls: SignatureAlgorithm[] } {
  const key = createPrivateKey(ca.keyPem);
  const der = decodePemBlock(ca.certPem)!.block.bytes;
  const signCalls: SignatureAlgorithm[] = [];
  return {
    signCalls,
    algorithms: algorithmsForKeyObject(key),
    async getCertificate() {
      return { der, pem: ca.certPem };
    },
    async sign(tbs, algorithm) {
      signCalls.push(algorithm);
      return signWithKeyObject(key, tbs, algorithm);
    },
    async close() {},
  };
}

/** `openssl verify -CAfile` result (true when the chain verifies). */
export function opensslVerify(dir: string, ca: TestCa, leafPem: string, purpose?: string): boolean {
  const leafFile = join(dir, `leaf-${Math.random().toString(36).slice(2)}.pem`);
  writeFileSync(leafFile, leafPem);
  try {
    openssl(['verify', '-CAfile', ca.certFile, ...(purpose ? ['-purpose', purpose] : []), leafFile]);
    return true;
  } catch {
    return false;
  }
}

/** `openssl x509 -noout -text` (plus serial/dates lines) of a certificate PEM. */
export function opensslText(pem: string): string {
  return openssl(['x509', '-noout', '-text'], pem);
}

/** `openssl req -verify -noout -text` of a CSR PEM; throws when the self-signature fails. */
export function opensslReqText(pem: string): string {
  return openssl(['req', '-verify', '-noout', '-text'], pem);
}

/** Extension names in the order openssl prints them. */
export function extensionOrder(text: string): string[] {
  const section = text.split('X509v3 extensions:')[1] ?? '';
  return [...section.matchAll(/^ {12}(\S[^\n:]*?):( critical)? *$/gm)].map((match) => `${match[1]}${match[2] ? ' (critical)' : ''}`);
}

/** The value lines under one extension heading. */
export function extensionValue(text: string, name: string): string {
  const pattern = new RegExp(`^ {12}${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:.*\\n((?: {16}.*\\n?)+)`, 'm');
  return (pattern.exec(text)?.[1] ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
}

/** DER of the first PEM block. */
export function pemDer(pem: string): Uint8Array {
  return decodePemBlock(pem)!.block.bytes;
}

/** One line of `openssl x509 -noout -<field>` without its `field=` prefix (subject, issuer, serial…). */
export function opensslField(pem: string, field: 'subject' | 'issuer' | 'serial' | 'startdate' | 'enddate'): string {
  const line = openssl(['x509', '-noout', `-${field}`], pem).trim();
  return line.slice(line.indexOf('=') + 1);
}

/** MD5/SHA-1/SHA-256 of DER bytes computed by openssl, upper-case hex. */
export function opensslDigests(der: Uint8Array): { md5: string; 'sha-1': string; 'sha-256': string } {
  const digest = (name: string): string => {
    const out = execFileSync('openssl', ['dgst', `-${name}`, '-r'], { input: der });
    return out.toString().split(' ')[0]!.toUpperCase();
  };
  return { md5: digest('md5'), 'sha-1': digest('sha1'), 'sha-256': digest('sha256') };
}

/**
 * Every independent check of an issued certificate (and its CSR when given): `openssl verify
 * -CAfile`, Node's `X509Certificate.verify` with the CA key and `checkIssued`, and `openssl req
 * -verify` for the CSR. Returns the `openssl x509 -text` output for further assertions.
 */
export function verifyIndependently(dir: string, ca: TestCa, certificatePem: string, csrPem?: string): string {
  if (!opensslVerify(dir, ca, certificatePem)) throw new Error(`openssl verify failed:\n${opensslText(certificatePem)}`);
  const certificate = new X509Certificate(certificatePem);
  const issuer = new X509Certificate(ca.certPem);
  if (!certificate.verify(issuer.publicKey)) throw new Error('X509Certificate.verify failed');
  if (!certificate.checkIssued(issuer)) throw new Error('X509Certificate.checkIssued failed');
  if (csrPem !== undefined) opensslReqText(csrPem);
  return opensslText(certificatePem);
}
