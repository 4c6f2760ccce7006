/**
 * A certificate that keeps only its DER and the fields certificate pools index by, and parses the
 * rest when it is first asked for. Trust pools hold thousands of certificates of which a request
 * touches a handful: a parsed {@link Certificate} costs far more heap than its DER (see
 * docs/performance.md#trust-pools-hold-certificates-lazily), a lazy one its DER and a few views.
 * The full parse of at most {@link MATERIALIZED_LIMIT} certificates is kept at a time (the
 * oldest is dropped and made again on its next use), so a pool's memory stays bounded whatever
 * the requests touch. Behaves exactly as the parsed certificate: every field is the parser's own.
 */
import type {
  BasicConstraints,
  Certificate,
  CertificateExtension,
  DistinguishedName,
  NameConstraints,
  PublicKeyInfo,
  SignatureAlgorithmInfo,
  SubjectAltNames,
} from './certificate-model.js';
import { parseCertificate, parseCertificatesKeeping } from './parse-certificate.js';

/** The fields a certificate pool indexes by: views into the certificate's DER. */
export interface CertificateIndexFields {
  readonly subjectDer: Uint8Array;
  readonly issuerDer: Uint8Array;
  readonly subjectKeyId: Uint8Array | null;
  readonly authorityKeyId: Uint8Array | null;
  readonly signature: Uint8Array;
}

/** Most lazy certificates whose full parse is kept at once (oldest dropped first). */
export const MATERIALIZED_LIMIT = 1024;

/** Lazy certificates currently holding their full parse, in the order they made it (a ring). */
const materialized: (LazyCertificate | undefined)[] = [];
let nextSlot = 0;

/** See the module comment. Make one with {@link LazyCertificate.from}. */
export class LazyCertificate implements Certificate {
  readonly der: Uint8Array;
  /** What pools index by, without parsing the rest again. */
  readonly index: CertificateIndexFields;
  #full: Certificate | undefined;

  private constructor(der: Uint8Array, index: CertificateIndexFields) {
    this.der = der;
    this.index = index;
    this.#full = undefined;
  }

  /** A lazy copy of a parsed certificate (its DER and index views; the parse itself is dropped). */
  static from(certificate: Certificate): LazyCertificate {
    if (certificate instanceof LazyCertificate) return certificate;
    return new LazyCertificate(certificate.der, {
      subjectDer: certificate.subject.der,
      issuerDer: certificate.issuer.der,
      subjectKeyId: certificate.subjectKeyId,
      authorityKeyId: certificate.authorityKeyId,
      signature: certificate.signature,
    });
  }

  /**
   * A lazy certificate from its DER and index fields read by `readCertificateIndex` (views into
   * `der`), without a full parse: for trust data loaded at start-up. The first full parse happens
   * on first use and can then fail (1003) for contents the index reader does not decode.
   */
  static fromIndex(der: Uint8Array, index: CertificateIndexFields): LazyCertificate {
    return new LazyCertificate(der, index);
  }

  /** Whether the full parse is held now (for tests and memory accounting). */
  get isMaterialized(): boolean {
    return this.#full !== undefined;
  }

  /**
   * The full parse, made now when it is not held: a plain certificate, the same data the parser
   * returns for these bytes (throws CertificateParseError, 1003, when it cannot be parsed).
   */
  parsed(): Certificate {
    return this.#parsed();
  }

  #parsed(): Certificate {
    let full = this.#full;
    if (full === undefined) {
      // Made by `from`: the same bytes parsed once already, this cannot fail. Made by `fromIndex`:
      // only the structure was read, so a malformed content throws CertificateParseError (1003).
      full = parseCertificate(this.der);
      this.#full = full;
      const evicted = materialized[nextSlot];
      if (evicted !== undefined && evicted !== this) evicted.#full = undefined;
      materialized[nextSlot] = this;
      nextSlot = (nextSlot + 1) % MATERIALIZED_LIMIT;
    }
    return full;
  }

  get tbs(): Uint8Array {
    return this.#parsed().tbs;
  }
  get version(): number {
    return this.#parsed().version;
  }
  get serialNumberHex(): string {
    return this.#parsed().serialNumberHex;
  }
  get signatureAlgorithm(): SignatureAlgorithmInfo {
    return this.#parsed().signatureAlgorithm;
  }
  get signature(): Uint8Array {
    return this.index.signature;
  }
  get issuer(): DistinguishedName {
    return this.#parsed().issuer;
  }
  get subject(): DistinguishedName {
    return this.#parsed().subject;
  }
  get notBefore(): Date {
    return this.#parsed().notBefore;
  }
  get notAfter(): Date {
    return this.#parsed().notAfter;
  }
  get publicKey(): PublicKeyInfo {
    return this.#parsed().publicKey;
  }
  get extensions(): CertificateExtension[] {
    return this.#parsed().extensions;
  }
  get subjectKeyId(): Uint8Array | null {
    return this.index.subjectKeyId;
  }
  get authorityKeyId(): Uint8Array | null {
    return this.index.authorityKeyId;
  }
  get basicConstraints(): BasicConstraints | null {
    return this.#parsed().basicConstraints;
  }
  get keyUsage(): number | null {
    return this.#parsed().keyUsage;
  }
  get extKeyUsage(): string[] | null {
    return this.#parsed().extKeyUsage;
  }
  get subjectAltNames(): SubjectAltNames {
    return this.#parsed().subjectAltNames;
  }
  get ocspUrls(): string[] {
    return this.#parsed().ocspUrls;
  }
  get caIssuerUrls(): string[] {
    return this.#parsed().caIssuerUrls;
  }
  get crlDistributionPoints(): string[] {
    return this.#parsed().crlDistributionPoints;
  }
  get unhandledCriticalExtensions(): string[] {
    return this.#parsed().unhandledCriticalExtensions;
  }
  get certificatePolicies(): string[] | null | undefined {
    return this.#parsed().certificatePolicies;
  }
  get nameConstraints(): NameConstraints | null | undefined {
    return this.#parsed().nameConstraints;
  }
}

/** The index fields of any certificate, read without parsing again when it is lazy. */
export function certificateIndexFields(certificate: Certificate): CertificateIndexFields {
  if (certificate instanceof LazyCertificate) return certificate.index;
  return {
    subjectDer: certificate.subject.der,
    issuerDer: certificate.issuer.der,
    subjectKeyId: certificate.subjectKeyId,
    authorityKeyId: certificate.authorityKeyId,
    signature: certificate.signature,
  };
}

/**
 * `parseCertificates` for trust pools: the same rules, errors and order, but each certificate
 * is returned as a {@link LazyCertificate} made as soon as it is parsed, so a large bundle never
 * holds more than one full parse at a time.
 */
export function parseCertificatesLazily(input: string | Uint8Array): LazyCertificate[] {
  return parseCertificatesKeeping(input, LazyCertificate.from) as LazyCertificate[];
}
