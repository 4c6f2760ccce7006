/**
 * Store values on a structured-clone channel. The clone keeps what the store's records hold —
 * strings, numbers, `Date`, `bigint`, `null`/`undefined`, arrays, plain objects, `Uint8Array` —
 * except one thing a caller can tell apart: a `Buffer` arrives as a plain `Uint8Array` over a
 * `MessagePort` (node's IPC keeps it, but the remote store must not depend on the transport). So
 * each `Buffer` travels wrapped as `{ certsmithBuffer: bytes }` and is a `Buffer` again on arrival;
 * every other value travels as it is. A JSON value (metadata, SANs) can never hold a `Uint8Array`,
 * so the wrapper cannot be mistaken for data.
 *
 * Bytes also travel compacted: cloning a view clones its whole `ArrayBuffer`, and a small `Buffer`
 * is usually a slice of node's 8 KiB pool — a 100-byte OCSP body would otherwise cross as 8 KiB.
 */

const BUFFER_KEY = 'certsmithBuffer';

/** `value` ready to send: `Buffer`s wrapped, views of larger buffers copied out. Unchanged objects are not copied. */
export function toWire(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) {
    // `new Uint8Array(view)` copies just the view's bytes into a plain Uint8Array of their size.
    const bytes = !Buffer.isBuffer(value) && value.byteLength === value.buffer.byteLength ? value : new Uint8Array(value);
    return Buffer.isBuffer(value) ? { [BUFFER_KEY]: bytes } : bytes;
  }
  if (Array.isArray(value)) return mapArray(value, toWire);
  if (isPlainObject(value)) return mapObject(value, toWire);
  return value;
}

/** A value as {@link toWire} sent it: `Buffer`s rebuilt. */
export function fromWire(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return mapArray(value, fromWire);
  if (isPlainObject(value)) {
    const bytes = (value as Record<string, unknown>)[BUFFER_KEY];
    if (bytes instanceof Uint8Array && Object.keys(value).length === 1) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return mapObject(value, fromWire);
  }
  return value;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** `array` mapped, or `array` itself when no element changed (most records hold no bytes). */
function mapArray(array: unknown[], map: (value: unknown) => unknown): unknown[] {
  let copy: unknown[] | null = null;
  for (let i = 0; i < array.length; i += 1) {
    const before = array[i];
    const after = map(before);
    if (after !== before) {
      copy ??= array.slice();
      copy[i] = after;
    }
  }
  return copy ?? array;
}

/** `object` mapped, or `object` itself when no property changed. */
function mapObject(object: Record<string, unknown>, map: (value: unknown) => unknown): Record<string, unknown> {
  let copy: Record<string, unknown> | null = null;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const before = object[key];
    const after = map(before);
    if (after !== before) {
      copy ??= { ...object };
      copy[key] = after;
    }
  }
  return copy ?? object;
}
