/**
 * Expiry helpers of CFSSL's `helpers/helpers.go` (`ExpiryTime`, `MonthsValid`, `ValidExpiry`) used
 * by the rankings and the status (behaviour doc 2.7, 2.8).
 */
import type { Certificate } from '@certsmith/x509-core';

/** The CA/Browser Forum lifetime cut-overs, as Go's `InclusiveDate` (midnight UTC minus 1 ns). */
const JUL_2012 = Date.UTC(2012, 6, 1);
const APR_2015 = Date.UTC(2015, 3, 1);

/** Earliest NotAfter of the chain; `null` for an empty chain (Go returns the zero time). */
export function chainExpiry(chain: readonly Certificate[]): Date | null {
  let earliest: Date | null = null;
  for (const cert of chain) if (earliest === null || cert.notAfter < earliest) earliest = cert.notAfter;
  return earliest;
}

/** Months of validity: 12·Δyear + Δmonth, plus one when NotAfter's day-of-month is later (UTC). */
export function monthsValid(cert: Certificate): number {
  const issued = cert.notBefore;
  const expiry = cert.notAfter;
  let months = (expiry.getUTCFullYear() - issued.getUTCFullYear()) * 12 + expiry.getUTCMonth() - issued.getUTCMonth();
  if (expiry.getUTCDate() > issued.getUTCDate()) months++;
  return months;
}

/**
 * Whether the lifetime is within the CA/B Baseline Requirements limit for its issue date: 39 months
 * when issued from 2015-04-01, 60 from 2012-07-01, 120 before. (Go compares `After(date - 1ns)`,
 * i.e. "at or after midnight"; millisecond times make `>=` the same test.)
 */
export function validExpiry(cert: Certificate): boolean {
  const issued = cert.notBefore.getTime();
  let maxMonths: number;
  if (issued >= APR_2015) maxMonths = 39;
  else if (issued >= JUL_2012) maxMonths = 60;
  else maxMonths = 120;
  return monthsValid(cert) <= maxMonths;
}
