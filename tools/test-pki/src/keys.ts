import { generateKeyPairSync, type KeyObject } from 'node:crypto';

/** Key types the test PKI can make. `dsa-2048` exists only to exercise CFSSL's 2200/2003 paths. */
export type KeySpec =
  | 'rsa-1024'
  | 'rsa-2048'
  | 'rsa-3072'
  | 'rsa-4096'
  | 'ecdsa-p256'
  | 'ecdsa-p384'
  | 'ecdsa-p521'
  | 'ed25519'
  | 'dsa-2048';

/** A generated key pair with the encodings tests need. */
export interface TestKey {
  spec: KeySpec;
  /** Cache label: two calls with the same spec and label return the same key. */
  label: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
  /** PKCS#8 `PRIVATE KEY` PEM. */
  pkcs8Pem: string;
  /**
   * The "traditional" PEM CFSSL writes back: PKCS#1 `RSA PRIVATE KEY`, SEC1 `EC PRIVATE KEY`;
   * PKCS#8 for Ed25519/DSA (no traditional form).
   */
  traditionalPem: string;
}

const cache = new Map<string, TestKey>();

function generate(spec: KeySpec): { privateKey: KeyObject; publicKey: KeyObject } {
  switch (spec) {
    case 'rsa-1024':
    case 'rsa-2048':
    case 'rsa-3072':
    case 'rsa-4096':
      return generateKeyPairSync('rsa', { modulusLength: Number(spec.slice(4)), publicExponent: 65537 });
    case 'ecdsa-p256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case 'ecdsa-p384':
      return generateKeyPairSync('ec', { namedCurve: 'P-384' });
    case 'ecdsa-p521':
      return generateKeyPairSync('ec', { namedCurve: 'P-521' });
    case 'ed25519':
      return generateKeyPairSync('ed25519');
    case 'dsa-2048':
      return generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 });
  }
}

/**
 * Get (or create and cache for the life of the process) the key `spec`/`label`. RSA 4096 takes
 * about a second to generate, so tests share keys by label instead of generating per certificate.
 */
export function testKey(spec: KeySpec, label = 'default'): TestKey {
  const id = `${spec}\u0000${label}`;
  const cached = cache.get(id);
  if (cached) return cached;
  const { privateKey, publicKey } = generate(spec);
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  const pkcs8Pem = String(privateKey.export({ type: 'pkcs8', format: 'pem' }));
  let traditionalPem = pkcs8Pem;
  if (spec.startsWith('rsa-')) traditionalPem = String(privateKey.export({ type: 'pkcs1', format: 'pem' }));
  else if (spec.startsWith('ecdsa-')) traditionalPem = String(privateKey.export({ type: 'sec1', format: 'pem' }));
  const key: TestKey = { spec, label, privateKey, publicKey, spki, pkcs8Pem, traditionalPem };
  cache.set(id, key);
  return key;
}
