/**
 * A signer over a CA certificate and private key held in memory (CFSSL's local signer, behaviour
 * doc 4.2). Loading is strict where CFSSL is lax: the key must match the certificate (2300) and
 * encrypted keys are refused (2100) instead of being decrypted with a password from the
 * environment.
 */
import type { KeyObject } from 'node:crypto';

import type { SignatureAlgorithm, Signer, SignerCertificate, SignerHealth, SignerLogger } from '@certsmith/signer-api';
import { SignerUnavailableError, createPrivateKeySigning } from '@certsmith/signer-api';
import type { PrivateKeySigning } from '@certsmith/signer-api';
import type { Certificate } from '@certsmith/x509-core';
import {
  CertificateParseError,
  CertsmithError,
  ErrorCode,
  assertKeyMatchesCertificate,
  certificateToPem,
  parseCertificates,
  parsePrivateKey,
} from '@certsmith/x509-core';

/** A local signer; `certificate` is the parsed CA certificate for callers that want its facts. */
export interface LocalSigner extends Signer {
  readonly certificate: Certificate;
}

/**
 * Parse the CA certificate PEM: exactly one certificate (1002/1003 from the parser; more than one
 * → 1003 `the PEM file should contain only one object`, as cfssl `helpers.ParseCertificatePEM`).
 */
export function parseCaCertificate(pem: string): Certificate {
  const certificates = parseCertificates(pem);
  if (certificates.length !== 1) throw new CertificateParseError('the PEM file should contain only one object');
  return certificates[0] as Certificate;
}

/**
 * Build a signer from PEM texts. Throws 1002/1003 (certificate), 2002/2003 (key), 2100 (encrypted
 * key), 2200 (unsupported certificate key), 2300 (key does not match the certificate).
 */
export function createLocalSignerFromPem(certificatePem: string, keyPem: string, logger?: SignerLogger): LocalSigner {
  const certificate = parseCaCertificate(certificatePem);
  const parsedKey = parsePrivateKey(keyPem);
  assertKeyMatchesCertificate(parsedKey, certificate);
  if (logger) {
    // CFSSL signs with any certificate; a non-CA certificate makes every issued chain invalid, so say so.
    if (!certificate.basicConstraints?.ca) logger.warn('CA certificate lacks basicConstraints CA:TRUE; issued certificates will not verify');
    if (certificate.keyUsage !== null && (certificate.keyUsage & (1 << 5)) === 0) {
      logger.warn('CA certificate key usage lacks keyCertSign; issued certificates will not verify');
    }
  }
  return createLocalSigner(certificate, parsedKey.keyObject);
}

/** Build a signer from a parsed certificate and a node:crypto private key (no checks). */
export function createLocalSigner(certificate: Certificate, privateKey: KeyObject): LocalSigner {
  // The key signs through signer-api's in-memory signing: the native ECDSA addon where it can.
  let key: PrivateKeySigning | null = createPrivateKeySigning(privateKey);
  const algorithms = key.algorithms;
  if (algorithms.length === 0) throw new CertsmithError(ErrorCode.PrivateKeyUnsupportedAlgorithm);
  const caCertificate: SignerCertificate = Object.freeze({ der: certificate.der, pem: certificateToPem(certificate.der) });

  return {
    certificate,
    algorithms,
    async getCertificate(): Promise<SignerCertificate> {
      return caCertificate;
    },
    async sign(tbs: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array> {
      if (key === null) throw new SignerUnavailableError('signer is closed');
      if (!algorithms.includes(algorithm)) {
        throw new SignerUnavailableError(`signer cannot sign with ${algorithm}; it offers ${algorithms.join(', ')}`);
      }
      try {
        return await key.sign(tbs, algorithm);
      } catch (cause) {
        throw new SignerUnavailableError(undefined, { cause });
      }
    },
    async health(): Promise<SignerHealth> {
      return key === null ? { ok: false, message: 'signer is closed' } : { ok: true };
    },
    async close(): Promise<void> {
      key?.dispose();
      key = null;
    },
  };
}
