import { buildCertificate, type CertificateOptions, type TestCertificate } from './certificate-builder.js';

const DAY = 86_400_000;

/** Options shared by the role helpers: everything but the subject and issuer. */
export type RoleOptions = Omit<CertificateOptions, 'subject' | 'issuer'>;

/**
 * A test PKI anchored at a fixed `now`, so validity windows ("expiring in 10 days", "expired
 * yesterday") are exact and tests can inject the same clock into the code under test.
 *
 * @example
 * const pki = new TestPki({ now });
 * const root = pki.root('Test Root', { key: 'rsa-2048' });
 * const inter = pki.intermediate('Test Inter', root, { pathLen: 0 });
 * const leaf = pki.leaf('www.example.com', inter, { key: 'ecdsa-p384' });
 */
export class TestPki {
  /** The reference time of every default validity window. */
  readonly now: Date;

  constructor(options: { now?: Date } = {}) {
    this.now = options.now ?? new Date();
  }

  /** A date `n` days from `now` (negative for the past). */
  days(n: number): Date {
    return new Date(this.now.getTime() + n * DAY);
  }

  /** Any certificate, fully specified. */
  issue(options: CertificateOptions): TestCertificate {
    return buildCertificate(options, this.now);
  }

  /** Self-signed CA (basicConstraints cA, keyCertSign|cRLSign, SKI, no AKI). Default RSA 2048. */
  root(name: CertificateOptions['subject'], options: RoleOptions = {}): TestCertificate {
    return this.issue({ key: 'rsa-2048', ...options, subject: name, ca: true });
  }

  /** CA certificate signed by `issuer`. Default ECDSA P-256, 3-year validity. */
  intermediate(name: CertificateOptions['subject'], issuer: TestCertificate, options: RoleOptions = {}): TestCertificate {
    return this.issue({ ...options, subject: name, issuer, ca: true });
  }

  /**
   * End-entity certificate signed by `issuer`: CA:FALSE, serverAuth+clientAuth, 90 days, and the
   * name as a DNS SAN unless `dns` is given.
   */
  leaf(name: string, issuer: TestCertificate, options: RoleOptions = {}): TestCertificate {
    return this.issue({ dns: [name], ...options, subject: name, issuer, ca: false });
  }

  /**
   * The same subject and key as `certificate`, signed by `newIssuer` (a cross-signed CA). Overrides
   * (validity, hash, pathLen…) apply on top of the original options.
   */
  crossSign(certificate: TestCertificate, newIssuer: TestCertificate, overrides: RoleOptions = {}): TestCertificate {
    return this.issue({
      ...certificate.options,
      notBefore: certificate.notBefore,
      notAfter: certificate.notAfter,
      serialHex: undefined,
      ...overrides,
      key: certificate.key,
      issuer: newIssuer,
    });
  }
}

/** Concatenate PEMs in the given order (leaf first for a bundle request). */
export function chainPem(...certificates: TestCertificate[]): string {
  return certificates.map((c) => c.pem).join('');
}

/** PEM text with surrounding whitespace trimmed, as CFSSL's bundle JSON prints certificates. */
export function trimmedPem(certificate: TestCertificate): string {
  return certificate.pem.trim();
}
