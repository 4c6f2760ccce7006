/**
 * A lean DER encoder (X.690). Certificates and CSRs are built from these calls on the hot path of
 * `newcert`, so every function returns a ready `Uint8Array` and nothing builds an intermediate tree:
 * general-purpose ASN.1 libraries spend milliseconds per certificate, this spends microseconds.
 *
 * It refuses what DER cannot express instead of writing something no reader accepts: every input
 * that reaches it from a request (OIDs, strings, integers, times, tags) is checked here, so every
 * caller is covered, and a refusal is a {@link DerEncodeError} (a coded 4xx), never a RangeError.
 */
import { DerEncodeError } from './errors.js';

/** Universal tag numbers used by X.509. */
export const Tag = {
  Boolean: 0x01,
  Integer: 0x02,
  BitString: 0x03,
  OctetString: 0x04,
  Null: 0x05,
  ObjectIdentifier: 0x06,
  Utf8String: 0x0c,
  PrintableString: 0x13,
  Ia5String: 0x16,
  UtcTime: 0x17,
  GeneralizedTime: 0x18,
  Sequence: 0x30,
  Set: 0x31,
} as const;

/*
 * Why each function allocates exactly one array: a certificate is a few dozen small elements, and
 * every `Uint8Array` beyond 64 bytes is a separate native allocation that the GC must sweep. The
 * first version built each header as a number array and each constructed element twice (see
 * docs/performance.md#one-allocation-per-der-element).
 */

/** Octets of the length field for a content of `length` bytes (short or long form, minimal). */
function lengthFieldSize(length: number): number {
  if (length < 0x80) return 1;
  if (length < 0x100) return 2;
  if (length < 0x10000) return 3;
  if (length < 0x1000000) return 4;
  // The reader accepts at most four length octets (as Go's cryptobyte does); write no more.
  if (length <= 0xffffffff) return 5;
  throw new DerEncodeError(`DER content of ${length} octets is longer than 2^32-1`);
}

/** An identifier octet the reader accepts: 0–255, not the high-tag-number form (low five bits 11111). */
function checkTag(tag: number): void {
  if (!Number.isInteger(tag) || tag < 0 || tag > 0xff || (tag & 0x1f) === 0x1f) {
    throw new DerEncodeError(`DER identifier octet must be 0-255 with a tag number up to 30, got ${tag}`);
  }
}

/** A context-specific tag number for the single-octet form: 0–30. */
function checkTagNumber(tagNumber: number): void {
  if (!Number.isInteger(tagNumber) || tagNumber < 0 || tagNumber > 30) {
    throw new DerEncodeError(`context-specific tag number must be 0-30, got ${tagNumber}`);
  }
}

/** Write identifier and length octets at the start of `out`; returns the offset of the content. */
function writeHeader(out: Uint8Array, tag: number, length: number): number {
  out[0] = tag;
  if (length < 0x80) {
    out[1] = length;
    return 2;
  }
  const count = lengthFieldSize(length) - 1;
  out[1] = 0x80 | count;
  for (let i = count, rest = length; i >= 1; i--, rest = Math.floor(rest / 256)) out[1 + i] = rest & 0xff;
  return 2 + count;
}

/** A TLV of `length` content octets, header written; the caller fills the content from the offset. */
function allocateTlv(tag: number, length: number): { out: Uint8Array; offset: number } {
  checkTag(tag);
  const out = new Uint8Array(1 + lengthFieldSize(length) + length);
  return { out, offset: writeHeader(out, tag, length) };
}

/** Encode one TLV with the given identifier octet and content. */
export function derTlv(tag: number, content: Uint8Array): Uint8Array {
  const { out, offset } = allocateTlv(tag, content.length);
  out.set(content, offset);
  return out;
}

