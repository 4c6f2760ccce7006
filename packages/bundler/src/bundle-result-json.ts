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
 * `JSON.stringify(result)`, byte for byte, for a result built by `bundleCertificate` (keys in its
 * order; `bundle`, `crt`, `root` and `key` are PEM text, see {@link pemJson}).
 */
export function bundleResultJson(result: BundleResult): string {
  const json = JSON.stringify;
  const status = result.status;
  return (
    `{"bundle":${pemJson(result.bundle)},"crl_support":${json(result.crl_support)},"crt":${pemJson(result.crt)}` +
    `,"expires":${json(result.expires)},"hostnames":${json(result.hostnames)},"issuer":${json(result.issuer)}` +
    `,"key":${pemJson(result.key)},"key_size":${json(result.key_size)},"key_type":${json(result.key_type)}` +
    `,"leaf_expires":${json(result.leaf_expires)},"ocsp":${json(result.ocsp)},"ocsp_support":${json(result.ocsp_support)}` +
    `,"root":${pemJson(result.root)},"signature":${json(result.signature)}` +
    `,"status":{"rebundled":${json(status.rebundled)},"expiring_SKIs":${json(status.expiring_SKIs)}` +
    `,"untrusted_root_stores":${json(status.untrusted_root_stores)},"messages":${json(status.messages)}` +
    `,"code":${json(status.code)}},"subject":${json(result.subject)}}`
  );
}
