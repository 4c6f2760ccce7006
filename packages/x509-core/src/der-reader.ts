/**
 * A lean, bounds-checked DER reader (ITU-T X.690). It never copies: every element is a set of
 * offsets into the caller's buffer, and values are decoded only when asked for. Malformed input of
 * any kind throws {@link DerDecodeError} (never a RangeError from a Buffer, never an out-of-bounds
 * `undefined` turned into NaN), so the parse functions built on it can map failures to CFSSL codes.
 *
 * Strictness follows Go's `cryptobyte` (what CFSSL parses certificates with): single-octet tags only,
 * definite minimal lengths, no indefinite (BER) lengths. Content-level checks are those Go makes too
 * (BIT STRING padding, BOOLEAN values, UTF-8 validity…); see each decoder.
 */
import { encodeOidContent } from './der-writer.js';
import { DerDecodeError } from './errors.js';
import { COMMON_OIDS } from './oids.js';

/** Nesting limit of {@link DerReader.enter}: X.509 needs ~10 levels; hostile input gets no further. */
export const MAX_DER_DEPTH = 32;

/** One TLV found in a buffer: offsets only, no bytes copied. */
export interface DerElement {
  /** Identifier octet (class, constructed bit and tag number ≤ 30). */
  readonly tag: number;
  /** Offset of the identifier octet. */
  readonly start: number;
  /** Offset of the first content octet. */
  readonly valueStart: number;
  /** Offset just past the last content octet. */
  readonly end: number;
}

/**
 * Read the TLV header at `offset` and check that the element fits before `limit`.
 * Rejects high-tag-number form, indefinite length (X.690 10.1), non-minimal long-form lengths and
 * lengths over 2^32-1 or past `limit`.
 */
export function readElement(bytes: Uint8Array, offset: number, limit: number = bytes.length): DerElement {
  if (limit > bytes.length) limit = bytes.length;
  if (offset < 0 || offset + 2 > limit) throw new DerDecodeError('truncated element header', offset);
  const tag = bytes[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerDecodeError('high-tag-number form is not supported', offset);
  let length = bytes[offset + 1]!;
  let pos = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0) throw new DerDecodeError('indefinite length is not DER', offset);
    if (count > 4) throw new DerDecodeError('length field too long', offset);
    if (pos + count > limit) throw new DerDecodeError('truncated length field', offset);
    if (bytes[pos] === 0) throw new DerDecodeError('non-minimal length encoding', offset);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[pos++]!;
    if (length < 0x80) throw new DerDecodeError('non-minimal length encoding', offset);
  }
  if (length > limit - pos) throw new DerDecodeError('length runs past the end of the data', offset);
  return { tag, start: offset, valueStart: pos, end: pos + length };
}

/** Human-readable tag for error messages. */
function tagName(tag: number): string {
  return `0x${tag.toString(16).padStart(2, '0')}`;
}

/**
 * Sequential reader over the elements between two offsets of one buffer (the contents of a
 * constructed element, or a whole DER blob). Children are read with {@link DerReader.enter}, which
 * counts depth so hostile nesting cannot exhaust the stack of recursive callers.
 */
export class DerReader {
  /** The buffer every offset refers to. */
  readonly bytes: Uint8Array;
  /** Offset of the next element to read. */
  pos: number;
  /** Offset this reader must not read past. */
  readonly end: number;
  /** Nesting depth (0 for a top-level reader). */
  readonly depth: number;

  /** @param start first offset to read; @param end offset past the last byte (defaults to the buffer length). */
  constructor(bytes: Uint8Array, start = 0, end: number = bytes.length, depth = 0) {
    if (start < 0 || end > bytes.length || start > end) throw new DerDecodeError('reader bounds outside the buffer', start);
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
    this.depth = depth;
  }

  /** True while unread bytes remain. */
  hasMore(): boolean {
    return this.pos < this.end;
  }

  /** Identifier octet of the next element, or -1 at the end. Does not validate the element. */
  peekTag(): number {
    return this.pos < this.end ? this.bytes[this.pos]! : -1;
  }

  /** Read the next element (any tag). */
  read(): DerElement {
    const element = readElement(this.bytes, this.pos, this.end);
    this.pos = element.end;
    return element;
  }