/** Concatenate already-encoded parts. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Encode a constructed TLV (SEQUENCE, SET, context tag…) around already-encoded children. */
export function derConstructed(tag: number, children: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const child of children) length += child.length;
  const tlv = allocateTlv(tag, length);
  let offset = tlv.offset;
  for (const child of children) {
    tlv.out.set(child, offset);
    offset += child.length;
  }
  return tlv.out;
}

/** A primitive TLV whose content is one `prefix` octet followed by `bytes` (BIT STRING, INTEGER). */
function derPrefixed(tag: number, prefix: number, bytes: Uint8Array): Uint8Array {
  const { out, offset } = allocateTlv(tag, bytes.length + 1);
  out[offset] = prefix;
  out.set(bytes, offset + 1);
  return out;
}

/** SEQUENCE of already-encoded children. */
export function derSequence(...children: Uint8Array[]): Uint8Array {
  return derConstructed(Tag.Sequence, children);
}

/**
 * SET OF: DER requires the encodings sorted as octet strings (X.690 11.6), which is also how
 * CFSSL/Go order multi-valued RDNs (`C=GB+C=US`).
 */
export function derSetOf(children: readonly Uint8Array[]): Uint8Array {
  const sorted = [...children].sort(compareBytes);
  return derConstructed(Tag.Set, sorted);
}

/** Lexicographic comparison of byte strings, shorter first on a common prefix. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const diff = (a[i] as number) - (b[i] as number);
    if (diff !== 0) return diff;
  }
  return a.length - b.length;
}

/** `[n] EXPLICIT` context-specific constructed tag around one encoded child. */
export function derExplicit(tagNumber: number, child: Uint8Array): Uint8Array {
  checkTagNumber(tagNumber);
  return derTlv(0xa0 | tagNumber, child);
}

/**
 * `[n] IMPLICIT`: re-tags content. `constructed` must match the underlying type (SEQUENCE → true,
 * IA5String → false), e.g. dNSName is `[2] IMPLICIT IA5String` → `derImplicit(2, ascii, false)`.
 */
export function derImplicit(tagNumber: number, content: Uint8Array, constructed: boolean): Uint8Array {
  checkTagNumber(tagNumber);
  return derTlv((constructed ? 0xa0 : 0x80) | tagNumber, content);
}

const TRUE = Uint8Array.of(Tag.Boolean, 1, 0xff);
const FALSE = Uint8Array.of(Tag.Boolean, 1, 0x00);
const NULL = Uint8Array.of(Tag.Null, 0);

/** BOOLEAN (DER: TRUE is 0xFF). */
export function derBoolean(value: boolean): Uint8Array {
  return value ? TRUE : FALSE;
}

/** NULL. */
export function derNull(): Uint8Array {
  return NULL;
}

/**
 * INTEGER from a non-negative bigint or safe integer, or from unsigned big-endian magnitude bytes
 * (a 0x00 is prefixed when the top bit is set, leading zeros are stripped: minimal DER). Negative,
 * fractional and unsafe numbers are refused (a number past 2^53 has already lost its low digits).
 */
export function derInteger(value: bigint | number | Uint8Array): Uint8Array {
  let bytes: Uint8Array;
  if (value instanceof Uint8Array) {
    bytes = value;
  } else {
    if (typeof value === 'number' && !Number.isSafeInteger(value)) {
      throw new DerEncodeError(`INTEGER must be a whole number below 2^53 (use a bigint beyond), got ${value}`);
    }
    if (typeof value !== 'number' && typeof value !== 'bigint') throw new DerEncodeError(`INTEGER must be a number, got ${typeof value}`);
    const big = BigInt(value);
    if (big < 0n) throw new DerEncodeError(`INTEGER must not be negative here, got ${big}`);
    const hex = big.toString(16);
    bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  }
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const magnitude = bytes.subarray(start);
  if (magnitude.length === 0) return Uint8Array.of(Tag.Integer, 1, 0);
  if ((magnitude[0] as number) & 0x80) return derPrefixed(Tag.Integer, 0, magnitude);
  return derTlv(Tag.Integer, magnitude);
}

