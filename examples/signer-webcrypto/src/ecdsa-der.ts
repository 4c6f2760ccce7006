/**
 * WebCrypto returns ECDSA signatures as `r || s` (IEEE P1363, each half as long as the curve
 * order); X.509 carries them as DER `Ecdsa-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }`
 * (RFC 3279 2.2.3). The certsmith signer contract asks for the DER form, so this plugin converts.
 */

/** DER length octets (short form below 128, long form above: a P-521 signature needs it). */
function derLength(length: number): number[] {
  if (length < 0x80) return [length];
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) octets.unshift(rest & 0xff);
  return [0x80 | octets.length, ...octets];
}

/** A non-negative big-endian integer as DER INTEGER: minimal, with 0x00 before a set high bit. */
function derUnsignedInteger(bytes: Uint8Array): number[] {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const content = Array.from(bytes.subarray(start));
  if ((content[0] as number) & 0x80) content.unshift(0);
  return [0x02, ...derLength(content.length), ...content];
}

/** Convert a P1363 `r || s` signature to DER `SEQUENCE { r, s }`. */
export function p1363ToDer(signature: Uint8Array): Uint8Array {
  if (signature.length === 0 || signature.length % 2 !== 0) throw new RangeError(`ECDSA signature of odd length ${signature.length}`);
  const half = signature.length / 2;
  const body = [...derUnsignedInteger(signature.subarray(0, half)), ...derUnsignedInteger(signature.subarray(half))];
  return Uint8Array.from([0x30, ...derLength(body.length), ...body]);
}
