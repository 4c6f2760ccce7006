/**
 * The ubiquity part of a bundle's `status` (behaviour doc 2.8): expiry, SHA-2, ECDSA, root trust and
 * SHA-1 deprecation messages with CFSSL's exact texts and code bits, computed on the chain *with*
 * its root. The bundle use case adds `rebundled` and the remote-mode handshake message.
 */
import type { Certificate } from '@certsmith/x509-core';
import { chainHashUbiquity, chainKeyAlgoUbiquity, HashUbiquity, KeyAlgoUbiquity } from './crypto-scores.js';
import { untrustedPlatforms, type Platform } from './platform.js';
import { sha1DeprecationMessages } from './sha1-deprecation.js';

/** Status code bit: the bundle contains a certificate expiring within 30 days (`BundleExpiringBit`). */
export const BUNDLE_EXPIRING_BIT = 1;
/** Status code bit: the bundle has a ubiquity problem (`BundleNotUbiquitousBit`). */
export const BUNDLE_NOT_UBIQUITOUS_BIT = 2;

/** CFSSL's warning texts. */
export const StatusMessage = {
  /** Prefix of the expiry warning; note: no space before the next sentence. */
  expiringStub: 'The bundle is expiring within 30 days.',
  sha2:
    'The bundle contains certificates signed with advanced hash functions such as SHA2, which are problematic for certain operating systems, e.g. Windows XP SP2.',
  ecdsa:
    'The bundle contains ECDSA signatures, which are problematic for certain operating systems, e.g. Windows XP, Android 2.2 and Android 2.3.',
  noPlatforms: 'Unable to measure bundle ubiquity: No platform metadata present.',
  untrustedStub: 'The bundle may not be trusted by the following platform(s):',
} as const;

/** 720 hours: `NotAfter.Sub(now).Hours() < 720`. */
const EXPIRY_WINDOW_MS = 720 * 3_600_000;

/** 0-based indices of chain certificates whose NotAfter is less than 30 days away (or past). */
export function expiringCertificateIndices(chain: readonly Certificate[], now: Date): number[] {
  const indices: number[] = [];
  chain.forEach((cert, i) => {
    if (cert.notAfter.getTime() - now.getTime() < EXPIRY_WINDOW_MS) indices.push(i);
  });
  return indices;
}

/**
 * `The bundle is expiring within 30 days.The expiring cert is #1 in the chain.` — singular or
 * plural (`certs are #1 #3`), 1-based positions, `''` for none (`expirationWarning`).
 */
export function expirationWarning(indices: readonly number[]): string {
  if (indices.length === 0) return '';
  const subject = indices.length > 1 ? 'The expiring certs are' : 'The expiring cert is';
  return `${StatusMessage.expiringStub}${subject}${indices.map((i) => ` #${i + 1}`).join('')} in the chain.`;
}

/**
 * The root trust warning: the no-metadata text when no platforms are loaded, `''` when every
 * platform trusts the root, else `...platform(s): A, B.` (`untrustedPlatformsWarning`).
 */
export function untrustedPlatformsWarning(untrusted: readonly string[], platformCount: number): string {
  if (platformCount === 0) return StatusMessage.noPlatforms;
  if (untrusted.length === 0) return '';
  return `${StatusMessage.untrustedStub}${untrusted.map((name, i) => `${i > 0 ? ',' : ''} ${name}`).join('')}.`;
}

/** Upper-case hex without separators of the SKI (Go `%X`); `''` when the cert has none. */
export function skiHex(cert: Certificate): string {
  return cert.subjectKeyId ? Buffer.from(cert.subjectKeyId).toString('hex').toUpperCase() : '';
}

/** Inputs of {@link assessChain}. */
export interface AssessChainOptions {
  platforms: readonly Platform[];
  now: Date;
  /** false for the force flavor: no root is identified, no trust check, `untrustedRootStores: null`. */
  checkRootTrust: boolean;
}

/** The status fields ubiquity-rules owns. Arrays are `null` where CFSSL's JSON has `null`. */
export interface ChainAssessment {
  expiringSkis: string[] | null;
  untrustedRootStores: string[] | null;
  messages: string[] | null;
  code: number;
}

/**
 * Status of a chain (leaf first, root last), messages in CFSSL's order: expiry, SHA-2, ECDSA, root
 * trust, SHA-1 deprecation.
 */
export function assessChain(chain: readonly Certificate[], options: AssessChainOptions): ChainAssessment {
  const messages: string[] = [];
  let code = 0;
  const expiring = expiringCertificateIndices(chain, options.now);
  if (expiring.length > 0) {
    code |= BUNDLE_EXPIRING_BIT;
    messages.push(expirationWarning(expiring));
  }
  if (chainHashUbiquity(chain) <= HashUbiquity.SHA2) {
    code |= BUNDLE_NOT_UBIQUITOUS_BIT;
    messages.push(StatusMessage.sha2);
  }
  if (chainKeyAlgoUbiquity(chain) <= KeyAlgoUbiquity.ECDSA256) {
    code |= BUNDLE_NOT_UBIQUITOUS_BIT;
    messages.push(StatusMessage.ecdsa);
  }
  let untrusted: string[] | null = null;
  if (options.checkRootTrust && chain.length > 0) {
    untrusted = untrustedPlatforms(chain[chain.length - 1] as Certificate, options.platforms);
    const warning = untrustedPlatformsWarning(untrusted, options.platforms.length);
    if (warning !== '') {
      code |= BUNDLE_NOT_UBIQUITOUS_BIT;
      messages.push(warning);
    }
  }
  const sha1 = sha1DeprecationMessages(chain, options.now);
  if (sha1.length > 0) {
    code |= BUNDLE_NOT_UBIQUITOUS_BIT;
    messages.push(...sha1);
  }
  return {
    expiringSkis: expiring.length > 0 ? expiring.map((i) => skiHex(chain[i] as Certificate)) : null,
    untrustedRootStores: untrusted,
    messages: messages.length > 0 ? messages : null,
    code,
  };
}
