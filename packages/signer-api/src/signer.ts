/**
 * The `Signer` contract: a CA key the issuer can use. It is deliberately narrow (style guide,
 * "Plugin contract"): the signer knows its certificate and its algorithms and produces signatures;
 * building certificates, applying policy and encoding DER are the issuer's job. A remote signer that
 * cannot expose raw signing (CFSSL remote/multiroot, behaviour doc 4.4/4.6) offers
 * {@link Signer.signRequest} instead.
 */
import type { SignatureAlgorithm } from './signature-algorithm.js';
import type { InfoRequest, InfoResult, SignRequest, SignRequestResult } from './sign-request.js';

/** The CA certificate of a signer. */
export interface SignerCertificate {
  /** Certificate DER. */
  der: Uint8Array;
  /** The same certificate as PEM (`CERTIFICATE` block, trailing newline). */
  pem: string;
}

/** Outcome of a health probe. */
export interface SignerHealth {
  ok: boolean;
  /** Why the signer is unhealthy (never a secret). */
  message?: string;
}

/**
 * A CA signing backend. Implementations must be safe to call concurrently. Every method that
 * can fail rejects with a `CertsmithError` carrying a CFSSL code (e.g. 2500 when the key is
 * unavailable), never with a message that contains key material or PINs.
 */
export interface Signer {
  /**
   * The CA certificate. Local signers resolve immediately; a remote signer may fetch it lazily
   * (CFSSL `/info`) and should cache it. The issuer derives the issuer name and the authority key
   * identifier from it once per signer.
   */
  getCertificate(): Promise<SignerCertificate>;

  /**
   * Signature algorithms {@link Signer.sign} accepts, most preferred first. Empty for a signer that
   * only implements {@link Signer.signRequest}.
   */
  readonly algorithms: readonly SignatureAlgorithm[];

  /**
   * Sign the DER of a TBSCertificate (or CertificationRequestInfo) with `algorithm`, which is
   * always one of {@link Signer.algorithms}. Returns the bytes that go into the signature BIT
   * STRING: an ECDSA signature as DER `SEQUENCE { r, s }`, RSA and Ed25519 signatures raw.
   */
  sign?(tbs: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array>;

  /**
   * Sign a whole CFSSL sign request and return the certificate. For signers that enforce policy
   * themselves (a remote multi-root CA); the issuer uses {@link Signer.sign} when present and
   * falls back to this otherwise.
   */
  signRequest?(request: SignRequest): Promise<SignRequestResult>;

  /**
   * CFSSL `/info` answered by the signer itself (remote signers that know the remote profiles).
   * When absent, the issuer answers from the local policy and {@link Signer.getCertificate}.
   */
  info?(request: InfoRequest): Promise<InfoResult>;

  /** Cheap liveness check (HSM session alive, remote reachable). Absent means "always healthy". */
  health?(): Promise<SignerHealth>;

  /** Release sessions, handles and key material. Idempotent: later calls resolve immediately. */
  close(): Promise<void>;
}
