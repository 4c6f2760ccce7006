/**
 * PEM (RFC 7468) decoding with the exact leniencies of Go's `encoding/pem.Decode`, which is what
 * CFSSL feeds every certificate, key and CSR through (behaviour doc 2.2): text before a block is
 * skipped, the END label must repeat the BEGIN label, `Key: value` header lines (RFC 1421, e.g.
 * `Proc-Type: 4,ENCRYPTED`) are collected, spaces/tabs/CR/LF inside the base64 are ignored, padding
 * is required, and a block that fails to decode is skipped in favour of the next one.
 */

/** One decoded PEM block. */
export interface PemBlock {
  /** The label after `-----BEGIN ` (not checked by certificate parsing, as in CFSSL). */
  type: string;
  /** RFC 1421 headers (`Proc-Type`, `DEK-Info`…), keys and values trimmed; empty when none. */
  headers: Record<string, string>;
  /** The decoded base64 body. */
  bytes: Uint8Array;
}

/**
 * Where a PEM block found by {@link findPemBlock} lies in the text: its label, headers and the
 * offsets of its base64 body, which is checked ({@link isPaddedBase64}) but not decoded.
 */
export interface PemBlockLocation {
  /** The label after `-----BEGIN `. */
  type: string;
  /** RFC 1421 headers, as in {@link PemBlock}. */
  headers: Record<string, string>;
  /** Offset of `-----BEGIN` in the text. */
  start: number;
  /** Offset just past the END line (and its line break), i.e. Go's `rest`. */
  end: number;
  /** The body is `text.slice(bodyStart, bodyEnd)`: padded base64, whitespace between characters. */
  bodyStart: number;
  bodyEnd: number;
}

/** A block plus where it starts and where the text after it begins. */
export interface PemBlockMatch {
  block: PemBlock;
  /** Offset of `-----BEGIN` in the text. */
  start: number;
  /** Offset just past the END line (and its line break), i.e. Go's `rest`. */
  end: number;
}

const BEGIN = '-----BEGIN ';
const END = '\n-----END ';
const DASHES = '-----';
// Made once: a template or slice per call is a new string to search for (start-up pass 6c).
const NEWLINE_BEGIN = `\n${BEGIN}`;
const END_LINE = END.slice(1);

/** Go's `getLine`: the line up to `\n` without trailing spaces/tabs/CR, and the offset after it. */
function getLine(text: string, from: number, to: number): [line: string, next: number] {
  const newline = text.indexOf('\n', from);
  const lineEnd = newline < 0 || newline >= to ? to : newline;
  const next = newline < 0 || newline >= to ? to : newline + 1;
  let trimmed = lineEnd;
  while (trimmed > from) {
    const c = text.charCodeAt(trimmed - 1);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) break;
    trimmed--;
  }
  return [text.slice(from, trimmed), next];
}

/**
 * Standard base64 with padding (Go's StdEncoding: whole 4-character quanta, `=` only at the end),
 * spaces, tabs, CR and LF allowed anywhere. Checked in two native steps instead of one regular
 * expression that interleaves optional whitespace between every character (see
 * docs/performance.md#der-and-pem-reading): a character-class scan (`=` at most twice and only at
 * the end), then the count of non-whitespace characters must be a multiple of four, which with the
 * first step is exactly "whole quanta, padding only in the last".
 */
const BASE64_CHARACTERS = /^[A-Za-z0-9+/ \t\r\n]*(?:=[ \t\r\n]*){0,2}$/;
const BASE64_WHITESPACE = ['\n', '\r', ' ', '\t'];

/** Whether `body` is padded standard base64 with only spaces, tabs, CR and LF between characters. */
export function isPaddedBase64(body: string): boolean {
  if (!BASE64_CHARACTERS.test(body)) return false;
  let whitespace = 0;
  // indexOf is a native scan; each step moves forward, so the loops end.
  for (const character of BASE64_WHITESPACE) {
    for (let at = body.indexOf(character); at !== -1; at = body.indexOf(character, at + 1)) whitespace++;
  }
  return (body.length - whitespace) % 4 === 0;
}

