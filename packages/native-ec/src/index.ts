/**
 * ECDSA keys and signatures through a small N-API addon over the OpenSSL that `node` itself links
 * (`native/native_ec.c`). On Node 20 (OpenSSL 3.0) node:crypto spends most of a fresh P-256 key's
 * cost outside the mathematics; the addon does not (see docs/performance.md#the-native-ecdsa-addon).
 * The key never leaves native memory except as the
 * SEC 1 DER the caller asks for; {@link NativeEcKey.dispose} frees it at once.
 *
 * The addon is optional: it is compiled at install (node-gyp, a C compiler and Node's headers) and
 * {@link loadNativeEc} returns `null`, with the reason in {@link nativeEcUnavailableReason}, where
 * it is missing, cannot load, or is turned off with `CERTSMITH_NATIVE_EC=off`. Callers then use
 * node:crypto; the keys and signatures are the same either way.
 */
import { createRequire } from 'node:module';

/** Curves the addon generates keys on (NIST names, as CFSSL's key requests use them). */
export type NativeEcCurve = 'P-256' | 'P-384' | 'P-521';

/** Digests the addon signs with (ECDSA-SHA256/384/512). */
export type NativeEcDigest = 'sha256' | 'sha384' | 'sha512';

/** A private key held by the addon. */
export interface NativeEcKey {
  readonly curve: NativeEcCurve;
  /**
   * The key as SEC 1 `ECPrivateKey` DER (RFC 5915) with the named curve and the public key, the
   * scalar padded to the curve's size: byte for byte what Go's `x509.MarshalECPrivateKey` writes.
   */
  readonly sec1: Uint8Array;
  /** ECDSA signature of `data` (hashed with `digest`) as a DER `ECDSA-Sig-Value`. */
  sign(digest: NativeEcDigest, data: Uint8Array): Uint8Array;
  /** Free the key now (its scalar is cleared); later `sign` calls throw. Idempotent. */
  dispose(): void;
}

/** The loaded addon. */
export interface NativeEc {
  /** OpenSSL version the addon runs on (the one `node` links). */
  readonly openssl: string;
  /** Generate a key with OpenSSL's `EC_KEY_generate_key` (its DRBG, its constant-time code). */
  generateKey(curve: NativeEcCurve): NativeEcKey;
  /**
   * Hold an existing key (a CA's) for signing: SEC 1 `ECPrivateKey` DER with its public key, on
   * one of the supported curves (`EC_KEY_check_key` must accept it). Throws otherwise.
   */
  importKey(sec1: Uint8Array): NativeEcKey;
}

/** The environment variable that turns the addon off (`off`, `0` or `false`). */
export const NATIVE_EC_ENV = 'CERTSMITH_NATIVE_EC';

/** The compiled addon's own interface (see native_ec.c). */
interface Binding {
  readonly openssl: string;
  readonly curves: readonly string[];
  readonly digests: readonly string[];
  generateKey(curve: number): [handle: object, sec1: Buffer];
  importKey(sec1: Uint8Array): [handle: object, curve: number];
  sign(handle: object, digest: number, data: Uint8Array): Buffer;
  dispose(handle: object): void;
}

const ADDON_PATH = '../build/Release/native_ec.node';

let loaded: NativeEc | null | undefined;
let unavailableReason: string | null = null;

/**
 * The addon, or `null` when it is not built, cannot be loaded in this process, or is turned off
 * with `CERTSMITH_NATIVE_EC=off`. Loaded once per thread.
 */
export function loadNativeEc(): NativeEc | null {
  if (loaded === undefined) loaded = load();
  return loaded;
}

/** Why {@link loadNativeEc} returned `null` (`null` when it did not, or before it was called). */
export function nativeEcUnavailableReason(): string | null {
  return unavailableReason;
}

function load(): NativeEc | null {
  const setting = process.env[NATIVE_EC_ENV]?.trim().toLowerCase();
  if (setting === 'off' || setting === '0' || setting === 'false') {
    unavailableReason = `turned off by ${NATIVE_EC_ENV}=${process.env[NATIVE_EC_ENV]}`;
    return null;
  }
  let binding: Binding;
  try {
    binding = createRequire(import.meta.url)(ADDON_PATH) as Binding;
  } catch (error) {
    unavailableReason = `the addon could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); build it with \`npm rebuild @certsmith/native-ec\``;
    return null;
  }
  return createNativeEc(binding);
}

function createNativeEc(binding: Binding): NativeEc {
  const curveIndex = new Map(binding.curves.map((name, index) => [name, index]));
  const digestIndex = new Map(binding.digests.map((name, index) => [name, index]));
  return {
    openssl: binding.openssl,
    generateKey(curve: NativeEcCurve): NativeEcKey {
      const index = curveIndex.get(curve);
      if (index === undefined) throw new RangeError(`unsupported curve ${String(curve)}`);
      const [handle, sec1] = binding.generateKey(index);
      return new AddonKey(binding, digestIndex, curve, handle, new Uint8Array(sec1.buffer, sec1.byteOffset, sec1.byteLength));
    },
    importKey(sec1: Uint8Array): NativeEcKey {
      const [handle, index] = binding.importKey(sec1);
      return new AddonKey(binding, digestIndex, binding.curves[index] as NativeEcCurve, handle, Uint8Array.from(sec1));
    },
  };
}

/** A class (not a literal): one hidden class for every key, however many are made. */
class AddonKey implements NativeEcKey {
  constructor(
    private readonly binding: Binding,
    private readonly digestIndex: ReadonlyMap<string, number>,
    readonly curve: NativeEcCurve,
    private readonly handle: object,
    readonly sec1: Uint8Array,
  ) {}

  sign(digest: NativeEcDigest, data: Uint8Array): Uint8Array {
    const index = this.digestIndex.get(digest);
    if (index === undefined) throw new RangeError(`unsupported digest ${String(digest)}`);
    const signature = this.binding.sign(this.handle, index, data);
    return new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength);
  }

  dispose(): void {
    this.binding.dispose(this.handle);
  }
}
