/**
 * RFC 5280 5.3.1 CRLReason: the names and codes, and the three ways CFSSL accepts a reason —
 * the revoke API/CLI (a name or a number, lifecycle spec §3.1), certadd (an integer from a fixed
 * list, §3.5) and ocspsign (a JSON integer, §3.4).
 */
import { InvalidReasonError } from './errors.js';

/** CRLReason codes by RFC 5280 name. 7 is not assigned. */
export const RevocationReason = {
  unspecified: 0,
  keyCompromise: 1,
  cACompromise: 2,
  affiliationChanged: 3,
  superseded: 4,
  cessationOfOperation: 5,
  certificateHold: 6,
  removeFromCRL: 8,
  privilegeWithdrawn: 9,
  aACompromise: 10,
} as const;

/** An RFC 5280 CRLReason name. */
export type RevocationReasonName = keyof typeof RevocationReason;

/** An RFC 5280 CRLReason code (0–6, 8–10). */
export type RevocationReasonCode = (typeof RevocationReason)[RevocationReasonName];

/** Every valid code, ascending: the list CFSSL's certadd checks against (§3.5). */
export const REVOCATION_REASON_CODES: readonly RevocationReasonCode[] = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10];

const NAME_BY_CODE = new Map<number, RevocationReasonName>(
  (Object.entries(RevocationReason) as Array<[RevocationReasonName, RevocationReasonCode]>).map(([name, code]) => [code, name]),
);
const CODE_BY_LOWER_NAME = new Map<string, RevocationReasonCode>(
  (Object.entries(RevocationReason) as Array<[RevocationReasonName, RevocationReasonCode]>).map(([name, code]) => [name.toLowerCase(), code]),
);

/** True for an RFC 5280 CRLReason code: an integer in 0–6 or 8–10. */
export function isRevocationReasonCode(value: unknown): value is RevocationReasonCode {
  return typeof value === 'number' && NAME_BY_CODE.has(value);
}

/** RFC 5280 name of a code (`keyCompromise`), or `null` for a number that is not a CRLReason. */
export function revocationReasonName(code: number): RevocationReasonName | null {
  return NAME_BY_CODE.get(code) ?? null;
}

/**
 * The reason of a revoke request (API `reason`, CLI `-reason`), as CFSSL's `ReasonStringToCode`
 * reads it: empty → 0 (unspecified); a CRLReason name in any case (`KeyCompromise`,
 * `keycompromise`); otherwise a decimal integer.
 *
 * Deliberate difference: CFSSL accepts the numbers 1–9 only, so `0` and `10` fail although
 * `unspecified` and `aACompromise` work, and the unassigned `7` passes (cfssl #1045). certsmith
 * accepts exactly the CRLReason codes 0–6 and 8–10 — the list CFSSL's own certadd uses — so a CLI
 * whose `-reason` default is `"0"` works. Go's `strconv.Atoi` forms are kept (`+5`, `05`).
 *
 * @throws InvalidReasonError (400 `Invalid reason code`) for anything else.
 */
export function parseRevocationReason(reason: string | undefined | null): RevocationReasonCode {
  if (reason === undefined || reason === null || reason === '') return RevocationReason.unspecified;
  const named = CODE_BY_LOWER_NAME.get(reason.toLowerCase());
  if (named !== undefined) return named;
  if (!/^[+-]?\d{1,19}$/.test(reason)) throw new InvalidReasonError();
  const code = Number(reason);
  if (!isRevocationReasonCode(code)) throw new InvalidReasonError();
  return code;
}

/**
 * The reason of a certadd row (CFSSL §3.5: an integer in 0–6, 8–10, message `Invalid certificate
 * status reason code`). Returns the code; throws {@link InvalidReasonError} with CFSSL's message.
 */
export function parseCertaddReason(reason: unknown): RevocationReasonCode {
  if (!isRevocationReasonCode(reason)) throw new InvalidReasonError('Invalid certificate status reason code');
  return reason;
}

/**
 * The `reason` of an ocspsign body (§3.4: a JSON integer; absent → 0). CFSSL does not range-check it
 * and signs whatever ENUMERATED it is given; certsmith refuses a number that is not a CRLReason
 * (400), since a relying party cannot interpret it.
 */
export function parseOcspSignReason(reason: unknown): RevocationReasonCode {
  if (reason === undefined || reason === null) return RevocationReason.unspecified;
  if (!isRevocationReasonCode(reason)) {
    throw new InvalidReasonError(`reason must be an RFC 5280 CRLReason code (0-6, 8-10), got ${JSON.stringify(reason)}`);
  }
  return reason;
}