/** BIT STRING with zero unused bits (signatures, public keys). */
export function derBitString(bytes: Uint8Array): Uint8Array {
  return derPrefixed(Tag.BitString, 0, bytes);
}

/**
 * BIT STRING for named bits (KeyUsage): bit 0 is the most significant bit of the first octet and
 * trailing zero bits are removed as DER requires (X.690 11.2.2).
 */
export function derNamedBitString(bits: number): Uint8Array {
  if (!Number.isInteger(bits) || bits < 0 || bits > 0x7fffffff) {
    throw new DerEncodeError(`named bits must be an integer 0 to 2^31-1 (bits 0-30), got ${bits}`);
  }
  if (bits === 0) return Uint8Array.of(Tag.BitString, 1, 0);
  let highest = 0;
  for (let bit = 0; bit < 32; bit++) if (bits & (1 << bit)) highest = bit;
  const octets = new Uint8Array(Math.floor(highest / 8) + 1);
  for (let bit = 0; bit <= highest; bit++) {
    if (bits & (1 << bit)) octets[bit >> 3] = (octets[bit >> 3] as number) | (0x80 >> (bit & 7));
  }
  const unused = 7 - (highest % 8);
  return derPrefixed(Tag.BitString, unused, octets);
}

/** OCTET STRING. */
export function derOctetString(bytes: Uint8Array): Uint8Array {
  return derTlv(Tag.OctetString, bytes);
}

const oidCache = new Map<string, Uint8Array>();

/** OBJECT IDENTIFIER from dotted form; encodings are cached because the same few OIDs recur. */
export function derOid(dotted: string): Uint8Array {
  const cached = oidCache.get(dotted);
  if (cached) return cached;
  const encoded = derTlv(Tag.ObjectIdentifier, encodeOidContent(dotted));
  if (oidCache.size < 4096) oidCache.set(dotted, encoded);
  return encoded;
}

/** Most arcs an encoded OID may have: far beyond any OID in use, and it bounds the encoder's work. */
export const MAX_OID_ARCS = 128;

/** Largest arc: 2^128-1, the UUID arcs under `2.25` (X.667), the widest arcs in use. */
const MAX_OID_ARC = (1n << 128n) - 1n;

/** Decimal digits of {@link MAX_OID_ARC}; longer arc strings are refused before BigInt parses them. */
const MAX_OID_ARC_DIGITS = 39;

/** Go's wording for an OID asn1.Marshal refuses, with the reason and the OID appended. */
function invalidOid(dotted: string, reason: string): DerEncodeError {
  const shown = dotted.length > 80 ? `${dotted.slice(0, 80)}…` : dotted;
  return new DerEncodeError(`asn1: structure error: invalid object identifier ${shown} (${reason})`);
}

/**
 * Content octets of an OID (X.690 8.19). Refused with {@link DerEncodeError}: anything but dotted
 * decimal arcs, fewer than two or more than {@link MAX_OID_ARCS} arcs, a first arc other than 0, 1
 * or 2, a second arc over 39 under 0 and 1 (X.660: the first two arcs share one subidentifier as
 * 40·X + Y), and arcs past 2^128-1.
 */
