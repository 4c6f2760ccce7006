/**
 * Test helpers: a generated PKI (RSA and ECDSA CAs, a delegated OCSP responder, leaves), contract
 * signers over the generated keys, and the openssl CLI as the independent verifier.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Signer } from '@certsmith/signer-api';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import type { KeySpec, TestCertificate } from '@certsmith/test-pki';
import { TestPki } from '@certsmith/test-pki';

/** A contract signer over a generated certificate's key (what signer-local does, without files). */
export function keySigner(certificate: TestCertificate): Signer {
  return {
    algorithms: algorithmsForKeyObject(certificate.key.privateKey),
    getCertificate: async () => ({ der: certificate.der, pem: certificate.pem }),
    sign: (tbs, algorithm) => signWithKeyObject(certificate.key.privateKey, tbs, algorithm),
    close: async () => {},
  };
}

/** A CA with a delegated responder and two leaves. */
export interface TestHierarchy {
  ca: TestCertificate;
  responder: TestCertificate;
  leaf: TestCertificate;
  other: TestCertificate;
}

/** Build a CA of `key` with a delegated OCSP responder (id-kp-OCSPSigning) and two leaves. */
export function hierarchy(pki: TestPki, name: string, key: KeySpec): TestHierarchy {
  const ca = pki.root({ O: 'certsmith tests', CN: `${name} CA` }, { key, keyLabel: `${name}-ca` });
  const responder = pki.leaf(`${name} OCSP responder`, ca, {
    key: 'ecdsa-p256',
    keyLabel: `${name}-responder`,
    dns: [],
    extKeyUsage: ['1.3.6.1.5.5.7.3.9'],
    keyUsage: ['digitalSignature'],
  });
  const leaf = pki.leaf(`leaf.${name}.test`, ca, { key: 'ecdsa-p256', keyLabel: `${name}-leaf`, ocsp: ['http://127.0.0.1/ocsp'] });
  const other = pki.leaf(`other.${name}.test`, ca, { key: 'ecdsa-p256', keyLabel: `${name}-other` });
  return { ca, responder, leaf, other };
}

/** A scratch directory for openssl input files. */
export function scratch(): { dir: string; file: (name: string, content: string | Uint8Array) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-revocation-'));
  return {
    dir,
    file: (name, content) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Run openssl; stdout and stderr together with the exit status (openssl prints verdicts on stderr). */
export function openssl(args: string[]): { status: number; output: string } {
  const result = spawnSync('openssl', args, { encoding: 'utf8', timeout: 30_000 });
  return { status: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

/** Run openssl and return stdout; throws with the output when it fails. */
export function opensslText(args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', timeout: 30_000 });
}

/** {@link openssl} without blocking the event loop (for servers running in the test process). */
export function opensslAsync(args: string[]): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status: status ?? -1, output });
    });
  });
}
