/**
 * A {@link Signer} over a private key held as a WebCrypto `CryptoKey`. The key is imported
 * non-extractable: after `create`, no code path can read it back, only sign with it. RSA keys in
 * WebCrypto are bound to one scheme and hash, so one `CryptoKey` is imported per advertised
 * algorithm, lazily, from the JWK kept only until `close()`.
 */
import { webcrypto } from 'node:crypto';

import type { SignatureAlgorithm, Signer, SignerCertificate, SignerHealth } from '@certsmith/signer-api';
import { SignerConfigurationError, SignerUnavailableError } from '@certsmith/signer-api';

import { p1363ToDer } from './ecdsa-der.js';

type CryptoKey = webcrypto.CryptoKey;
type JsonWebKey = webcrypto.JsonWebKey;

const { subtle } = webcrypto;

/** The package name, used in messages. */
export const PLUGIN_NAME = 'certsmith-signer-webcrypto-example';

const WEBCRYPTO_HASH = { sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' } as const;
const SALT_LENGTH = { sha256: 32, sha384: 48, sha512: 64 } as const;

type Hash = keyof typeof WEBCRYPTO_HASH;

/** How to import the key and sign for one contract algorithm. */
interface WebCryptoAlgorithm {
  import: webcrypto.AlgorithmIdentifier | webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;
  sign: webcrypto.AlgorithmIdentifier | webcrypto.RsaPssParams | webcrypto.EcdsaParams;
  /** WebCrypto ECDSA signatures are P1363 and need DER. */
  ecdsa: boolean;
}

function hashOf(algorithm: SignatureAlgorithm): Hash {
  return algorithm.endsWith('SHA256') ? 'sha256' : algorithm.endsWith('SHA384') ? 'sha384' : 'sha512';
}

function webCryptoAlgorithm(algorithm: SignatureAlgorithm, curve: string | undefined): WebCryptoAlgorithm {
  if (algorithm === 'Ed25519') return { import: { name: 'Ed25519' }, sign: { name: 'Ed25519' }, ecdsa: false };
  const hash = WEBCRYPTO_HASH[hashOf(algorithm)];
  if (algorithm.startsWith('ECDSA')) {
    return { import: { name: 'ECDSA', namedCurve: curve as string }, sign: { name: 'ECDSA', hash }, ecdsa: true };
  }
  if (algorithm.startsWith('RSA-PSS')) {
    return { import: { name: 'RSA-PSS', hash }, sign: { name: 'RSA-PSS', saltLength: SALT_LENGTH[hashOf(algorithm)] }, ecdsa: false };
  }
  return { import: { name: 'RSASSA-PKCS1-v1_5', hash }, sign: { name: 'RSASSA-PKCS1-v1_5' }, ecdsa: false };
}

/**
 * The algorithms a private JWK can sign with, most preferred first (the hash matching the key
 * size first, as CFSSL chooses). Throws a 2000 naming the plugin for anything else.
 */
export function algorithmsForJwk(jwk: JsonWebKey): SignatureAlgorithm[] {
  if (typeof jwk.d !== 'string') throw new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: the JWK has no private part ("d"); give the private key`);
  switch (jwk.kty) {
    case 'EC':
      if (jwk.crv === 'P-256') return ['ECDSA-SHA256', 'ECDSA-SHA384', 'ECDSA-SHA512'];
      if (jwk.crv === 'P-384') return ['ECDSA-SHA384', 'ECDSA-SHA256', 'ECDSA-SHA512'];
      if (jwk.crv === 'P-521') return ['ECDSA-SHA512', 'ECDSA-SHA384', 'ECDSA-SHA256'];
      break;
    case 'OKP':
      if (jwk.crv === 'Ed25519') return ['Ed25519'];
      break;
    case 'RSA': {
      const bits = Buffer.from(jwk.n ?? '', 'base64url').length * 8;
      if (bits < 2048) throw new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: RSA key of ${bits} bits is too weak, at least 2048 are required`);
      const first: SignatureAlgorithm[] = bits >= 4096 ? ['RSA-SHA512', 'RSA-SHA384', 'RSA-SHA256'] : bits >= 3072 ? ['RSA-SHA384', 'RSA-SHA256', 'RSA-SHA512'] : ['RSA-SHA256', 'RSA-SHA384', 'RSA-SHA512'];
      return [...first, 'RSA-PSS-SHA256', 'RSA-PSS-SHA384', 'RSA-PSS-SHA512'];
    }
  }
  throw new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: unsupported JWK key type ${String(jwk.kty)}${jwk.crv ? ` (${jwk.crv})` : ''}; use EC P-256/P-384/P-521, OKP Ed25519 or RSA`);
}

/**
 * Build the signer. `jwk` is the private key; `certificate` its CA certificate (the caller checked
 * that they match). Every key is imported here, so a JWK WebCrypto refuses fails at load time, and
 * the JWK itself is not kept: from then on only non-extractable `CryptoKey`s exist.
 */
export async function createWebCryptoSigner(jwk: JsonWebKey, certificate: SignerCertificate): Promise<Signer> {
  const algorithms: readonly SignatureAlgorithm[] = Object.freeze(algorithmsForJwk(jwk));
  // `alg`, `use` and `key_ops` would pin the JWK to one WebCrypto algorithm; this plugin decides.
  const { alg: _alg, use: _use, key_ops: _keyOps, ...material } = jwk;
  const specs = new Map(algorithms.map((algorithm) => [algorithm, webCryptoAlgorithm(algorithm, jwk.crv)] as const));
  let keys: Map<SignatureAlgorithm, CryptoKey> | null = new Map();
  const imported = new Map<string, CryptoKey>();
  try {
    for (const [algorithm, spec] of specs) {
      // RSA keys are bound to a scheme and hash: one import per distinct import algorithm.
      const cacheKey = JSON.stringify(spec.import);
      let key = imported.get(cacheKey);
      if (key === undefined) {
        key = await subtle.importKey('jwk', material, spec.import, false, ['sign']);
        imported.set(cacheKey, key);
      }
      keys.set(algorithm, key);
    }
  } catch (cause) {
    throw new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: WebCrypto refused the JWK: ${(cause as Error).message}`, { cause });
  }

  return {
    algorithms,
    async getCertificate(): Promise<SignerCertificate> {
      return certificate;
    },
    async sign(tbs: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array> {
      if (keys === null) throw new SignerUnavailableError('signer is closed');
      const key = keys.get(algorithm);
      const spec = specs.get(algorithm);
      if (key === undefined || spec === undefined) throw new SignerUnavailableError(`signer cannot sign with ${algorithm}; it offers ${algorithms.join(', ')}`);
      let signature: Uint8Array;
      try {
        signature = new Uint8Array(await subtle.sign(spec.sign, key, tbs));
      } catch (cause) {
        throw new SignerUnavailableError(undefined, { cause });
      }
      return spec.ecdsa ? p1363ToDer(signature) : signature;
    },
    async health(): Promise<SignerHealth> {
      return keys === null ? { ok: false, message: 'signer is closed' } : { ok: true };
    },
    async close(): Promise<void> {
      keys = null;
    },
  };
}
