import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { loadNativeEc, nativeEcUnavailableReason } from './index.js';
import type { NativeEcCurve, NativeEcDigest } from './index.js';

const CURVES: readonly [NativeEcCurve, string, number][] = [
  ['P-256', 'prime256v1', 32],
  ['P-384', 'secp384r1', 48],
  ['P-521', 'secp521r1', 66],
];

/** The repository builds the addon at install (npm ci): its absence is a broken install here. */
function addon() {
  const native = loadNativeEc();
  if (native === null) throw new Error(`native EC addon unavailable: ${nativeEcUnavailableReason()}`);
  return native;
}

describe('loadNativeEc', () => {
  it('loads the addon built at install, running on the OpenSSL node links', () => {
    expect(addon().openssl).toContain(process.versions.openssl.replace(/\+.*$/, ''));
    expect(nativeEcUnavailableReason()).toBeNull();
  });

  it('returns null with the reason when CERTSMITH_NATIVE_EC=off', () => {
    const module = new URL('../dist/index.js', import.meta.url).href;
    const script = `const m = await import(${JSON.stringify(module)}); console.log(JSON.stringify([m.loadNativeEc(), m.nativeEcUnavailableReason()]));`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, CERTSMITH_NATIVE_EC: 'off' } });
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual([null, 'turned off by CERTSMITH_NATIVE_EC=off']);
  });
});

describe('generateKey', () => {
  it.each(CURVES)('writes a %s key as SEC 1 DER that node:crypto reads and writes back byte for byte', (curve, openSslName) => {
    const key = addon().generateKey(curve);
    const imported = createPrivateKey({ key: Buffer.from(key.sec1), format: 'der', type: 'sec1' });
    expect(imported.asymmetricKeyDetails).toEqual({ namedCurve: openSslName });
    expect(imported.export({ format: 'der', type: 'sec1' }).equals(Buffer.from(key.sec1))).toBe(true);
    expect(key.curve).toBe(curve);
  });

  it.each(CURVES)('pads the %s scalar to the curve size, as Go does (1,500 keys)', (curve, _name, size) => {
    // One key in 256 has a leading zero byte in its scalar: 1,500 keys meet several.
    const lengths = new Set<number>();
    for (let i = 0; i < 1500; i++) {
      const key = addon().generateKey(curve);
      // SEQUENCE { INTEGER 1, OCTET STRING scalar, … }: the length octet follows 02 01 01 04.
      const der = Buffer.from(key.sec1);
      lengths.add(der[der.indexOf(Buffer.from([0x02, 0x01, 0x01, 0x04])) + 4]!);
      key.dispose();
    }
    expect([...lengths]).toEqual([size]);
  });

  it('makes a different key every time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(Buffer.from(addon().generateKey('P-256').sec1).toString('hex'));
    expect(seen.size).toBe(200);
  });

  it('refuses a curve it does not know', () => {
    expect(() => addon().generateKey('P-192' as NativeEcCurve)).toThrow(RangeError);
  });
});

describe('sign', () => {
  const digests: NativeEcDigest[] = ['sha256', 'sha384', 'sha512'];
  it.each(CURVES.flatMap(([curve]) => digests.map((digest) => [curve, digest] as const)))(
    'signs with a %s key and %s so that node:crypto verifies it',
    (curve, digest) => {
      const key = addon().generateKey(curve);
      const publicKey = createPublicKey(createPrivateKey({ key: Buffer.from(key.sec1), format: 'der', type: 'sec1' }));
      const data = new TextEncoder().encode(`to be signed with ${curve} and ${digest}`);
      const first = key.sign(digest, data);
      const second = key.sign(digest, data);
      expect(verify(digest, data, publicKey, first)).toBe(true);
      expect(verify(digest, data, publicKey, second)).toBe(true);
      // A fresh nonce each time.
      expect(Buffer.from(first).equals(Buffer.from(second))).toBe(false);
      expect(verify(digest, new TextEncoder().encode('something else'), publicKey, first)).toBe(false);
    },
  );

  it('refuses an unknown digest and data that is not a Uint8Array', () => {
    const key = addon().generateKey('P-256');
    expect(() => key.sign('md5' as NativeEcDigest, new Uint8Array(1))).toThrow(RangeError);
    expect(() => key.sign('sha256', 'text' as unknown as Uint8Array)).toThrow(/Uint8Array/);
  });

  it('refuses to sign once the key is disposed (dispose is idempotent)', () => {
    const key = addon().generateKey('P-256');
    key.dispose();
    key.dispose();
    expect(() => key.sign('sha256', new Uint8Array(8))).toThrow(expect.objectContaining({ code: 'ERR_CERTSMITH_NATIVE_EC', message: 'the key was disposed' }));
  });
});

describe('importKey', () => {
  it.each(CURVES)('holds an existing %s key and signs with it so that its public key verifies', (curve, openSslName) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: openSslName });
    const key = addon().importKey(privateKey.export({ format: 'der', type: 'sec1' }));
    expect(key.curve).toBe(curve);
    const data = new TextEncoder().encode('a certificate to be');
    expect(verify(curve === 'P-256' ? 'sha256' : 'sha384', data, publicKey, key.sign(curve === 'P-256' ? 'sha256' : 'sha384', data))).toBe(true);
    key.dispose();
  });

  it('refuses keys it cannot hold: another curve, garbage, trailing bytes, a mismatched public key', () => {
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey.export({ format: 'der', type: 'sec1' });
    expect(() => addon().importKey(k1)).toThrow('unsupported curve');
    expect(() => addon().importKey(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]))).toThrow(/not a SEC 1 EC private key/);
    const good = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'der', type: 'sec1' });
    expect(() => addon().importKey(Buffer.concat([good, Buffer.from([0])]))).toThrow('trailing data after the EC private key');
    // Swap in another key's public point: the pair no longer matches.
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'der', type: 'sec1' });
    const mixed = Buffer.concat([good.subarray(0, good.length - 65), other.subarray(other.length - 65)]);
    expect(() => addon().importKey(mixed)).toThrow('the EC key is not consistent');
    expect(() => addon().importKey('pem' as unknown as Uint8Array)).toThrow(/Uint8Array/);
  });
});

describe('worker threads', () => {
  it('generates and signs in several threads at once, each with its own curve groups', async () => {
    const module = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const source = `
      const { parentPort } = require('node:worker_threads');
      import(${JSON.stringify(module)}).then(({ loadNativeEc }) => {
        const native = loadNativeEc();
        const out = [];
        for (let i = 0; i < 500; i++) {
          const key = native.generateKey(i % 3 === 0 ? 'P-384' : 'P-256');
          const data = Buffer.from('message ' + i);
          out.push([Buffer.from(key.sec1).toString('base64'), Buffer.from(key.sign(i % 3 === 0 ? 'sha384' : 'sha256', data)).toString('base64'), i]);
          key.dispose();
        }
        parentPort.postMessage(out);
      });`;
    const results = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<[string, string, number][]>((resolve, reject) => {
            const worker = new Worker(source, { eval: true });
            worker.once('message', (message: [string, string, number][]) => {
              resolve(message);
              void worker.terminate();
            });
            worker.once('error', reject);
          }),
      ),
    );
    for (const [sec1, signature, i] of results.flat()) {
      const publicKey = createPublicKey(createPrivateKey({ key: Buffer.from(sec1, 'base64'), format: 'der', type: 'sec1' }));
      expect(verify(i % 3 === 0 ? 'sha384' : 'sha256', Buffer.from(`message ${i}`), publicKey, Buffer.from(signature, 'base64'))).toBe(true);
    }
  });
});
