/**
 * Per-certificate and per-chain crypto scores of CFSSL's `ubiquity/ubiquity_crypto.go` and
 * `ubiquity/performance.go` (behaviour doc 2.7). Signature algorithms are classified by CFSSL's own
 * names (`SHA256WithRSA`…), which is exactly Go's `x509.SignatureAlgorithm` enumeration: anything
 * CFSSL calls `Unknown Signature` (RSA-PSS, Ed448…) scores like Go's `UnknownSignatureAlgorithm`.
 */
import type { Certificate } from '@certsmith/x509-core';

/** Hash ubiquity values (`HashUbiquity`). */
export const HashUbiquity = { Unknown: 0, MD5: 0, MD2: 0, SHA2: 70, SHA1: 100 } as const;

/** Key algorithm ubiquity values (`KeyAlgoUbiquity`). */
export const KeyAlgoUbiquity = {
  Unknown: 0,
  ECDSA521: 30,
  ECDSA256: 70,
  ECDSA384: 70,
  DSA: 100,
  RSA: 100,
} as const;

const SHA2_SIGNATURES = new Set([
  'ECDSAWithSHA256',
  'ECDSAWithSHA384',
  'ECDSAWithSHA512',
  'DSAWithSHA256',
  'SHA256WithRSA',
  'SHA384WithRSA',
  'SHA512WithRSA',
]);
const SHA1_SIGNATURES = new Set(['SHA1WithRSA', 'DSAWithSHA1', 'ECDSAWithSHA1']);

/** True when the certificate is signed with a SHA-1 based algorithm (`helpers.HashAlgoString == "SHA1"`). */
export function isSha1Signed(cert: Certificate): boolean {
  return SHA1_SIGNATURES.has(cert.signatureAlgorithm.name);
}

/** Ubiquity of the certificate's signature hash: SHA-1 100, SHA-2 70, MD2/MD5/other 0. */
export function hashUbiquity(cert: Certificate): number {
  const name = cert.signatureAlgorithm.name;
  if (SHA2_SIGNATURES.has(name)) return HashUbiquity.SHA2;
  if (SHA1_SIGNATURES.has(name)) return HashUbiquity.SHA1;
  return HashUbiquity.Unknown;
}

/** Ubiquity of the certificate's public key: RSA ≥1024 100, DSA 100, P-256/P-384 70, P-521 30, other 0. */
export function keyAlgoUbiquity(cert: Certificate): number {
  const key = cert.publicKey;
  switch (key.algorithm) {
    case 'ECDSA':
      if (key.curve === 'P-256') return KeyAlgoUbiquity.ECDSA256;
      if (key.curve === 'P-384') return KeyAlgoUbiquity.ECDSA384;
      if (key.curve === 'P-521') return KeyAlgoUbiquity.ECDSA521;
      return KeyAlgoUbiquity.Unknown;
    case 'RSA':
      return key.bits >= 1024 ? KeyAlgoUbiquity.RSA : KeyAlgoUbiquity.Unknown;
    case 'DSA':
      return KeyAlgoUbiquity.DSA;
    default:
      return KeyAlgoUbiquity.Unknown;
  }
}

/** Minimum hash ubiquity over every certificate of the chain, root included (`ChainHashUbiquity`). */
export function chainHashUbiquity(chain: readonly Certificate[]): number {
  let min = 2 ** 31 - 1; // Go starts from math.MaxInt32
  for (const cert of chain) min = Math.min(min, hashUbiquity(cert));
  return min;
}

/** Minimum key algorithm ubiquity over every certificate of the chain (`ChainKeyAlgoUbiquity`). */
export function chainKeyAlgoUbiquity(chain: readonly Certificate[]): number {
  let min = 2 ** 31 - 1;
  for (const cert of chain) min = Math.min(min, keyAlgoUbiquity(cert));
  return min;
}

/** Hash priority of one certificate: SHA-1 10, SHA-2 100, other 0 (`performance.go:hashPriority`). */
export function hashPriority(cert: Certificate): number {
  const name = cert.signatureAlgorithm.name;
  if (SHA1_SIGNATURES.has(name)) return 10;
  if (SHA2_SIGNATURES.has(name)) return 100;
  return 0;
}

/**
 * Key priority of one certificate: P-256 100, P-384 120, P-521 140, other curves 100; RSA exactly
 * 4096/3072/2048 → 70/50/30, other sizes 0; DSA and others 0 (`performance.go:keyAlgoPriority`).
 */
export function keyAlgoPriority(cert: Certificate): number {
  const key = cert.publicKey;
  if (key.algorithm === 'ECDSA') {
    if (key.curve === 'P-384') return 120;
    if (key.curve === 'P-521') return 140;
    return 100;
  }
  if (key.algorithm === 'RSA') {
    if (key.bits === 4096) return 70;
    if (key.bits === 3072) return 50;
    if (key.bits === 2048) return 30;
    return 0;
  }
  return 0;
}

/**
 * Go computes the chain average as a running float mean (`ret = ret*(1-1/(i+1)) + p/(i+1)`) and
 * truncates; reproducing the float steps keeps ties identical to CFSSL even where rounding bites.
 */
function runningMean(chain: readonly Certificate[], score: (cert: Certificate) => number): number {
  let ret = 0;
  chain.forEach((cert, i) => {
    const f1 = 1 / (i + 1);
    const f2 = 1 - f1;
    ret = ret * f2 + score(cert) * f1;
  });
  return Math.trunc(ret);
}

/** Chain hash priority: truncated mean of {@link hashPriority} (`HashPriority`). */
export function chainHashPriority(chain: readonly Certificate[]): number {
  return runningMean(chain, hashPriority);
}

/** Chain key priority: truncated mean of {@link keyAlgoPriority} (`KeyAlgoPriority`). */
export function chainKeyAlgoPriority(chain: readonly Certificate[]): number {
  return runningMean(chain, keyAlgoPriority);
}
