/**
 * The certificates a client submits for bundling, parsed with the trust pools' help: clients send
 * the same few intermediates with many leaves, and a certificate the pools already hold (trust
 * data, or an intermediate learned from an earlier bundle or AIA) need not be parsed again
 * (docs/performance.md#bundle-cpu-per-request). This is a lookup in the server's own pools by the
 * DER's fingerprint, never a cache of request results.
 */
import { LazyCertificate, decodeOwnedCertificate, parseCertificatesDecoding, type Certificate } from '@certsmith/x509-core';
import { derFingerprint, rememberFingerprint, type TrustPools } from './certificate-pool.js';

/**
 * The parsed data of a pool certificate, to stand for a submitted certificate with the same DER.
 * A lazy pool certificate gives its full parse (a plain certificate, not the pool entry); a plain
 * one is itself a parse of the same bytes. Either is immutable parsed data: nothing of the pool
 * entry (which pool, learned or not) travels with it, the bundler treats it by its contents.
 * `undefined` when the pool copy cannot be parsed in full (a trust file certificate only indexed
 * at start-up): the submitted bytes are then parsed as usual, with the parser's own error.
 */
function poolParse(entry: Certificate): Certificate | undefined {
  if (!(entry instanceof LazyCertificate)) return entry;
  try {
    return entry.parsed();
  } catch {
    return undefined;
  }
}

/**
 * `parseCertificates` (same input rules, errors and order) for a bundle request: each certificate's
 * DER is fingerprinted first, and one the pools hold is taken from them instead of parsed again.
 * A certificate they do not hold is parsed and keeps its fingerprint, which path building asks for
 * anyway, so a miss costs no more than before.
 *
 * @throws CertificateDecodeError (1002) or CertificateParseError (1003), as `parseCertificates`
 */
export function parseSubmittedCertificates(input: string | Uint8Array, pools: TrustPools): Certificate[] {
  return parseCertificatesDecoding(input, (der) => {
    const fingerprint = derFingerprint(der);
    const entry = pools.intermediates.byFingerprint(fingerprint) ?? pools.roots.byFingerprint(fingerprint);
    const known = entry === undefined ? undefined : poolParse(entry);
    if (known !== undefined) {
      rememberFingerprint(known, fingerprint);
      return known;
    }
    const parsed = decodeOwnedCertificate(der);
    rememberFingerprint(parsed, fingerprint);
    return parsed;
  });
}
