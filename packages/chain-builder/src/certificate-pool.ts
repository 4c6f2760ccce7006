/**
 * An indexed set of CA certificates (Go's `x509.CertPool` with certsmith's caches). Issuer candidates
 * are found through two hash indexes — subject DER and subject key identifier — so the cost of
 * finding a certificate's parents does not depend on how many certificates the pool holds.
 */
import { hash } from 'node:crypto';
import { LazyCertificate, certificateToPem } from '@certsmith/x509-core';
import type { Certificate } from '@certsmith/x509-core';
import { bytesKey } from './bytes-key.js';
import { checkSignatureFrom } from './signature-check.js';

/**
 * What pools derive from a certificate, memoised per certificate object in one WeakMap entry rather
 * than one per kind: an entry for a fresh key costs ≈0.2 µs with its share of garbage collection,
 * and every bundle request brings a fresh leaf that needs all three
 * (docs/performance.md#bundle-cpu-per-request).
 */
class DerivedKeys {
  fingerprint: string | undefined = undefined;
  subject: string | undefined = undefined;
  issuer: string | undefined = undefined;
}

const derivedKeys = new WeakMap<Certificate, DerivedKeys>();

function derivedKeysOf(cert: Certificate): DerivedKeys {
  let keys = derivedKeys.get(cert);
  if (keys === undefined) {
    keys = new DerivedKeys();
    derivedKeys.set(cert, keys);
  }
  return keys;
}

/** Map key of the certificate's subject DER, memoised per certificate (the hot path of path building). */
export function subjectKey(cert: Certificate): string {
  const keys = derivedKeysOf(cert);
  // A lazy pool certificate is indexed without being parsed again.
  keys.subject ??= bytesKey(cert instanceof LazyCertificate ? cert.index.subjectDer : cert.subject.der);
  return keys.subject;
}

/** Map key of the certificate's issuer DER, memoised per certificate. */
export function issuerKey(cert: Certificate): string {
  const keys = derivedKeysOf(cert);
  keys.issuer ??= bytesKey(cert instanceof LazyCertificate ? cert.index.issuerDer : cert.issuer.der);
  return keys.issuer;
}

/**
 * Record a fingerprint computed elsewhere (a trust snapshot carries them: the thread that read the
 * file hashed each certificate once, so the workers building pools from it do not).
 */
export function rememberFingerprint(cert: Certificate, fingerprint: string): void {
  derivedKeysOf(cert).fingerprint = fingerprint;
}

/** The fingerprint pools index certificates by: SHA-256 of the DER, base64. */
export function derFingerprint(der: Uint8Array): string {
  // One-shot `hash`: no Hash object and no digest Buffer per certificate (docs/performance.md#bundle-cpu-per-request).
  return hash('sha256', der, 'base64');
}

/** {@link derFingerprint} of the certificate, memoised per certificate object. */
export function certificateFingerprint(cert: Certificate): string {
  const keys = derivedKeysOf(cert);
  keys.fingerprint ??= derFingerprint(cert.der);
  return keys.fingerprint;
}


/** Options of {@link CertificatePool}. */
export interface CertificatePoolOptions {
  /** Capacity of the (issuer, child) signature-result cache. Default 50,000 pairs. */
  signatureCacheSize?: number;
}

/** A deduplicated, indexed pool of certificates. */
export class CertificatePool {
  readonly #byFingerprint = new Map<string, Certificate>();
  readonly #bySubject = new Map<string, Certificate[]>();
  readonly #bySki = new Map<string, Certificate[]>();
  /**
   * Signature bytes of every certificate (CFSSL's `KnownIssuers`), made on the first
   * {@link hasSignature}: only intermediate discovery asks, and a pool built at start-up should not
   * pay for it before the server can answer.
   */
  #signatures: Set<string> | null = null;
  /** issuer → (child fingerprint → result); per-issuer maps keep lookups allocation-free. */
  readonly #signatureResults = new Map<Certificate, Map<string, string | null>>();
  #signatureResultCount = 0;
  readonly #signatureCacheSize: number;
  #pemList: string[] | null = null;

  constructor(certificates: Iterable<Certificate> = [], options: CertificatePoolOptions = {}) {
    this.#signatureCacheSize = options.signatureCacheSize ?? 50_000;
    for (const cert of certificates) this.add(cert);
  }

  /** Number of distinct certificates. */
  get size(): number {
    return this.#byFingerprint.size;
  }