export function encodeOidContent(dotted: string): Uint8Array {
  if (typeof dotted !== 'string') throw invalidOid(String(dotted), 'not a string');
  const parts = dotted.split('.');
  if (parts.length < 2) throw invalidOid(dotted, 'an OID has at least two arcs');
  if (parts.length > MAX_OID_ARCS) throw invalidOid(dotted, `more than ${MAX_OID_ARCS} arcs`);
  const arcs: bigint[] = [];
  for (const part of parts) {
    if (!/^\d+$/.test(part)) throw invalidOid(dotted, `arc ${JSON.stringify(part.slice(0, 40))} is not a non-negative decimal number`);
    if (part.length > MAX_OID_ARC_DIGITS) throw invalidOid(dotted, 'an arc is larger than 2^128-1');
    const arc = BigInt(part);
    if (arc > MAX_OID_ARC) throw invalidOid(dotted, 'an arc is larger than 2^128-1');
    arcs.push(arc);
  }
  const [first, second] = arcs as [bigint, bigint];
  if (first > 2n) throw invalidOid(dotted, 'the first arc must be 0, 1 or 2');
  if (first < 2n && second > 39n) throw invalidOid(dotted, 'the second arc must be 0-39 under arcs 0 and 1');
  const out: number[] = [];
  const pushArc = (arc: bigint): void => {
    const chunk: number[] = [Number(arc & 0x7fn)];
    for (let rest = arc >> 7n; rest > 0n; rest >>= 7n) chunk.unshift(Number(rest & 0x7fn) | 0x80);
    out.push(...chunk);
  };
  pushArc(first * 40n + second);
  for (const arc of arcs.slice(2)) pushArc(arc);
  return Uint8Array.from(out);
}

const encoder = new TextEncoder();

/**
 * UTF8String. A lone UTF-16 surrogate becomes U+FFFD, as Go's JSON decoding turns it into U+FFFD
 * before CFSSL encodes it: the same request gives the same certificate.
 */
export function derUtf8String(text: string): Uint8Array {
  return derTlv(Tag.Utf8String, encoder.encode(text));
}

/** Shorten a value for an error message (requests may carry megabytes). */
function shown(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** PrintableString; text outside the PrintableString set (see {@link isPrintableString}) is refused. */
export function derPrintableString(text: string): Uint8Array {
  if (!isPrintableString(text)) throw new DerEncodeError(`${shown(text)} cannot be encoded as a PrintableString`);
  return derTlv(Tag.PrintableString, encoder.encode(text));
}

/**
 * Content octets of an IA5String (X.680 41: the 128 ASCII characters), for the IMPLICIT-tagged
 * forms (dNSName, rfc822Name, URI, CPS pointers); anything else is refused with Go's wording.
 */
export function encodeIa5String(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) throw new DerEncodeError(`x509: ${shown(text)} cannot be encoded as an IA5String`);
    out[i] = code;
  }
  return out;
}

/** IA5String (ASCII only, else {@link DerEncodeError}). */
export function derIa5String(text: string): Uint8Array {
  return derTlv(Tag.Ia5String, encodeIa5String(text));
}

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/** True when every character is in the PrintableString set (X.680 41.4), as Go's `isPrintable` decides. */
export function isPrintableString(text: string): boolean {
  return PRINTABLE.test(text);
}

/**
 * A directory string the way Go's crypto/x509 encodes subject values (CFSSL behaviour doc 3.4):
 * PrintableString when possible, else UTF8String.
 */
export function derDirectoryString(text: string): Uint8Array {
  return derTlv(isPrintableString(text) ? Tag.PrintableString : Tag.Utf8String, encoder.encode(text));
}

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * RFC 5280 4.1.2.5 Time: UTCTime for years 1950–2049, GeneralizedTime otherwise; whole seconds
 * (milliseconds are dropped), `Z`. An invalid Date, or a year outside GeneralizedTime's four digits
 * (0000–9999), is refused: Go refuses it too (`cannot represent time as GeneralizedTime`).
 */
export function derTime(date: Date): Uint8Array {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) throw new DerEncodeError('time is not a valid date');
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) {
    throw new DerEncodeError(`asn1: structure error: cannot represent time as GeneralizedTime (year ${year} is outside 0000-9999)`);
  }
  const rest =
    two(date.getUTCMonth() + 1) +
    two(date.getUTCDate()) +
    two(date.getUTCHours()) +
    two(date.getUTCMinutes()) +
    two(date.getUTCSeconds()) +
    'Z';
  if (year >= 1950 && year < 2050) {
    return derTlv(Tag.UtcTime, encoder.encode(two(year % 100) + rest));
  }
  return derTlv(Tag.GeneralizedTime, encoder.encode(String(year).padStart(4, '0') + rest));
}
