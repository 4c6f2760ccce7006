/**
 * The TBSCertificate of a self-signed CA as CFSSL's `initca` issues it (behaviour doc 3.10): v3,
 * issuer = subject, keyUsage keyCertSign + cRLSign (critical), basicConstraints CA:TRUE with an
 * optional pathLenConstraint (critical), subject key identifier, and no authority key identifier
 * (Go omits it when issuer and subject are the same). Serial, validity, name and signature algorithm
 * are the caller's: a development CA, an HSM CA and a test CA choose them differently.
 */
import { encodeTbsCertificate } from './certificate-builder.js';
import { computeSubjectKeyId } from './certificate-facts.js';
import { DerReader } from './der-reader.js';
import { derBoolean, derInteger, derNamedBitString, derOctetString, derSequence } from './der-writer.js';
import { derExtension } from './extensions.js';
import { readPublicKeyInfo } from './public-key-info.js';

/** Input of {@link buildSelfSignedCaTbs}. */
export interface SelfSignedCaTbsOptions {
  /** DER Name, used as both issuer and subject. */
  name: Uint8Array;
  /** SubjectPublicKeyInfo DER of the CA key. */
  spki: Uint8Array;
  /** DER AlgorithmIdentifier of the signature that will be made over the result. */
  signatureAlgorithm: Uint8Array;
  /** Serial number magnitude (positive, at most 20 octets; RFC 5280 4.1.2.2). */
  serial: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** basicConstraints pathLenConstraint; absent = no limit. */
  pathLength?: number | undefined;
}

/** KeyUsage bits 5 (keyCertSign) and 6 (cRLSign), RFC 5280 4.2.1.3. */
const CA_KEY_USAGE = (1 << 5) | (1 << 6);

/** Build the TBSCertificate DER of a self-signed CA; sign it and wrap it with the same AlgorithmIdentifier. */
export function buildSelfSignedCaTbs(options: SelfSignedCaTbsOptions): Uint8Array {
  const reader = new DerReader(options.spki);
  const publicKey = readPublicKeyInfo(options.spki, reader.expect(0x30, 'SubjectPublicKeyInfo'), reader);
  const basicConstraints =
    options.pathLength === undefined ? derSequence(derBoolean(true)) : derSequence(derBoolean(true), derInteger(options.pathLength));
  return encodeTbsCertificate({
    serial: options.serial,
    signatureAlgorithm: options.signatureAlgorithm,
    issuer: options.name,
    notBefore: options.notBefore,
    notAfter: options.notAfter,
    subject: options.name,
    spki: options.spki,
    extensions: [
      derExtension('2.5.29.15', true, derNamedBitString(CA_KEY_USAGE)),
      derExtension('2.5.29.19', true, basicConstraints),
      derExtension('2.5.29.14', false, derOctetString(computeSubjectKeyId(publicKey))),
    ],
  });
}
