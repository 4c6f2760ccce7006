import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { fromWire, toWire } from './wire-values.js';

/** `value` after a real structured clone (a MessagePort turns a Buffer into a plain Uint8Array). */
async function cloned(value: unknown): Promise<unknown> {
  const { port1, port2 } = new MessageChannel();
  try {
    const received = new Promise<unknown>((resolve) => port2.once('message', resolve));
    port1.postMessage(value);
    return await received;
  } finally {
    port1.close();
    port2.close();
  }
}

describe('toWire / fromWire', () => {
  it('keeps a Buffer a Buffer and a Uint8Array a Uint8Array across a MessagePort', async () => {
    const value = { body: Buffer.from([1, 0, 2]), plain: Uint8Array.from([3]), nested: [{ body: Buffer.from('x') }], when: new Date(5), n: 7n };
    const back = fromWire(await cloned(toWire(value))) as typeof value;
    expect(Buffer.isBuffer(back.body)).toBe(true);
    expect([...back.body]).toEqual([1, 0, 2]);
    expect(Object.getPrototypeOf(back.plain)).toBe(Uint8Array.prototype);
    expect(Buffer.isBuffer(back.nested[0]!.body)).toBe(true);
    expect(back.when).toEqual(new Date(5));
    expect(back.n).toBe(7n);
    // Without the wrapper the clone loses the Buffer class.
    expect(Buffer.isBuffer(((await cloned(value)) as typeof value).body)).toBe(false);
  });

  it('sends only the bytes of a view, not the buffer it is a view of', () => {
    const pooled = Buffer.from([9, 8, 7]);
    expect(pooled.buffer.byteLength).toBeGreaterThan(3);
    const wrapped = toWire(pooled) as { certsmithBuffer: Uint8Array };
    expect(wrapped.certsmithBuffer.buffer.byteLength).toBe(3);
    const view = new Uint8Array(64).subarray(8, 10);
    expect((toWire(view) as Uint8Array).buffer.byteLength).toBe(2);
  });

  it('returns values without bytes as they are, without copying', () => {
    const record = { serial: '1', sans: ['a'], metadata: { certsmithBuffer: 'a JSON value, not bytes' }, expiry: new Date() };
    expect(toWire(record)).toBe(record);
    expect(fromWire(record)).toBe(record);
  });
});
