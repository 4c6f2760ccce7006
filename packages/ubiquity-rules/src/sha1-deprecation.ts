/**
 * Browser SHA-1 deprecation policies (`ubiquity/sha1.go`; behaviour doc 2.8.1). CFSSL collects the
 * flagged policies in a Go map and emits messages in map iteration order, i.e. randomly; certsmith
 * emits them in the order platforms first appear in {@link SHA1_DEPRECATION_POLICIES} (Google
 * Chrome, Mozilla Firefox, Microsoft Windows Vista and later), so responses are reproducible.
 */
import type { Certificate } from '@certsmith/x509-core';
import { isSha1Signed } from './crypto-scores.js';

/** Severity of a policy (`DeprecationSeverity`). */
export const DeprecationSeverity = { None: 0, Low: 1, Medium: 2, High: 3 } as const;

/** One deprecation policy. `null` dates are Go's zero time (not set). */
export interface Sha1DeprecationPolicy {
  platform: string;
  description: string;
  severity: number;
  /** The policy applies only after this instant; `null` = always. */
  effectiveDate: Date | null;
  /** Flags chains whose leaf is still valid after this date and that hold a SHA-1 non-root cert. */
  expiryDeadline: Date | null;
  /** Flags SHA-1 leaves issued (NotBefore) after this date in chains longer than one. */
  neverIssueAfter: Date | null;
}

const utc = (y: number, m: number, d: number): Date => new Date(Date.UTC(y, m - 1, d));

/** CFSSL's built-in table, in its order. */
export const SHA1_DEPRECATION_POLICIES: readonly Sha1DeprecationPolicy[] = Object.freeze([
  {
    platform: 'Google Chrome',
    description: 'shows the SSL connection has minor problems',
    severity: DeprecationSeverity.Medium,
    effectiveDate: null,
    expiryDeadline: utc(2016, 1, 1),
    neverIssueAfter: null,
  },
  {
    platform: 'Google Chrome',
    description: 'shows the SSL connection is untrusted',
    severity: DeprecationSeverity.High,
    effectiveDate: null,
    expiryDeadline: utc(2017, 1, 1),
    neverIssueAfter: null,
  },
  {
    platform: 'Mozilla Firefox',
    description: 'gives warning in the developer console',
    severity: DeprecationSeverity.Low,
    effectiveDate: null,
    expiryDeadline: utc(2017, 1, 1),
    neverIssueAfter: null,
  },
  {
    platform: 'Mozilla Firefox',
    description: 'shows the SSL connection is untrusted',
    severity: DeprecationSeverity.Medium,
    effectiveDate: utc(2016, 1, 1),
    expiryDeadline: null,
    neverIssueAfter: utc(2016, 1, 1),
  },
  {
    platform: 'Mozilla Firefox',
    description: 'shows the SSL connection is untrusted',
    severity: DeprecationSeverity.High,
    effectiveDate: utc(2017, 1, 1),
    expiryDeadline: utc(2017, 1, 1),
    neverIssueAfter: null,
  },
  {
    platform: 'Microsoft Windows Vista and later',
    description: 'shows the SSL connection is untrusted',
    severity: DeprecationSeverity.High,
    effectiveDate: utc(2017, 1, 1),
    expiryDeadline: utc(2017, 1, 1),
    neverIssueAfter: null,
  },
]);

/** Whether a certificate of `chain` other than its last (the root) is SHA-1 signed. */
function hasSha1BelowRoot(chain: readonly Certificate[]): boolean {
  for (let i = 0; i < chain.length - 1; i++) if (isSha1Signed(chain[i] as Certificate)) return true;
  return false;
}

/** Whether `policy` flags `chain` (leaf first, root last) at `now` (`SHA1DeprecationPolicy.Flag`). */
export function flagsChain(policy: Sha1DeprecationPolicy, chain: readonly Certificate[], now: Date): boolean {
  const leaf = chain[0];
  if (!leaf) return false;
  if (policy.effectiveDate !== null && !(now > policy.effectiveDate)) return false;
  if (policy.neverIssueAfter !== null && leaf.notBefore > policy.neverIssueAfter) {
    if (chain.length > 1 && isSha1Signed(leaf)) return true;
  }
  return policy.expiryDeadline !== null && leaf.notAfter > policy.expiryDeadline && hasSha1BelowRoot(chain);
}

/**
 * One message per platform whose most severe flagging policy has severity > None:
 * `<platform> <description> due to SHA-1 deprecation` (ties keep the first policy of the table).
 */
export function sha1DeprecationMessages(
  chain: readonly Certificate[],
  now: Date,
  policies: readonly Sha1DeprecationPolicy[] = SHA1_DEPRECATION_POLICIES,
): string[] {
  // Every policy flags only a chain with a SHA-1 signed certificate below its root (flagsChain), so
  // a SHA-2 chain — nearly every chain — needs no policy walk (docs/performance.md#bundle-cpu-per-request).
  if (!hasSha1BelowRoot(chain)) return [];
  const selected = new Map<string, Sha1DeprecationPolicy>();
  for (const policy of policies) {
    if (!flagsChain(policy, chain, now)) continue;
    const current = selected.get(policy.platform);
    if ((current?.severity ?? DeprecationSeverity.None) < policy.severity) selected.set(policy.platform, policy);
  }
  const messages: string[] = [];
  for (const platform of new Set(policies.map((p) => p.platform))) {
    const policy = selected.get(platform);
    if (policy && policy.severity > DeprecationSeverity.None) {
      messages.push(`${policy.platform} ${policy.description} due to SHA-1 deprecation`);
    }
  }
  return messages;
}
