/**
 * The bundle result as JSON text, exactly what `JSON.stringify(result)` gives, for the `bundle`
 * endpoint's worker task. Written out field by field because V8 escapes a string's characters one
 * at a time once it holds a single `\n`, and a bundle result is mostly PEM: a native `replaceAll` on
 * the PEM fields does the same in a fraction of the time (docs/performance.md#bundle-cpu-per-request).
 */
import type { BundleResult } from './bundle-certificate.js';

/**
 * JSON string of PEM text made by x509-core's encoders or OpenSSL's key export: base64 lines,
 * `-----BEGIN …-----` labels and `\n` line breaks — `\n` is its only character JSON escapes.
 */
function pemJson(pem: string): string {
  return `"${pem.replaceAll('\n', '\\n')}"`;
}

/**
 * A character `JSON.stringify` writes otherwise than itself: `"`, `\\`, a control character, or a
 * UTF-16 surrogate (a lone one is escaped; a pair is not, but is rare enough to take the slow path).
 */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * `JSON.stringify(text)`. Most texts here need no escape, and V8's `JSON.stringify` takes ≈2 ns a
 * character (≈0.3 µs for one of the status messages) where the native regular-expression scan takes
 * well under half of that.
 */
function stringJson(text: string): string {
  return ESCAPED.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** `JSON.stringify(list)` for a list of strings or `null` (see {@link stringJson}). */
function stringsJson(list: readonly string[] | null): string {
  if (list === null) return 'null';
  let json = '[';
  for (let index = 0; index < list.length; index += 1) {
    if (index > 0) json += ',';
    json += stringJson(list[index]!);
  }
  return `${json}]`;
}

/**
 * `JSON.stringify(result)`, byte for byte, for a result built by `bundleCertificate` (keys in its
 * order; `bundle`, `crt`, `root` and `key` are PEM text, see {@link pemJson}).
 */
export function bundleResultJson(result: BundleResult): string {
  const json = JSON.stringify;
  const status = result.status;
  return (
    `{"bundle":${pemJson(result.bundle)},"crl_support":${json(result.crl_support)},"crt":${pemJson(result.crt)}` +
    `,"expires":${stringJson(result.expires)},"hostnames":${stringsJson(result.hostnames)},"issuer":${stringJson(result.issuer)}` +
    `,"key":${pemJson(result.key)},"key_size":${json(result.key_size)},"key_type":${stringJson(result.key_type)}` +
    `,"leaf_expires":${stringJson(result.leaf_expires)},"ocsp":${stringsJson(result.ocsp)},"ocsp_support":${json(result.ocsp_support)}` +
    `,"root":${pemJson(result.root)},"signature":${stringJson(result.signature)}` +
    `,"status":{"rebundled":${json(status.rebundled)},"expiring_SKIs":${stringsJson(status.expiring_SKIs)}` +
    `,"untrusted_root_stores":${stringsJson(status.untrusted_root_stores)},"messages":${stringsJson(status.messages)}` +
    `,"code":${json(status.code)}},"subject":${stringJson(result.subject)}}`
  );
}