/**
 * Find the first valid PEM block at or after `from` (a port of Go's `pem.Decode`), without decoding
 * its body: for readers that decode into a buffer of their own or skip bodies they have seen.
 * Returns `null` when none follows.
 * @param seenBefore answers `true` for a body this function returned before (so known to be valid
 *   base64), whose check is then skipped: for readers that meet the same blocks many times
 */
export function findPemBlock(text: string, from = 0, seenBefore?: (body: string) => boolean): PemBlockLocation | null {
  let cursor = from;
  for (;;) {
    let start: number;
    if (text.startsWith(BEGIN, cursor)) {
      start = cursor;
    } else {
      // Go requires `-----BEGIN ` at the very start or right after a newline.
      const found = text.indexOf(NEWLINE_BEGIN, cursor);
      if (found < 0) return null;
      start = found + 1;
    }
    let rest = start + BEGIN.length;
    cursor = rest;
    const [typeLine, afterType] = getLine(text, rest, text.length);
    rest = afterType;
    if (!typeLine.endsWith(DASHES)) continue;
    const type = typeLine.slice(0, -DASHES.length);

    const headers: Record<string, string> = {};
    let headerCount = 0;
    let truncated = false;
    for (;;) {
      if (rest >= text.length) {
        truncated = true;
        break;
      }
      const [line, next] = getLine(text, rest, text.length);
      const colon = line.indexOf(':');
      if (colon < 0) break;
      headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
      headerCount++;
      rest = next;
    }
    if (truncated) return null;

    let endIndex: number;
    let endTrailer: number;
    if (headerCount === 0 && text.startsWith(END_LINE, rest)) {
      endIndex = rest;
      endTrailer = rest + END.length - 1;
    } else {
      endIndex = text.indexOf(END, rest);
      endTrailer = endIndex + END.length;
    }
    if (endIndex < 0) continue;
    // The END line must carry the same label and nothing but whitespace after its dashes.
    if (!text.startsWith(type, endTrailer) || !text.startsWith(DASHES, endTrailer + type.length)) continue;
    const afterLabel = endTrailer + type.length + DASHES.length;
    const [restOfEndLine, afterEndLine] = getLine(text, afterLabel, text.length);
    if (restOfEndLine.length !== 0) continue;
    // Go skips a block whose base64 does not decode and looks for the next one.
    const body = text.slice(rest, endIndex);
    if (!(seenBefore?.(body) ?? false) && !isPaddedBase64(body)) continue;
    return { type, headers, start, end: afterEndLine, bodyStart: rest, bodyEnd: endIndex };
  }
}

/**
 * The bytes of a found block's body, in a buffer of their own. Node's decoder is lenient (it skips
 * what is not base64); {@link findPemBlock} has checked the body with Go's strictness already.
 */
export function decodePemBody(text: string, location: PemBlockLocation): Uint8Array {
  // Copy out of Buffer's shared 8 KiB pool: parsed certificates keep views into these bytes and
  // must not pin (or structured-clone) the whole pool slab.
  return new Uint8Array(Buffer.from(text.slice(location.bodyStart, location.bodyEnd), 'base64'));
}

/**
 * Find and decode the first valid PEM block at or after `from` (a port of Go's `pem.Decode`).
 * Returns `null` when none follows.
 */
export function decodePemBlock(text: string, from = 0): PemBlockMatch | null {
  const location = findPemBlock(text, from);
  if (location === null) return null;
  const { type, headers, start, end } = location;
  return { block: { type, headers, bytes: decodePemBody(text, location) }, start, end };
}

/** Every valid PEM block in `text`, in order (junk between blocks is skipped, as Go does). */
export function decodePemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  let from = 0;
  for (let match = decodePemBlock(text, from); match !== null; match = decodePemBlock(text, from)) {
    blocks.push(match.block);
    from = match.end;
  }
  return blocks;
}

/**
 * PEM-encode DER under `label`: 64-character base64 lines (RFC 7468 2), trailing `\n`, no headers.
 */
export function encodePem(label: string, der: Uint8Array): string {
  const base64 = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64');
  let body = '';
  for (let i = 0; i < base64.length; i += 64) body += `${base64.slice(i, i + 64)}\n`;
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}

/** PEM `CERTIFICATE` block of a certificate's DER (with trailing `\n`; CFSSL's JSON fields trim it). */
export function certificateToPem(der: Uint8Array): string {
  return encodePem('CERTIFICATE', der);
}
