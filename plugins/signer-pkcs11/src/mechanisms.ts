/**
 * From a contract signature algorithm to a PKCS#11 mechanism, and from the token's answer back to
 * the bytes the contract wants.
 *
 * The hash is always computed here, with node:crypto, and the token only signs the digest:
 * `CKM_RSA_PKCS` over a DigestInfo (RFC 8017 §9.2), `CKM_RSA_PKCS_PSS` over the digest with
 * explicit hash/MGF1/salt parameters, `CKM_ECDSA` over the digest. Compared with the combined
 * mechanisms (`CKM_SHA256_RSA_PKCS`, `CKM_ECDSA_SHA384`…):
 * - these three are the base mechanisms every token with RSA or EC keys implements, while the
 *   combined ones are optional (many smart cards and some network HSM clients lack the SHA-384/512
 *   variants, and PKCS#11 v2.20 tokens lack `CKM_ECDSA_SHA*` entirely);
 * - only 32–64 bytes cross the PKCS#11 boundary instead of the whole TBSCertificate, which counts
 *   on network HSMs;
 * - one code path: the hash the issuer named is the hash that is computed, whatever the token's
 *   mechanism table says.
 * The cost is that a key restricted with CKA_ALLOWED_MECHANISMS to combined mechanisms cannot be
 * used (documented in the README).
 */
import { createHash } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

import { MechanismEnum, RsaMgf, RsaPssParams } from 'graphene-pk11';
import type { MechanismType } from 'graphene-pk11';

import type { SignatureAlgorithm } from '@certsmith/signer-api';
import { algorithmsForKeyObject, signatureHash } from '@certsmith/signer-api';
import { derInteger, derNull, derOctetString, derOid, derSequence } from '@certsmith/x509-core';

type Hash = 'sha256' | 'sha384' | 'sha512';

const HASH_OIDS: Readonly<Record<Hash, string>> = {
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
};

const PSS: Readonly<Record<Hash, { hash: MechanismEnum; mgf: RsaMgf; saltLength: number }>> = {
  // Salt as long as the hash: the contract's RSA-PSS definition (RFC 4055, Go's PSSSaltLengthEqualsHash).
  sha256: { hash: MechanismEnum.SHA256, mgf: RsaMgf.MGF1_SHA256, saltLength: 32 },
  sha384: { hash: MechanismEnum.SHA384, mgf: RsaMgf.MGF1_SHA384, saltLength: 48 },
  sha512: { hash: MechanismEnum.SHA512, mgf: RsaMgf.MGF1_SHA512, saltLength: 64 },
};

/** What to hand the token for one signature. */
export interface SignaturePlan {
  /** Mechanism (with parameters for PSS). */
  mechanism: MechanismType;
  /** The bytes the token signs: DigestInfo for PKCS#1 v1.5, the bare digest otherwise. */
  input: Buffer;
  /** True when the token answers raw `r || s` that must become DER (see {@link ecdsaSignatureToDer}). */
  ecdsa: boolean;
}

/** The PKCS#11 mechanism a contract algorithm needs (`null` for algorithms this plugin cannot produce). */
export function mechanismFor(algorithm: SignatureAlgorithm): MechanismEnum | null {
  if (algorithm.startsWith('ECDSA')) return MechanismEnum.ECDSA;
  if (algorithm.startsWith('RSA-PSS')) return MechanismEnum.RSA_PKCS_PSS;
  if (algorithm.startsWith('RSA')) return MechanismEnum.RSA_PKCS;
  // Ed25519 needs CKM_EDDSA (PKCS#11 v3.0), which graphene/pkcs11js 2.x do not expose.
  return null;
}

/**
 * Algorithms for a key, in the local signer's order (CFSSL's hash choice for the key first, e.g.
 * SHA-384 for P-384 and RSA-3072), keeping those the token has a mechanism for. `mechanisms` is the
 * token's mechanism list, `null` when unknown (then the base mechanisms are assumed).
 */
export function algorithmsForKey(publicKey: KeyObject, mechanisms: ReadonlySet<number> | null): SignatureAlgorithm[] {
  return algorithmsForKeyObject(publicKey).filter((algorithm) => {
    const mechanism = mechanismFor(algorithm);
    return mechanism !== null && (mechanisms === null || mechanisms.has(mechanism));
  });
}

/**
 * Hash `data` and describe the token call for `algorithm`. Throws for algorithms without a
 * mechanism (callers only pass algorithms they advertised).
 */
export function planSignature(algorithm: SignatureAlgorithm, data: Uint8Array): SignaturePlan {
  const hash = signatureHash(algorithm);
  if (hash === null || mechanismFor(algorithm) === null) throw new RangeError(`no PKCS#11 mechanism for ${algorithm}`);
  const digest = createHash(hash).update(data).digest();
  if (algorithm.startsWith('ECDSA')) return { mechanism: MechanismEnum.ECDSA, input: digest, ecdsa: true };
  if (algorithm.startsWith('RSA-PSS')) {
    const pss = PSS[hash];
    return { mechanism: { name: 'RSA_PKCS_PSS', params: new RsaPssParams(pss.hash, pss.mgf, pss.saltLength) }, input: digest, ecdsa: false };
  }
  // RFC 8017 §9.2 step 2: DigestInfo ::= SEQUENCE { AlgorithmIdentifier (hash, NULL), OCTET STRING digest }.
  const digestInfo = derSequence(derSequence(derOid(HASH_OIDS[hash]), derNull()), derOctetString(digest));
  return { mechanism: MechanismEnum.RSA_PKCS, input: Buffer.from(digestInfo), ecdsa: false };
}

/**
 * The one place where a token's ECDSA answer becomes the contract's form. PKCS#11 (v2.40 §2.3.1)
 * returns `r || s`, each left-padded to the curve's byte length; X.509 wants
 * `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` (RFC 5480 §2.2 / RFC 3279 §2.2.3).
 */
export function ecdsaSignatureToDer(raw: Uint8Array): Uint8Array {
  if (raw.length === 0 || raw.length % 2 !== 0) throw new RangeError(`ECDSA signature from the token has odd length ${raw.length}`);
  const half = raw.length / 2;
  // derInteger strips leading zeros and adds the 0x00 a set top bit needs: minimal DER.
  return derSequence(derInteger(raw.subarray(0, half)), derInteger(raw.subarray(half)));
}
