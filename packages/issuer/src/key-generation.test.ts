import { execFileSync, spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { openssl } from './test-support/openssl.js';
import { ecdsaKeyBackend, generateKey, generateKeyInThread, resolveKeySpec } from './key-generation.js';
import type { GeneratedKey } from './key-generation.js';
import { generateKeyAndCsr } from './key-and-csr.js';

describe('resolveKeySpec', () => {
  it.each([
    [{ algo: 'rsa', size: 1024 }, 'RSA key is too weak'],
    [{ algo: 'rsa' }, 'RSA key is too weak'],
    [{ algo: 'rsa', size: 9000 }, 'RSA key size too large'],
    [{ algo: 'rsa', size: 9216 }, 'RSA key size too large'],
    [{ algo: 'ecdsa', size: 224 }, 'invalid curve'],
    [{ algo: 'ecdsa', size: 1024 }, 'invalid curve'],
    [{ algo: 'dsa', size: 2048 }, 'invalid algorithm'],
    [{ algo: 'RSA', size: 2048 }, 'invalid algorithm'],
    [{ algo: '', size: 256 }, 'invalid algorithm'],
    [{ algo: 'yolocrypto', size: 1024 }, 'invalid algorithm'],
  ])('throws 2400 with CFSSL\'s text when given %j', (request, message) => {
    expect(() => resolveKeySpec(request)).toThrow(expect.objectContaining({ code: 2400, message }) as Error);
  });

  it('defaults to ECDSA P-256 when the request is null or sizes only', () => {
    expect(resolveKeySpec(null)).toEqual({ algorithm: 'ECDSA', curve: 'P-256', bits: 256 });
    expect(resolveKeySpec({ size: 384 })).toEqual({ algorithm: 'ECDSA', curve: 'P-384', bits: 384 });
  });

  it('accepts any RSA size in range when given an odd size', () => {
    expect(resolveKeySpec({ algo: 'rsa', size: 3000 })).toEqual({ algorithm: 'RSA', bits: 3000 });
  });

  it('ignores the size when the algorithm is ed25519', () => {
    expect(resolveKeySpec({ algo: 'ed25519', size: 1 })).toEqual({ algorithm: 'Ed25519' });
  });
});

describe('generateKey', () => {
  it('writes an EC PRIVATE KEY that openssl reads when the curve is P-521', async () => {
    const key = await generateKey(resolveKeySpec({ algo: 'ecdsa', size: 521 }));
    expect(key.privateKeyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    expect(key.privateKeyPem.endsWith('-----END EC PRIVATE KEY-----\n')).toBe(true);
    expect(openssl(['ec', '-noout', '-text'], key.privateKeyPem)).toContain('NIST CURVE: P-521');
  });

  it('writes an RSA PRIVATE KEY (PKCS#1) when the algorithm is rsa', async () => {
    const key = await generateKey(resolveKeySpec({ algo: 'rsa', size: 2048 }));
    expect(key.privateKeyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
    expect(createPrivateKey(key.privateKeyPem).asymmetricKeyDetails).toMatchObject({ modulusLength: 2048, publicExponent: 65537n });
  });

  it('writes PKCS#8 under the Ed25519 PRIVATE KEY label when the algorithm is ed25519', async () => {
    const key = await generateKey(resolveKeySpec({ algo: 'ed25519' }));
    expect(key.privateKeyPem).toMatch(/^-----BEGIN Ed25519 PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIE/);
    const der = Buffer.from(key.privateKeyPem.split('\n').slice(1, -2).join(''), 'base64');
    expect(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).asymmetricKeyType).toBe('ed25519');
  });
});

describe('generateKeyInThread', () => {
  it.each(['primes', 'openssl'] as const)('writes a valid RSA PRIVATE KEY when the RSA method is %s', async (rsa) => {
    const key = await generateKeyInThread(resolveKeySpec({ algo: 'rsa', size: 2048 }), { rsa });
    expect(key.privateKeyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
    expect(openssl(['rsa', '-check', '-noout'], key.privateKeyPem)).toContain('RSA key ok');
  });

  it('generates EC keys on the calling thread with the same encodings', async () => {
    const key = await generateKeyInThread(resolveKeySpec({ algo: 'ecdsa', size: 256 }));
    expect(key.privateKeyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    expect(Buffer.from(key.spki).equals(key.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
  });
});

describe('ECDSA private keys', () => {
  it.each([
    [256, 32],
    [384, 48],
    [521, 66],
  ] as const)('pad the P-%i scalar to %i bytes, as Go\'s MarshalECPrivateKey does', async (size, length) => {
    // A scalar with leading zero bytes comes once in 256 keys: 3,000 keys meet several.
    const spec = resolveKeySpec({ algo: 'ecdsa', size });
    const lengths = new Set<number>();
    for (let i = 0; i < 3000; i++) {
      const der = Buffer.from((await generateKey(spec)).privateKeyPem.split('\n').slice(1, -2).join(''), 'base64');
      // SEQUENCE { INTEGER 1, OCTET STRING scalar, … }: the scalar's length octet follows 02 01 01 04.
      const offset = der.indexOf(Buffer.from([0x02, 0x01, 0x01, 0x04]));
      lengths.add(der[offset + 4]!);
    }
    expect([...lengths]).toEqual([length]);
  }, 60_000);

  it('carry the SubjectPublicKeyInfo of the key\'s own public key', async () => {
    for (const size of [256, 384, 521]) {
      const key = await generateKey(resolveKeySpec({ algo: 'ecdsa', size }));
      expect(Buffer.from(key.spki).equals(key.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
    }
  });
});

describe('ECDSA key backends', () => {
  it('uses the native addon built at install', () => {
    expect(ecdsaKeyBackend()).toEqual({ backend: 'native', openssl: expect.stringContaining('OpenSSL 3') });
  });

  it('makes keys and CSRs that verify with node:crypto, and frees the native key once the CSR is signed', async () => {
    let made: GeneratedKey | undefined;
    const result = await generateKeyAndCsr(
      { CN: 'native.example', hosts: ['native.example'] },
      {
        keySource: async (spec) => {
          made = await generateKey(spec);
          return made;
        },
      },
    );
    // openssl checks the CSR's self-signature independently (exit 0 and "verify OK").
    expect(execFileSync('openssl', ['req', '-verify', '-noout'], { input: result.csrPem, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] })).toBe('');
    expect(made!.sign).toBeTypeOf('function');
    expect(() => made!.sign!(new Uint8Array(1), 'ECDSA-SHA256')).toThrow('the key was disposed');
    // The KeyObject view still works (made from the PEM's DER on first use).
    expect(made!.privateKey.export({ format: 'der', type: 'sec1' }).toString('base64')).toBe(result.privateKeyPem.split('\n').slice(1, -2).join(''));
  });

  it('makes the same encodings with node:crypto when the addon is turned off', () => {
    const issuer = new URL('../dist/index.js', import.meta.url).href;
    const script = `const { generateKeyAndCsr, ecdsaKeyBackend } = await import(${JSON.stringify(issuer)});
      const { createPrivateKey, createPublicKey, verify } = await import('node:crypto');
      const out = [];
      for (const size of [256, 384, 521]) {
        const r = await generateKeyAndCsr({ CN: 'x', hosts: ['x.example'], key: { algo: 'ecdsa', size } });
        const key = createPrivateKey(r.privateKeyPem);
        out.push([key.asymmetricKeyDetails.namedCurve, key.export({ format: 'pem', type: 'sec1' }) === r.privateKeyPem]);
      }
      console.log(JSON.stringify({ backend: ecdsaKeyBackend(), out }));`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, CERTSMITH_NATIVE_EC: 'off' } });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({
      backend: { backend: 'node:crypto', openssl: process.versions.openssl, reason: 'turned off by CERTSMITH_NATIVE_EC=off' },
      out: [
        ['prime256v1', true],
        ['secp384r1', true],
        ['secp521r1', true],
      ],
    });
  });
});

describe('privateKeyPemFromJwk', () => {
  it.each([
    [{ algo: 'ecdsa', size: 256 }, 'sec1'],
    [{ algo: 'ecdsa', size: 384 }, 'sec1'],
    [{ algo: 'ecdsa', size: 521 }, 'sec1'],
    [{ algo: 'rsa', size: 2048 }, 'pkcs1'],
    [{ algo: 'ed25519' }, 'pkcs8'],
  ] as const)('is byte-identical to OpenSSL\'s own export when the key request is %j', async (request, type) => {
    const spec = resolveKeySpec(request);
    const key = await generateKey(spec);
    const der = (pem: string): string => pem.split('\n').filter((line) => line && !line.startsWith('-----')).join('');
    expect(der(key.privateKeyPem)).toBe(key.privateKey.export({ type, format: 'der' }).toString('base64'));
    expect(Buffer.from(key.spki).toString('base64')).toBe(key.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'));
  });
});

describe('key generation under garbage collection', () => {
  it('never deadlocks its thread when a GC finalizes the generation job during the key export (Node 20)', () => {
    // The same loop with `generateKeyPairSync` + JWK export stopped for good within ≈0.5 s of CPU
    // (gdb: `~KeyGenJob` waiting on the key's mutex held by `ExportJWKEcKey`). Run in a child
    // process so that a deadlock is a timeout here, not a hung test runner.
    const issuer = new URL('../dist/index.js', import.meta.url).href;
    const script = `const { generateKeyInThread, resolveKeySpec } = await import(${JSON.stringify(issuer)});
      const { sign } = await import('node:crypto');
      const spec = resolveKeySpec({ algo: 'ecdsa', size: 256 });
      if ((await import(${JSON.stringify(issuer)})).ecdsaKeyBackend().backend !== 'node:crypto') throw new Error('native addon in use');
      for (let i = 0; i < 50000; i++) sign('sha256', new Uint8Array(300), (await generateKeyInThread(spec)).privateKey);
      console.log('done');`;
    // node:crypto's path (the native addon turned off): that is the one that could deadlock.
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 120_000, encoding: 'utf8', env: { ...process.env, CERTSMITH_NATIVE_EC: 'off' } });
    expect({ status: result.status, signal: result.signal, stdout: result.stdout.trim() }).toEqual({ status: 0, signal: null, stdout: 'done' });
  }, 150_000);
});
