/**
 * CFSSL's `-responses FILE` source (lifecycle spec §5.3–§5.4) and the `ocspdump` format that feeds
 * it: whitespace-separated standard base64, one OCSP response each. Pieces that do not decode or
 * parse are reported and skipped, as CFSSL logs and skips them.
 *
 * CFSSL keys the file by serial alone, so a request for another CA's certificate with the same serial
 * gets the wrong response. certsmith keeps every response of a serial and picks the one whose CertID
 * names the requested issuer (same hash algorithm and key hash, or — when the responder knows the
 * issuer — its key hash under the stored algorithm); only when that cannot be decided (another hash
 * algorithm, unknown issuer) does it fall back to CFSSL's answer, the last response for the serial.
 */
import { hex } from './cert-id.js';
import type { OcspLookup, OcspResponseSource } from './ocsp-responder.js';
import type { PreparedOcspResponse } from './prepared-ocsp-response.js';
import { prepareOcspResponse } from './prepared-ocsp-response.js';

/** Options of {@link createOcspFileSource}. */
export interface OcspFileSourceOptions {
  /** Called for each piece skipped (1-based position in the file, the reason). */
  onInvalid?: (position: number, error: Error) => void;
}

/** An in-memory source built from a responses file. */
export interface OcspFileSource extends OcspResponseSource {
  /** Responses loaded (after de-duplication). */
  readonly size: number;
  readonly fixed: true;
  find(lookup: OcspLookup): PreparedOcspResponse | null;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The map key of a serial: hex of its INTEGER content without redundant leading octets, so two
 * encodings of one number (a non-minimal one from a lax client) meet, as CFSSL's decimal key does —
 * without a BigInt conversion per request.
 */
function serialKey(content: Uint8Array): string {
  let start = 0;
  while (start + 1 < content.length && ((content[start] === 0x00 && content[start + 1]! < 0x80) || (content[start] === 0xff && content[start + 1]! >= 0x80))) start++;
  return Buffer.from(content.buffer, content.byteOffset + start, content.byteLength - start).toString('hex');
}

/** Load a responses file (the text of `cfssl ocspdump` / `certsmith ocspdump`). */
export function createOcspFileSource(text: string, options: OcspFileSourceOptions = {}): OcspFileSource {
  const bySerial = new Map<string, PreparedOcspResponse[]>();
  let size = 0;
  const pieces = text.split(/\s+/).filter((piece) => piece !== '');
  pieces.forEach((piece, index) => {
    try {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(piece) || piece.length % 4 !== 0) throw new Error('not standard base64');
      const prepared = prepareOcspResponse(Uint8Array.from(Buffer.from(piece, 'base64')));
      const key = serialKey(prepared.single.certId.serialNumber);
      const list = bySerial.get(key) ?? [];
      const algorithm = prepared.single.certId.hashAlgorithm;
      // A later response for the same certificate replaces the earlier one, as in CFSSL.
      const same = list.findIndex((entry) => entry.single.certId.hashAlgorithm === algorithm && entry.issuerKeyHash === prepared.issuerKeyHash);
      if (same === -1) {
        list.push(prepared);
        size++;
      } else list[same] = prepared;
      bySerial.set(key, list);
    } catch (error) {
      options.onInvalid?.(index + 1, error as Error);
    }
  });

  return {
    size,
    // Read once: `ocspserve -responses` serves the file as it was at start-up, as CFSSL does.
    fixed: true,
    find(lookup) {
      const candidates = bySerial.get(serialKey(lookup.certId.serialNumber));
      if (candidates === undefined) return null;
      const requestAlgorithm = lookup.certId.hashAlgorithm;
      let undecided = false;
      for (const candidate of candidates) {
        const algorithm = candidate.single.certId.hashAlgorithm;
        if (algorithm === requestAlgorithm) {
          // Bytes, not hex: this runs for every request.
          if (sameBytes(candidate.single.certId.issuerKeyHash, lookup.certId.issuerKeyHash)) return candidate;
        } else if (lookup.issuer !== null) {
          if (hex(lookup.issuer.hashes(algorithm).keyHash) === candidate.issuerKeyHash) return candidate;
        } else undecided = true;
      }
      return undecided ? candidates[candidates.length - 1]! : null;
    },
  };
}

/** The `ocspdump` format: each response as one standard, padded base64 line ending in `\n`. */
export function formatOcspResponseFile(responses: Iterable<Uint8Array>): string {
  let out = '';
  for (const der of responses) out += `${Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64')}\n`;
  return out;
}
