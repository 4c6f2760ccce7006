/**
 * CFSSL's `sums` (behaviour doc 3.8, `api/generator.computeSum`): MD5, SHA-1 and SHA-256 of the
 * DER bytes (not the PEM text), upper-case hexadecimal, keys in that order.
 */
import { hash } from 'node:crypto';

/** Digests of one DER object. */
export interface Sums {
  md5: string;
  'sha-1': string;
  'sha-256': string;
}

/** Compute the three digests of `der`. */
export function computeSums(der: Uint8Array): Sums {
  // One-shot `crypto.hash` avoids a Hash object per digest (measurably cheaper on the newcert path).
  return {
    md5: hash('md5', der, 'hex').toUpperCase(),
    'sha-1': hash('sha1', der, 'hex').toUpperCase(),
    'sha-256': hash('sha256', der, 'hex').toUpperCase(),
  };
}
