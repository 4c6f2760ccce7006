/**
 * A deliberately tiny DER encoder (X.690) for building test certificates. It is independent of
 * `@certsmith/x509-core` on purpose: fixtures made by a second implementation catch encoder and
 * parser mistakes that one shared implementation would hide.
 */

/** Encode a definite length (short form below 128, long form otherwise; X.690 8.1.3). */
function encodeLength(length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(length);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** Concatenate byte strings. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** One TLV with a single identifier octet. */
export function tlv(tag: number, content: Uint8Array): Uint8Array {
  return concat(Uint8Array.of(tag), encodeLength(content.length), content);
}

/** SEQUENCE of already-encoded elements. */
export const sequence = (...items: Uint8Array[]): Uint8Array => tlv(0x30, concat(...items));

/** SET OF, sorted by encoding as DER requires (X.690 11.6). */
export function setOf(...items: Uint8Array[]): Uint8Array {
  const sorted = [...items].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return tlv(0x31, concat(...sorted));
}

/** Context-specific constructed tag `[n]` (EXPLICIT wrapping or IMPLICIT constructed). */
export const explicit = (n: number, ...items: Uint8Array[]): Uint8Array => tlv(0xa0 | n, concat(...items));

/** Context-specific primitive tag `[n]` (IMPLICIT primitive, e.g. GeneralName choices). */
export const implicitPrimitive = (n: number, content: Uint8Array): Uint8Array => tlv(0x80 | n, content);

/** INTEGER from a non-negative bigint or number, minimal two's complement. */
export function integer(value: bigint | number): Uint8Array {
  let v = BigInt(value);
  if (v < 0n) throw new RangeError('negative integers are not needed by the test PKI');
  const bytes: number[] = [];
  do {
    bytes.unshift(Number(v & 0xffn));
    v >>= 8n;
  } while (v > 0n);
  if ((bytes[0] as number) & 0x80) bytes.unshift(0);
  return tlv(0x02, Uint8Array.from(bytes));
}

/** INTEGER whose content octets are given verbatim (serial numbers). */
export const integerBytes = (content: Uint8Array): Uint8Array => tlv(0x02, content);

/** BOOLEAN (DER TRUE is 0xff). */
export const boolean = (value: boolean): Uint8Array => tlv(0x01, Uint8Array.of(value ? 0xff : 0));

/** NULL. */
export const nullValue = (): Uint8Array => tlv(0x05, new Uint8Array(0));

/** OCTET STRING. */
export const octetString = (content: Uint8Array): Uint8Array => tlv(0x04, content);

/** BIT STRING with the given number of unused bits in the last octet. */
export const bitString = (content: Uint8Array, unusedBits = 0): Uint8Array =>
  tlv(0x03, concat(Uint8Array.of(unusedBits), content));

/** OBJECT IDENTIFIER from dotted text. */
export function oid(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map((a) => BigInt(a));
  const first = (arcs[0] as bigint) * 40n + (arcs[1] as bigint);
  const out: number[] = [];
  for (const arc of [first, ...arcs.slice(2)]) {
    const chunk: number[] = [];
    let v = arc;
    do {
      chunk.unshift(Number(v & 0x7fn));
      v >>= 7n;
    } while (v > 0n);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] = (chunk[i] as number) | 0x80;
    out.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(out));
}

/** UTF8String. */
export const utf8String = (text: string): Uint8Array => tlv(0x0c, new TextEncoder().encode(text));

/** PrintableString (caller guarantees the character set). */
export const printableString = (text: string): Uint8Array => tlv(0x13, new TextEncoder().encode(text));

/** IA5String. */
export const ia5String = (text: string): Uint8Array => tlv(0x16, new TextEncoder().encode(text));

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; always seconds and `Z`. */
export function time(date: Date): Uint8Array {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = date.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(0x17, new TextEncoder().encode(`${digits.slice(2)}Z`));
  return tlv(0x18, new TextEncoder().encode(`${digits}Z`));
}

/** Standard PEM armour, 64-column base64, trailing newline. */
export function toPem(der: Uint8Array, label = 'CERTIFICATE'): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