  /** Read the next element and require its identifier octet to be `tag`; `what` names it in the error. */
  expect(tag: number, what = 'element'): DerElement {
    if (this.pos >= this.end) throw new DerDecodeError(`missing ${what}`, this.pos);
    const actual = this.bytes[this.pos]!;
    if (actual !== tag) throw new DerDecodeError(`expected ${what} (tag ${tagName(tag)}), got tag ${tagName(actual)}`, this.pos);
    return this.read();
  }

  /** Read the next element if its identifier octet is `tag` (OPTIONAL / DEFAULT fields), else `null`. */
  optional(tag: number): DerElement | null {
    if (this.pos >= this.end || this.bytes[this.pos] !== tag) return null;
    return this.read();
  }

  /** A reader over the contents of a constructed element; throws beyond {@link MAX_DER_DEPTH}. */
  enter(element: DerElement): DerReader {
    if ((element.tag & 0x20) === 0) throw new DerDecodeError(`tag ${tagName(element.tag)} is not constructed`, element.start);
    if (this.depth + 1 > MAX_DER_DEPTH) throw new DerDecodeError('DER nesting too deep', element.start);
    return new DerReader(this.bytes, element.valueStart, element.end, this.depth + 1);
  }

  /** `enter(expect(0x30))`: the contents of the next SEQUENCE. */
  sequence(what = 'SEQUENCE'): DerReader {
    return this.enter(this.expect(0x30, what));
  }

  /** Require that everything was consumed (DER forbids trailing bytes inside a structure). */
  finish(what = 'structure'): void {
    if (this.pos !== this.end) throw new DerDecodeError(`trailing data after ${what}`, this.pos);
  }
}

/** Content octets of an element (a view, not a copy). */
export function elementContent(bytes: Uint8Array, element: DerElement): Uint8Array {
  return bytes.subarray(element.valueStart, element.end);
}

/** Whole encoding (header and content) of an element (a view, not a copy). */
export function elementBytes(bytes: Uint8Array, element: DerElement): Uint8Array {
  return bytes.subarray(element.start, element.end);
}

function expectTag(element: DerElement, tag: number, what: string): void {
  if (element.tag !== tag) {
    throw new DerDecodeError(`expected ${what} (tag ${tagName(tag)}), got tag ${tagName(element.tag)}`, element.start);
  }
}

// ---------------------------------------------------------------------------------------------
// OBJECT IDENTIFIER

function decodeOidBig(bytes: Uint8Array, start: number, end: number): string {
  const arcs: string[] = [];
  let value = 0n;
  let first = true;
  let arcStart = true;
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    if (arcStart && b === 0x80) throw new DerDecodeError('non-minimal OBJECT IDENTIFIER arc', i);
    arcStart = (b & 0x80) === 0;
    value = (value << 7n) | BigInt(b & 0x7f);
    if ((b & 0x80) === 0) {
      if (first) {
        if (value < 80n) {
          arcs.push(String(value / 40n), String(value % 40n));
        } else {
          arcs.push('2', String(value - 80n));
        }
        first = false;
      } else {
        arcs.push(String(value));
      }
      value = 0n;
    }
  }
  return arcs.join('.');
}

interface InternedOid {
  encoded: Uint8Array;
  dotted: string;
}

/** Read-only table of {@link COMMON_OIDS} by FNV-1a hash of their content octets; built on first use. */
let internTable: Map<number, InternedOid[]> | null = null;

function hashOid(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash & 0x3fffffff; // small-integer Map keys
}

function buildInternTable(): Map<number, InternedOid[]> {
  const table = new Map<number, InternedOid[]>();
  for (const dotted of COMMON_OIDS) {
    const encoded = encodeOidContent(dotted);
    const key = hashOid(encoded, 0, encoded.length);
    const bucket = table.get(key);
    if (bucket === undefined) table.set(key, [{ encoded, dotted }]);
    else if (!bucket.some((entry) => entry.dotted === dotted)) bucket.push({ encoded, dotted });
  }
  return table;
}

