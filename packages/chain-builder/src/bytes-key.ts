/** Hash-map key of a byte string (latin1 keeps one char per byte: compact and collision-free). */
export function bytesKey(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
