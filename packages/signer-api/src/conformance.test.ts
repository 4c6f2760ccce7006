import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { checkSignerConformance } from './conformance.js';
import { algorithmsForKeyObject, signWithKeyObject } from './key-object-signing.js';
import type { Signer } from './signer.js';

/** A self-signed certificate made by openssl for a key made by node:crypto. */
function selfSigned(keyPem: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-'));
  try {
    writeFileSync(join(dir, 'key.pem'), keyPem);
    return execFileSync('openssl', ['req', '-x509', '-new', '-key', join(dir, 'key.pem'), '-subj', '/CN=conformance', '-days', '1'], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function memorySigner(options: { breakSignature?: boolean } = {}): Signer {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = selfSigned(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  const der = new Uint8Array(Buffer.from(pem.split('\n').filter((line) => line && !line.startsWith('-----')).join(''), 'base64'));
  let closed = false;
  return {
    algorithms: algorithmsForKeyObject(privateKey),
    getCertificate: async () => ({ der, pem }),
    async sign(tbs, algorithm) {
      if (closed) throw Object.assign(new Error('closed'), { code: 2500 });
      const signature = await signWithKeyObject(privateKey, tbs, algorithm);
      if (options.breakSignature) signature[signature.length - 1] = (signature[signature.length - 1] as number) ^ 1;
      return signature;
    },
    async close() {
      closed = true;
    },
  };
}

describe('checkSignerConformance', () => {
  it('passes every check when the signer honours the contract', async () => {
    const result = await checkSignerConformance(memorySigner());
    expect(result.checks.filter((check) => !check.ok)).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.checks.map((check) => check.name)).toContain('sign(ECDSA-SHA384) verifies with the certificate key');
  });

  it('reports the failing algorithm when signatures do not verify', async () => {
    const result = await checkSignerConformance(memorySigner({ breakSignature: true }));
    expect(result.ok).toBe(false);
    expect(result.checks.find((check) => check.name === 'sign(ECDSA-SHA256) verifies with the certificate key')).toMatchObject({ ok: false });
  });

  it('reports unknown algorithm names when a signer advertises them', async () => {
    const signer = { ...memorySigner(), algorithms: ['ECDSA-SHA1'] } as unknown as Signer;
    const result = await checkSignerConformance(signer, { checkClose: false });
    expect(result.checks.find((check) => check.name === 'algorithms are known names')).toEqual({ name: 'algorithms are known names', ok: false, message: 'unknown algorithms: ECDSA-SHA1' });
  });
});
