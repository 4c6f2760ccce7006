/**
 * The certinfo use case (CFSSL `certinfo/certinfo.go`): a certificate — given as PEM, as a file's
 * bytes, or as the leaf a TLS server presents — described in CFSSL's certinfo JSON. The JSON itself
 * is x509-core's (`toCertinfoResult`, beside the other certificate facts); the remote fetch is
 * chain-builder's (`fetchPeerCertificates`); this module composes them with CFSSL's input rules.
 */
import { fetchPeerCertificates } from '@certsmith/chain-builder';
import type { PeerGuard } from '@certsmith/chain-builder';
import { CertificateParseError, CertsmithError, ErrorCode, parseCertificates, toCertinfoResult } from '@certsmith/x509-core';
import type { CertinfoResult } from '@certsmith/x509-core';

/** CFSSL's certinfo dial timeout (`ParseCertificateDomain`: connect and handshake). */
export const CERTINFO_DIAL_TIMEOUT_MS = 10_000;

/**
 * certinfo of PEM text holding exactly one certificate, as CFSSL's `helpers.ParseCertificatePEM`:
 * no certificate → 1002 `Failed to decode certificate`; not a certificate → 1003; more than one →
 * 1003 `the PEM file should contain only one object`.
 */
export function describeCertificatePem(pem: string): CertinfoResult {
  return describeOne(parseCertificates(pem));
}

/**
 * certinfo of a certificate file's bytes (`cfssl certinfo -cert`): PEM under the rules of
 * {@link describeCertificatePem}, otherwise DER (or PKCS#7) holding exactly one certificate.
 */
export function describeCertificateBytes(bytes: Uint8Array): CertinfoResult {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.includes('-----BEGIN')) return describeCertificatePem(text);
  return describeOne(parseCertificates(bytes));
}

function describeOne(certificates: ReturnType<typeof parseCertificates>): CertinfoResult {
  if (certificates.length > 1) throw new CertificateParseError('the PEM file should contain only one object');
  return toCertinfoResult(certificates[0]!);
}

/** Options of {@link describeServerCertificate}. */
export interface DescribeServerCertificateOptions {
  /** Connect + handshake timeout. Default {@link CERTINFO_DIAL_TIMEOUT_MS} (CFSSL's). */
  timeoutMs?: number;
  /** Asked about every address before connecting (the server's SSRF guard); default: anywhere (the CLI). */
  guard?: PeerGuard;
}

/**
 * certinfo of the leaf certificate a TLS server presents (CFSSL `ParseCertificateDomain`):
 * `domain` is `host` or `host:port` (port 443 by default); the certificate is described whether or
 * not it is trusted.
 * @throws DialError 6000 with Go's dial text when the server cannot be reached
 */
export async function describeServerCertificate(domain: string, options: DescribeServerCertificateOptions = {}): Promise<CertinfoResult> {
  const peer = await fetchPeerCertificates({
    domain,
    // CFSSL dials with InsecureSkipVerify: one unverified handshake.
    strict: false,
    timeoutMs: options.timeoutMs ?? CERTINFO_DIAL_TIMEOUT_MS,
    ...(options.guard ? { guard: options.guard } : {}),
  });
  const leaf = peer.certificates[0];
  if (leaf === undefined) throw new CertsmithError(ErrorCode.DialFailed, 'received no server certificates');
  return toCertinfoResult(leaf);
}