function lookupInterned(bytes: Uint8Array, start: number, end: number): string | undefined {
  const table = (internTable ??= buildInternTable());
  const bucket = table.get(hashOid(bytes, start, end));
  if (bucket === undefined) return undefined;
  const length = end - start;
  for (const entry of bucket) {
    const encoded = entry.encoded;
    if (encoded.length !== length) continue;
    let same = true;
    for (let i = 0; i < length; i++) {
      if (encoded[i] !== bytes[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return entry.dotted;
  }
  return undefined;
}

/**
 * Decode OID content octets (X.690 8.19) to dotted form. The few dozen OIDs found in almost every
 * certificate are looked up in a constant table instead of being rebuilt (several times faster; the same
 * constant strings also make the callers' Map/switch lookups cheap). Arcs above 2^53 (UUID OIDs under 2.25)
 * fall back to BigInt. Rejects empty content, non-minimal arcs (leading 0x80) and a truncated last arc.
 */
export function decodeOid(bytes: Uint8Array, start: number, end: number): string {
  if (start >= end) throw new DerDecodeError('empty OBJECT IDENTIFIER', start);
  if ((bytes[end - 1]! & 0x80) !== 0) throw new DerDecodeError('truncated OBJECT IDENTIFIER', start);
  const interned = lookupInterned(bytes, start, end);
  if (interned !== undefined) return interned;
  let out = '';
  let value = 0;
  let arcStart = true;
  let first = true;
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    if (arcStart && b === 0x80) throw new DerDecodeError('non-minimal OBJECT IDENTIFIER arc', i);
    if (value > 0x3ffffffffff) return decodeOidBig(bytes, start, end);
    value = value * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) {
      if (first) {
        // X.690 8.19.4: the first subidentifier packs the first two arcs as 40*X + Y.
        out = value < 40 ? `0.${value}` : value < 80 ? `1.${value - 40}` : `2.${value - 80}`;
        first = false;
      } else {
        out += `.${value}`;
      }
      value = 0;
      arcStart = true;
    } else {
      arcStart = false;
    }
  }
  return out;
}

/** Dotted OID of an OBJECT IDENTIFIER element. */
export function readOid(bytes: Uint8Array, element: DerElement): string {
  expectTag(element, 0x06, 'OBJECT IDENTIFIER');
  return decodeOid(bytes, element.valueStart, element.end);
}

// ---------------------------------------------------------------------------------------------
// INTEGER, BOOLEAN, BIT STRING, OCTET STRING

/**
 * Content octets of an INTEGER (two's complement, big-endian; sign octet kept as encoded).
 * Rejects empty content. Accepts non-minimal encodings, as many deployed serial numbers have them.
 */
export function readIntegerBytes(bytes: Uint8Array, element: DerElement): Uint8Array {
  expectTag(element, 0x02, 'INTEGER');
  if (element.end === element.valueStart) throw new DerDecodeError('empty INTEGER', element.start);
  return bytes.subarray(element.valueStart, element.end);
}

/** A small INTEGER (versions, pathLenConstraint, salt lengths) as a number; throws past ±2^47. */
export function readSmallInteger(bytes: Uint8Array, element: DerElement): number {
  const content = readIntegerBytes(bytes, element);
  if (content.length > 6) throw new DerDecodeError('INTEGER too large', element.start);
  let unsigned = 0;
  for (let i = 0; i < content.length; i++) unsigned = unsigned * 256 + content[i]!;
  // Two's complement: a set top bit means subtract 2^(8n).
  return content[0]! & 0x80 ? unsigned - 2 ** (8 * content.length) : unsigned;
}

/** Bit length of an unsigned big-endian magnitude (leading zero octets ignored), e.g. an RSA modulus. */
export function unsignedBitLength(magnitude: Uint8Array): number {
  let i = 0;
  while (i < magnitude.length && magnitude[i] === 0) i++;
  if (i === magnitude.length) return 0;
  return (magnitude.length - i - 1) * 8 + (32 - Math.clz32(magnitude[i]!));
}

/** BOOLEAN value; DER allows only 0x00 and 0xFF (X.690 11.1), as Go checks. */
export function readBoolean(bytes: Uint8Array, element: DerElement): boolean {
  expectTag(element, 0x01, 'BOOLEAN');
  if (element.end - element.valueStart !== 1) throw new DerDecodeError('BOOLEAN must be one octet', element.start);
  const value = bytes[element.valueStart]!;
  if (value === 0xff) return true;
  if (value === 0x00) return false;
  throw new DerDecodeError('BOOLEAN must be 0x00 or 0xFF in DER', element.start);
}

/** A decoded BIT STRING: `bytes` is a view of the data octets, `unusedBits` the padding of the last one. */
export interface BitString {
  unusedBits: number;
  bytes: Uint8Array;
}

/**
 * BIT STRING contents. `tag` lets callers read IMPLICIT-tagged forms. Rejects an unused-bit count
 * over 7, padding in an empty string, and non-zero padding bits (X.690 11.2.1; Go's `ReadASN1BitString`).
 */
export function readBitString(bytes: Uint8Array, element: DerElement, tag = 0x03): BitString {
  expectTag(element, tag, 'BIT STRING');
  const length = element.end - element.valueStart;
  if (length < 1) throw new DerDecodeError('empty BIT STRING', element.start);
  const unusedBits = bytes[element.valueStart]!;
  if (unusedBits > 7 || (length === 1 && unusedBits !== 0)) throw new DerDecodeError('invalid BIT STRING padding', element.start);
  if (unusedBits !== 0 && (bytes[element.end - 1]! & ((1 << unusedBits) - 1)) !== 0) {
    throw new DerDecodeError('non-zero BIT STRING padding bits', element.start);
  }
  return { unusedBits, bytes: bytes.subarray(element.valueStart + 1, element.end) };
}

/** OCTET STRING contents (a view); `tag` lets callers read IMPLICIT-tagged forms such as `[0] KeyIdentifier`. */
export function readOctetString(bytes: Uint8Array, element: DerElement, tag = 0x04): Uint8Array {
  expectTag(element, tag, 'OCTET STRING');
  return bytes.subarray(element.valueStart, element.end);
}

// ---------------------------------------------------------------------------------------------
// Strings

/** Universal tags of the string types X.509 names and extensions use. */
export const StringTag = {
  Utf8String: 0x0c,
  NumericString: 0x12,
  PrintableString: 0x13,
  T61String: 0x14,
  Ia5String: 0x16,
  VisibleString: 0x1a,
  UniversalString: 0x1c,
  BmpString: 0x1e,
} as const;

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

// WHATWG "latin1" is windows-1252, identical to ISO-8859-1 on ASCII, so it is used for ASCII only.
const asciiDecoder = new TextDecoder('latin1');

/**
 * Single-byte characters (ISO-8859-1) to a string. Short strings are built directly; longer ASCII
 * goes through a native decoder (see docs/performance.md#der-and-pem-reading).
 */
export function decodeLatin1(bytes: Uint8Array, start: number, end: number): string {
  if (end - start > 12 && isAscii(bytes, start, end)) return asciiDecoder.decode(bytes.subarray(start, end));
  let out = '';
  for (let i = start; i < end; i++) out += String.fromCharCode(bytes[i]!);
  return out;
}

/** True when every octet is 7-bit ASCII (IA5String, X.680 41). */
export function isAscii(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i]! > 0x7f) return false;
  return true;
}

