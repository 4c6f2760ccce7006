/**
 * Who signs OCSP responses for a CA (RFC 6960 4.2.2.2): the CA itself through its signer (local key,
 * HSM, plugin), or a delegated responder — a certificate the CA issued with id-kp-OCSPSigning, whose
 * key is any contract signer (CFSSL's `-responder`/`-responder-key` files become a local signer).
 * The delegation is checked once, here, so a responder certificate that relying parties would reject
 * fails at start-up instead of in every client. CFSSL checks nothing.
 */
import type { Certificate } from '@certsmith/x509-core';
import { computeSubjectKeyId, derExplicit, derOctetString, derSequence, parseCertificate, verifySignature } from '@certsmith/x509-core';

import type { CertIdHashAlgorithm, IssuerHashes } from './cert-id.js';
import { issuerHashes } from './cert-id.js';
import { RevocationSignerError } from './errors.js';
import type { RevocationSigner } from './revocation-signer.js';

/** id-kp-OCSPSigning. */
export const OID_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';

/** ResponderID form: `name` (byName, CFSSL's) or `key` (byKey: SHA-1 of the responder's key bits). */
export type ResponderIdKind = 'name' | 'key';

/** Everything needed to sign responses about the certificates of one CA. */
export interface OcspSigningIdentity {
  /** The CA whose certificates the responses are about. */
  readonly issuer: Certificate;
  /** The key that signs (the CA's or a delegated responder's). */
  readonly signer: RevocationSigner;
  /** True when {@link signer} is a delegated responder, not the CA. */
  readonly delegated: boolean;
  /** Encoded ResponderID (`[1] Name` or `[2] KeyHash`). */
  readonly responderId: Uint8Array;
  /** Encoded `certs` field (`[0] SEQUENCE OF Certificate` with the responder certificate), `null` when the CA signs. */
  readonly certs: Uint8Array | null;
  /** The issuer's CertID hashes for `algorithm` (computed once per algorithm). */
  issuerHashes(algorithm: CertIdHashAlgorithm): IssuerHashes;
}

/** Options of {@link createOcspSigningIdentity}. */
export interface OcspSigningIdentityOptions {
  /** The CA certificate (parsed, or its DER). Defaults to the signer's certificate (the CA signs). */
  issuer?: Certificate | Uint8Array;
  /** The signer of the responses: the CA's, or a delegated responder's. */
  signer: RevocationSigner;
  /** ResponderID form; default `name`, as CFSSL. */
  responderId?: ResponderIdKind;
}

function sameKeyAndName(a: Certificate, b: Certificate): boolean {
  return Buffer.from(a.publicKey.spki).equals(b.publicKey.spki) && Buffer.from(a.subject.der).equals(b.subject.der);
}

function checkDelegation(issuer: Certificate, responder: Certificate): void {
  const problem = (detail: string) =>
    new RevocationSignerError(`the OCSP responder certificate cannot sign for this CA: ${detail}`);
  if (!Buffer.from(responder.issuer.der).equals(issuer.subject.der)) throw problem('it was not issued by the CA (issuer name differs)');
  if (!verifySignature(responder.tbs, responder.signature, responder.signatureAlgorithm, issuer.publicKey)) {
    throw problem('its signature does not verify with the CA key');
  }
  if (!responder.extKeyUsage?.includes(OID_OCSP_SIGNING)) throw problem('it lacks the id-kp-OCSPSigning extended key usage (RFC 6960 4.2.2.2)');
}

/**
 * Prepare an OCSP signing identity.
 *
 * @throws RevocationSignerError (2000) when a delegated responder certificate was not issued by the
 *   CA or lacks id-kp-OCSPSigning.
 */
export function createOcspSigningIdentity(options: OcspSigningIdentityOptions): OcspSigningIdentity {
  const signer = options.signer;
  const issuer = options.issuer === undefined ? signer.certificate : options.issuer instanceof Uint8Array ? parseCertificate(options.issuer) : options.issuer;
  const delegated = !sameKeyAndName(issuer, signer.certificate);
  if (delegated) checkDelegation(issuer, signer.certificate);
  const responderId =
    (options.responderId ?? 'name') === 'name'
      ? derExplicit(1, signer.certificate.subject.der)
      : derExplicit(2, derOctetString(computeSubjectKeyId(signer.certificate.publicKey)));
  const hashes = new Map<CertIdHashAlgorithm, IssuerHashes>();
  return {
    issuer,
    signer,
    delegated,
    responderId,
    // CFSSL embeds the responder certificate except when the CA signs itself (§5.1 item 6).
    certs: delegated ? derExplicit(0, derSequence(signer.certificate.der)) : null,
    issuerHashes(algorithm) {
      let value = hashes.get(algorithm);
      if (value === undefined) {
        value = issuerHashes(issuer, algorithm);
        hashes.set(algorithm, value);
      }
      return value;
    },
  };
}