  /** Add a certificate; returns false when an identical one (same DER) is already present. */
  add(cert: Certificate): boolean {
    const fp = certificateFingerprint(cert);
    if (this.#byFingerprint.has(fp)) return false;
    this.#byFingerprint.set(fp, cert);
    const subject = subjectKey(cert);
    const sameSubject = this.#bySubject.get(subject);
    if (sameSubject) sameSubject.push(cert);
    else this.#bySubject.set(subject, [cert]);
    if (cert.subjectKeyId && cert.subjectKeyId.length > 0) {
      const ski = bytesKey(cert.subjectKeyId);
      const sameKey = this.#bySki.get(ski);
      if (sameKey) sameKey.push(cert);
      else this.#bySki.set(ski, [cert]);
    }
    this.#signatures?.add(bytesKey(cert.signature));
    this.#pemList = null;
    return true;
  }

  /** Whether this exact certificate (same DER) is in the pool. */
  has(cert: Certificate): boolean {
    return this.#byFingerprint.has(certificateFingerprint(cert));
  }

  /** The pool's own copy of `cert` (same DER), which carries the pool's caches; `undefined` if absent. */
  get(cert: Certificate): Certificate | undefined {
    return this.#byFingerprint.get(certificateFingerprint(cert));
  }

  /** The pool's certificate whose DER has this {@link certificateFingerprint}; `undefined` if absent. */
  byFingerprint(fingerprint: string): Certificate | undefined {
    return this.#byFingerprint.get(fingerprint);
  }

  /** Whether a certificate with these signature bytes is in the pool (CFSSL's `KnownIssuers`). */
  hasSignature(signature: Uint8Array): boolean {
    if (this.#signatures === null) {
      this.#signatures = new Set();
      for (const cert of this.#byFingerprint.values()) this.#signatures.add(bytesKey(cert.signature));
    }
    return this.#signatures.has(bytesKey(signature));
  }

  /** Certificates whose subject DER equals `subjectDer`, in insertion order. */
  bySubject(subjectDer: Uint8Array): readonly Certificate[] {
    return this.#bySubject.get(bytesKey(subjectDer)) ?? [];
  }

  /** Certificates whose subject key identifier equals `ski`. */
  bySubjectKeyId(ski: Uint8Array): readonly Certificate[] {
    return this.#bySki.get(bytesKey(ski)) ?? [];
  }

  /**
   * Issuer candidates of `child`: certificates whose subject DER equals the child's issuer DER
   * (RFC 5280 6.1.3 (a)(4) name chaining), ordered as Go's `findPotentialParents`: SKI = AKI first
   * (found through the SKI index), then those where one of the two is absent, then mismatches.
   */
  findIssuerCandidates(child: Certificate): Certificate[] {
    const wanted = issuerKey(child);
    const sameName = this.#bySubject.get(wanted);
    if (!sameName) return [];
    if (sameName.length === 1) return [sameName[0] as Certificate];
    const aki = child.authorityKeyId && child.authorityKeyId.length > 0 ? child.authorityKeyId : null;
    const matching: Certificate[] = [];
    const oneKeyId: Certificate[] = [];
    const mismatch: Certificate[] = [];
    if (aki !== null) {
      for (const cert of this.#bySki.get(bytesKey(aki)) ?? []) {
        if (subjectKey(cert) === wanted) matching.push(cert);
      }
    }
    for (const cert of sameName) {
      const ski = cert.subjectKeyId && cert.subjectKeyId.length > 0 ? cert.subjectKeyId : null;
      if (aki !== null && ski !== null && bytesKey(ski) === bytesKey(aki)) continue; // already in `matching`
      if (aki === null && ski === null) matching.push(cert);
      else if (aki === null || ski === null) oneKeyId.push(cert);
      else mismatch.push(cert);
    }
    return [...matching, ...oneKeyId, ...mismatch];
  }

  /**
   * Go's `CheckSignatureFrom(issuer)` for an issuer of this pool, with the result cached per
   * (issuer, child) pair (child by DER fingerprint, so a re-parsed certificate hits too), bounded
   * by `signatureCacheSize` pairs.
   */
  checkSignature(child: Certificate, issuer: Certificate): string | null {
    const childFingerprint = certificateFingerprint(child);
    let results = this.#signatureResults.get(issuer);
    const cached = results?.get(childFingerprint);
    if (cached !== undefined) return cached;
    const result = checkSignatureFrom(child, issuer);
    if (this.#signatureResultCount >= this.#signatureCacheSize) {
      // Bounded memory: start over rather than track recency (a full cache is rare and refills fast).
      this.#signatureResults.clear();
      this.#signatureResultCount = 0;
      results = undefined;
    }
    if (!results) {
      results = new Map();
      this.#signatureResults.set(issuer, results);
    }
    results.set(childFingerprint, result);
    this.#signatureResultCount++;
    return result;
  }

  /** All certificates, in insertion order. */
  certificates(): Certificate[] {
    return [...this.#byFingerprint.values()];
  }

  /** PEM of every certificate (for `tls.connect({ ca })`), built once per pool content. */
  pemList(): string[] {
    if (this.#pemList === null) {
      this.#pemList = this.certificates().map((cert) => certificateToPem(cert.der));
    }
    return this.#pemList;
  }
}

/** The two pools CFSSL's bundler verifies against (`-ca-bundle`, `-int-bundle`). */
export interface TrustPools {
  roots: CertificatePool;
  intermediates: CertificatePool;
}