/** Decode UTF-8 octets, ASCII fast path; invalid UTF-8 throws (Go rejects it in certificates too). */
export function decodeUtf8(bytes: Uint8Array, start: number, end: number): string {
  if (isAscii(bytes, start, end)) return end - start > 12 ? asciiDecoder.decode(bytes.subarray(start, end)) : decodeLatin1(bytes, start, end);
  try {
    return utf8Decoder.decode(bytes.subarray(start, end));
  } catch {
    throw new DerDecodeError('invalid UTF-8', start);
  }
}

/** True when `tag` is one of the string types {@link readString} decodes. */
export function isStringTag(tag: number): boolean {
  return (
    tag === 0x0c || tag === 0x12 || tag === 0x13 || tag === 0x14 || tag === 0x16 || tag === 0x1a || tag === 0x1c || tag === 0x1e
  );
}

/**
 * Decode a string element to text:
 * UTF8String → UTF-8 (must be valid); PrintableString, IA5String, NumericString, VisibleString →
 * single-byte (not charset-policed: the text is reported, not trusted); T61String → Latin-1 (what
 * T61 holds in deployed certificates); BMPString → UTF-16BE (even length); UniversalString →
 * UTF-32BE (length multiple of 4, valid code points). Any other tag throws.
 */
export function readString(bytes: Uint8Array, element: DerElement): string {
  const { tag, valueStart: start, end } = element;
  switch (tag) {
    case StringTag.Utf8String:
      return decodeUtf8(bytes, start, end);
    case StringTag.PrintableString:
    case StringTag.Ia5String:
    case StringTag.NumericString:
    case StringTag.VisibleString:
    case StringTag.T61String:
      return decodeLatin1(bytes, start, end);
    case StringTag.BmpString: {
      if ((end - start) % 2 !== 0) throw new DerDecodeError('BMPString of odd length', element.start);
      let out = '';
      for (let i = start; i < end; i += 2) out += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
      return out;
    }
    case StringTag.UniversalString: {
      if ((end - start) % 4 !== 0) throw new DerDecodeError('UniversalString length not a multiple of 4', element.start);
      let out = '';
      for (let i = start; i < end; i += 4) {
        const code = bytes[i]! * 0x1000000 + ((bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!);
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw new DerDecodeError('invalid UniversalString character', i);
        out += String.fromCodePoint(code);
      }
      return out;
    }
    default:
      throw new DerDecodeError(`tag ${tagName(tag)} is not a string type`, element.start);
  }
}

// ---------------------------------------------------------------------------------------------
// Time

function digits(bytes: Uint8Array, at: number, count: number, element: DerElement): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const d = bytes[i]! - 0x30;
    if (d < 0 || d > 9) throw new DerDecodeError('invalid digit in time', element.start);
    value = value * 10 + d;
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * UTCTime (`YYMMDDHHMM[SS]` + `Z` or `±hhmm`) or GeneralizedTime (`YYYYMMDDHHMMSS[.fff…]` + `Z` or
 * `±hhmm`) to a Date. UTCTime years 50–99 are 19xx, 00–49 are 20xx (RFC 5280 4.1.2.5.1). Seconds-less
 * and offset forms are accepted because Go accepts them in UTCTime; fractional seconds are kept to
 * the millisecond. Calendar fields are range-checked (no 31 April, no second 60).
 */
export function readTime(bytes: Uint8Array, element: DerElement): Date {
  const { tag, valueStart: start, end } = element;
  let pos = start;
  let year: number;
  if (tag === 0x17) {
    if (end - start < 11) throw new DerDecodeError('UTCTime too short', element.start);
    const yy = digits(bytes, pos, 2, element);
    year = yy >= 50 ? 1900 + yy : 2000 + yy;
    pos += 2;
  } else if (tag === 0x18) {
    if (end - start < 15) throw new DerDecodeError('GeneralizedTime too short', element.start);
    year = digits(bytes, pos, 4, element);
    pos += 4;
  } else {
    throw new DerDecodeError(`expected UTCTime or GeneralizedTime, got tag ${tagName(tag)}`, element.start);
  }
  const month = digits(bytes, pos, 2, element);
  const day = digits(bytes, pos + 2, 2, element);
  const hour = digits(bytes, pos + 4, 2, element);
  const minute = digits(bytes, pos + 6, 2, element);
  pos += 8;
  let second = 0;
  let millis = 0;
  if (pos + 2 <= end && bytes[pos]! >= 0x30 && bytes[pos]! <= 0x39) {
    second = digits(bytes, pos, 2, element);
    pos += 2;
  } else if (tag === 0x18) {
    throw new DerDecodeError('GeneralizedTime without seconds', element.start);
  }
  if (tag === 0x18 && pos < end && bytes[pos] === 0x2e) {
    pos++;
    const fractionStart = pos;
    while (pos < end && bytes[pos]! >= 0x30 && bytes[pos]! <= 0x39) pos++;
    if (pos === fractionStart) throw new DerDecodeError('empty fractional seconds', element.start);
    // Keep milliseconds; finer digits cannot be represented by Date.
    const take = Math.min(3, pos - fractionStart);
    millis = digits(bytes, fractionStart, take, element) * 10 ** (3 - take);
  }
  let offsetMinutes = 0;
  if (pos < end && bytes[pos] === 0x5a /* Z */) {
    pos++;
  } else if (pos + 5 === end && (bytes[pos] === 0x2b || bytes[pos] === 0x2d)) {
    const sign = bytes[pos] === 0x2b ? 1 : -1;
    const offHour = digits(bytes, pos + 1, 2, element);
    const offMinute = digits(bytes, pos + 3, 2, element);
    if (offHour > 23 || offMinute > 59) throw new DerDecodeError('invalid time zone offset', element.start);
    offsetMinutes = sign * (offHour * 60 + offMinute);
    pos += 5;
  } else {
    throw new DerDecodeError('time without zone designator', element.start);
  }
  if (pos !== end) throw new DerDecodeError('trailing characters in time', element.start);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw new DerDecodeError('time field out of range', element.start);
  }
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offsetMinutes, second, millis);
  return date;
}
