/**
 * HTTP dates (RFC 9110 5.6.7 IMF-fixdate): `Wed, 25 Nov 2026 23:00:00 GMT`. CFSSL's responder writes
 * Go's `time.RFC1123` with the zone name, which gives `UTC` (lifecycle spec §0 item 11) — a form
 * RFC 9110 does not allow and some caches reject. certsmith writes `GMT`.
 */

/** IMF-fixdate of `date`. */
export function httpDate(date: Date): string {
  return date.toUTCString();
}
