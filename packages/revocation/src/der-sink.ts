/**
 * A growable byte buffer for DER written front to back. A CRL of 100,000 entries is encoded into one
 * of these entry by entry, so memory holds the encoded bytes and nothing else: no array of entry
 * objects, no per-entry `Uint8Array` (each would be a separate allocation for the GC to sweep).
 */

/** Octets of a DER length field for `length` content octets (short or long form, minimal). */
export function lengthFieldSize(length: number): number {
  if (length < 0x80) return 1;
  if (length < 0x100) return 2;
  if (length < 0x10000) return 3;
  if (length < 0x1000000) return 4;
  return 5;
}

/** Size of a whole TLV with `length` content octets. */
export function tlvSize(length: number): number {
  return 1 + lengthFieldSize(length) + length;
}

/** Write a TLV header at `offset` of `out`; returns the offset of the content. */
export function writeHeaderAt(out: Uint8Array, offset: number, tag: number, length: number): number {
  out[offset] = tag;
  if (length < 0x80) {
    out[offset + 1] = length;
    return offset + 2;
  }
  const count = lengthFieldSize(length) - 1;
  out[offset + 1] = 0x80 | count;
  for (let i = count, rest = length; i >= 1; i--, rest = Math.floor(rest / 256)) out[offset + 1 + i] = rest & 0xff;
  return offset + 2 + count;
}

/** Append-only byte buffer that doubles its capacity as needed. */
export class DerSink {
  private buffer: Uint8Array;
  /** Bytes written so far. */
  length = 0;

  constructor(initialCapacity = 4096) {
    this.buffer = new Uint8Array(Math.max(16, initialCapacity));
  }

  /** Make room for `count` more bytes; returns the offset to write at. */
  reserve(count: number): number {
    const needed = this.length + count;
    if (needed > this.buffer.length) {
      let capacity = this.buffer.length * 2;
      while (capacity < needed) capacity *= 2;
      const grown = new Uint8Array(capacity);
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    const offset = this.length;
    this.length = needed;
    return offset;
  }

  /** The backing array (valid until the next {@link reserve}); write at offsets {@link reserve} returned. */
  get bytes(): Uint8Array {
    return this.buffer;
  }

  /** Append bytes. */
  write(bytes: Uint8Array): void {
    const offset = this.reserve(bytes.length);
    this.buffer.set(bytes, offset);
  }

  /** Append a TLV header. */
  writeHeader(tag: number, contentLength: number): void {
    const offset = this.reserve(1 + lengthFieldSize(contentLength));
    writeHeaderAt(this.buffer, offset, tag, contentLength);
  }

  /** A view of the bytes written so far. */
  view(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}
