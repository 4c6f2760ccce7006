/**
 * The request carried in the path of an OCSP GET (RFC 6960 A.1: `{url}/{url-encoding of base64 of
 * DER}`). CFSSL (lifecycle spec §5.5) removes no mount prefix (so `-path /ocsp/` breaks every GET,
 * #387), redirects any path containing `//` (which base64 produces), and accepts only standard,
 * padded base64. certsmith strips the mount path, never redirects, percent-decodes (twice if needed,
 * as Go's double unescape does), keeps a literal `+`, and accepts standard or URL-safe base64, padded
 * or not.
 */

const BASE64_BODY = /^[A-Za-z0-9+/]*$/;

function percentDecode(text: string): string | null {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/**
 * The DER request of a GET path, or `null` when the path does not carry one. `mountPath` is the
 * responder's prefix (`/`, `/ocsp`, `/ocsp/`); a path outside it is `null` too.
 */
export function decodeOcspGetPath(path: string, mountPath = '/'): Uint8Array | null {
  const query = path.indexOf('?');
  let rest = query === -1 ? path : path.slice(0, query);
  const prefix = mountPath.endsWith('/') ? mountPath.slice(0, -1) : mountPath;
  if (prefix !== '') {
    if (!rest.startsWith(prefix)) return null;
    rest = rest.slice(prefix.length);
  }
  if (rest.startsWith('/')) rest = rest.slice(1);
  let decoded = percentDecode(rest);
  if (decoded !== null && decoded.includes('%')) decoded = percentDecode(decoded);
  if (decoded === null || decoded === '') return null;
  // A `+` that reached us as a space (form-style decoding on the way) is a `+` again, as in CFSSL.
  decoded = decoded.replace(/ /g, '+');
  // URL-safe alphabet and missing padding are normalised to standard base64.
  const body = decoded.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!BASE64_BODY.test(body) || body.length % 4 === 1) return null;
  const bytes = Buffer.from(body, 'base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
