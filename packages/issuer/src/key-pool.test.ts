import { createPrivateKey } from 'node:crypto';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { generateKey, resolveKeySpec } from './key-generation.js';
import type { GeneratedKey, KeySpec } from './key-generation.js';
import { MAX_KEY_POOL_CAPACITY, createKeyPool, keySpecFromName, keySpecName, parseKeyPoolSizes, pooledKeySource } from './key-pool.js';
import type { KeyPool } from './key-pool.js';

const RSA_2048 = resolveKeySpec({ algo: 'rsa', size: 2048 });
const P256 = resolveKeySpec({ algo: 'ecdsa', size: 256 });
const ED25519 = resolveKeySpec({ algo: 'ed25519' });

/** A fake key: its PEM names the spec and a serial, so tests can follow each key. */
function fakeKey(spec: KeySpec, serial: number): GeneratedKey {
  return { spec, privateKey: null as never, publicKey: null as never, spki: new Uint8Array([serial]), privateKeyPem: `${keySpecName(spec)}#${serial}` };
}

/**
 * A deterministic fake generator: resolves on the next microtask with numbered keys, records the
 * specs asked for and the largest number of generations in flight at once, and can be made to fail.
 */
function fakeGenerator(options: { fail?: () => boolean } = {}) {
  let serial = 0;
  let inFlight = 0;
  const state = { calls: [] as string[], maxInFlight: 0 };
  const generate = async (spec: KeySpec): Promise<GeneratedKey> => {
    state.calls.push(keySpecName(spec));
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    await Promise.resolve();
    inFlight--;
    if (options.fail?.()) throw new Error('generator failed');
    return fakeKey(spec, ++serial);
  };
  return Object.assign(state, { generate });
}

let pool: KeyPool | undefined;
afterEach(() => {
  pool?.close();
  pool = undefined;
  vi.useRealTimers();
});

describe('parseKeyPoolSizes', () => {
  it('reads spec=size entries when given a flag value', () => {
    expect(parseKeyPoolSizes('rsa-2048=64,ecdsa-256=0')).toEqual({ 'rsa-2048': 64, 'ecdsa-256': 0 });
    expect(parseKeyPoolSizes(' rsa-3072=2 , ed25519=8,ecdsa-521=1 ')).toEqual({ 'rsa-3072': 2, ed25519: 8, 'ecdsa-521': 1 });
    expect(parseKeyPoolSizes(`rsa-2049=${MAX_KEY_POOL_CAPACITY}`)).toEqual({ 'rsa-2049': MAX_KEY_POOL_CAPACITY });
  });

  it('returns no sizes when given an empty value', () => {
    expect(parseKeyPoolSizes('')).toEqual({});
    expect(parseKeyPoolSizes('  ')).toEqual({});
  });

  it.each([
    ['rsa-2048', 400, 'rsa-2048', 'key pool: "rsa-2048" is not <spec>=<size>'],
    ['rsa-2048=', 400, 'rsa-2048=', 'key pool: "rsa-2048=" is not <spec>=<size>'],
    ['rsa-2048=-1', 400, 'rsa-2048=-1', 'key pool: "rsa-2048=-1" is not <spec>=<size>'],
    ['rsa-2048=1.5', 400, 'rsa-2048=1.5', 'key pool: "rsa-2048=1.5" is not <spec>=<size>'],
    ['rsa-2048=8,', 400, '', 'key pool: "" is not <spec>=<size>'],
    ['rsa-2048=8,,ed25519=1', 400, '', 'key pool: "" is not <spec>=<size>'],
    [`rsa-2048=${MAX_KEY_POOL_CAPACITY + 1}`, 400, 'rsa-2048', `key pool: the size of "rsa-2048" must be an integer from 0 to ${MAX_KEY_POOL_CAPACITY}`],
    ['rsa-2048=1,rsa-2048=2', 400, 'rsa-2048=2', 'key pool: "rsa-2048" is given twice'],
    ['RSA-2048=1', 400, 'RSA-2048', 'key pool: "RSA-2048" is not a key spec (rsa-<bits>, ecdsa-<bits> or ed25519)'],
    ['dsa-2048=1', 400, 'dsa-2048', 'key pool: "dsa-2048" is not a key spec (rsa-<bits>, ecdsa-<bits> or ed25519)'],
    ['ed25519-256=1', 400, 'ed25519-256', 'key pool: "ed25519-256" is not a key spec (rsa-<bits>, ecdsa-<bits> or ed25519)'],
    ['rsa-02048=1', 400, 'rsa-02048', 'key pool: "rsa-02048" is not a key spec (rsa-<bits>, ecdsa-<bits> or ed25519)'],
    ['rsa-1024=4', 2400, 'rsa-1024', 'key pool: "rsa-1024": RSA key is too weak'],
    ['rsa-9000=4', 2400, 'rsa-9000', 'key pool: "rsa-9000": RSA key size too large'],
    ['ecdsa-255=1', 2400, 'ecdsa-255', 'key pool: "ecdsa-255": invalid curve'],
  ])('throws a coded KeyPoolConfigError when given %j', (text, code, entry, message) => {
    expect(() => parseKeyPoolSizes(text)).toThrow(expect.objectContaining({ name: 'KeyPoolConfigError', code, entry, message }) as Error);
  });
});

describe('keySpecName and keySpecFromName', () => {
  it('round-trip every kind of key spec', () => {
    for (const spec of [RSA_2048, resolveKeySpec({ algo: 'rsa', size: 3001 }), P256, resolveKeySpec({ algo: 'ecdsa', size: 521 }), ED25519]) {
      expect(keySpecFromName(keySpecName(spec))).toEqual(spec);
    }
    expect([keySpecName(RSA_2048), keySpecName(P256), keySpecName(ED25519)]).toEqual(['rsa-2048', 'ecdsa-256', 'ed25519']);
  });
});

describe('createKeyPool', () => {
  it('fills every configured spec to its capacity with one generation in flight at a time', async () => {
    const generator = fakeGenerator();
    pool = createKeyPool({ sizes: { 'rsa-2048': 3, 'ecdsa-256': 2, ed25519: 0 }, generate: generator.generate });
    await pool.whenFull();
    expect(pool.stats()).toEqual([
      { spec: 'rsa-2048', size: 3, capacity: 3, hits: 0, misses: 0, generated: 3, failures: 0 },
      { spec: 'ecdsa-256', size: 2, capacity: 2, hits: 0, misses: 0, generated: 2, failures: 0 },
    ]);
    expect(generator.maxInFlight).toBe(1);
    // The emptiest FIFO first: the specs alternate until the smaller one is full.
    expect(generator.calls).toEqual(['rsa-2048', 'ecdsa-256', 'rsa-2048', 'ecdsa-256', 'rsa-2048']);
  });

  it('hands each key out once, oldest first, and refills after take', async () => {
    const generator = fakeGenerator();
    pool = createKeyPool({ sizes: { 'rsa-2048': 2 }, generate: generator.generate });
    await pool.whenFull();
    const first = pool.take(RSA_2048);
    const second = pool.take(RSA_2048);
    expect([first?.privateKeyPem, second?.privateKeyPem]).toEqual(['rsa-2048#1', 'rsa-2048#2']);
    expect(pool.take(RSA_2048)).toBeNull();
    expect(pool.stats()[0]).toMatchObject({ size: 0, hits: 2, misses: 1 });

    await pool.whenFull();
    expect(pool.take(RSA_2048)?.privateKeyPem).toBe('rsa-2048#3');
    expect(generator.calls.length).toBeLessThanOrEqual(5);
    expect(pool.stats()[0]).toMatchObject({ capacity: 2, hits: 3, misses: 1, generated: 4 });
  });

  it('answers null without counting when the spec is not pooled', async () => {
    pool = createKeyPool({ sizes: { 'rsa-2048': 1, 'ecdsa-384': 0 }, generate: fakeGenerator().generate });
    await pool.whenFull();
    expect(pool.take(P256)).toBeNull();
    expect(pool.take(resolveKeySpec({ algo: 'ecdsa', size: 384 }))).toBeNull();
    expect(pool.stats()).toEqual([{ spec: 'rsa-2048', size: 1, capacity: 1, hits: 0, misses: 0, generated: 1, failures: 0 }]);
  });

  it('resolves whenFull at once and never generates when no spec has a capacity', async () => {
    const generator = fakeGenerator();
    pool = createKeyPool({ sizes: {}, generate: generator.generate });
    await pool.whenFull();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(generator.calls).toEqual([]);
  });

  it('throws KeyPoolConfigError when the sizes are invalid', () => {
    const generate = fakeGenerator().generate;
    expect(() => createKeyPool({ sizes: { 'rsa-1024': 1 }, generate })).toThrow(expect.objectContaining({ code: 2400 }) as Error);
    expect(() => createKeyPool({ sizes: { 'rsa-2048': -1 }, generate })).toThrow(expect.objectContaining({ code: 400 }) as Error);
    expect(() => createKeyPool({ sizes: { 'rsa-2048': Number.NaN }, generate })).toThrow(expect.objectContaining({ code: 400 }) as Error);
  });

  it('waits while the host is busy, re-checking with a bounded back-off, and fills once idle', async () => {
    vi.useFakeTimers();
    const generator = fakeGenerator();
    let busy = true;
    let busyChecks = 0;
    pool = createKeyPool({
      sizes: { 'ecdsa-256': 2 },
      generate: generator.generate,
      busy: () => (busyChecks++, busy),
      recheckMs: 10,
      maxRecheckMs: 80,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(generator.calls).toEqual([]);
    // 0, 10, 20, 40, 80, 80… ms: about 1000 / 80 checks plus the ramp, never a busy loop.
    expect(busyChecks).toBeGreaterThanOrEqual(10);
    expect(busyChecks).toBeLessThanOrEqual(20);

    busy = false;
    await vi.advanceTimersByTimeAsync(80);
    expect(pool.stats()[0]).toMatchObject({ size: 2, generated: 2 });
  });

  it('pauses between keys when the host becomes busy during a refill', async () => {
    vi.useFakeTimers();
    const generator = fakeGenerator();
    let busy = false;
    pool = createKeyPool({
      sizes: { 'rsa-2048': 4 },
      generate: async (spec) => {
        const key = await generator.generate(spec);
        busy = true; // a request arrives while the first key is being generated
        return key;
      },
      busy: () => busy,
    });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(pool.stats()[0]).toMatchObject({ size: 1 });
    busy = false;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(pool.stats()[0]).toMatchObject({ size: 2 });
  });

  it('keeps its timers from holding the process open', async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    try {
      pool = createKeyPool({ sizes: { 'rsa-2048': 1 }, generate: fakeGenerator().generate, busy: () => true, recheckMs: 5 });
      await new Promise((resolve) => setTimeout(resolve, 30));
      const poolTimers = setTimeoutSpy.mock.results.map((result) => result.value as NodeJS.Timeout).filter((timer) => timer.hasRef() === false);
      expect(poolTimers.length).toBeGreaterThanOrEqual(3);
      // Every timer but the test's own 30 ms wait is unref'd.
      expect(setTimeoutSpy.mock.results.length - poolTimers.length).toBe(1);
    } finally {
      setTimeoutSpy.mockRestore();
    }
  });

  it('reports background failures, backs off, and stops after 8 in a row until the next take', async () => {
    vi.useFakeTimers();
    let failing = true;
    const generator = fakeGenerator({ fail: () => failing });
    const errors: string[] = [];
    pool = createKeyPool({
      sizes: { 'rsa-2048': 1 },
      generate: generator.generate,
      onError: (error, spec) => errors.push(`${spec}: ${(error as Error).message}`),
      recheckMs: 10,
      maxRecheckMs: 100,
    });
    const stopped = pool.whenFull();
    await vi.advanceTimersByTimeAsync(10_000);
    await stopped; // resolves when refilling gives up, so a warm-up never hangs
    expect(generator.calls).toHaveLength(8);
    expect(errors).toEqual(Array(8).fill('rsa-2048: generator failed'));
    expect(pool.stats()[0]).toMatchObject({ size: 0, failures: 8, generated: 0 });

    failing = false;
    expect(pool.take(RSA_2048)).toBeNull();
    await vi.advanceTimersByTimeAsync(10);
    expect(pool.stats()[0]).toMatchObject({ size: 1, failures: 8, generated: 1, misses: 1 });
  });

  it('drops its keys and stops generating when closed, discarding a generation in flight', async () => {
    let release: (() => void) | undefined;
    let calls = 0;
    pool = createKeyPool({
      sizes: { ed25519: 3 },
      generate: async (spec) => {
        calls++;
        if (calls === 3) await new Promise<void>((resolve) => (release = resolve));
        return fakeKey(spec, calls);
      },
    });
    while (release === undefined) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(pool.stats()[0]).toMatchObject({ size: 2 });
    const full = pool.whenFull();
    pool.close();
    await full;
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(pool.take(ED25519)).toBeNull();
    expect(pool.stats()[0]).toMatchObject({ size: 0, generated: 2 });
    expect(calls).toBe(3);
  });
});

describe('pooledKeySource', () => {
  it('takes a pooled key when one is ready and generates a fresh one otherwise', async () => {
    pool = createKeyPool({ sizes: { 'ecdsa-256': 1 }, generate: fakeGenerator().generate });
    await pool.whenFull();
    const fresh = vi.fn(async (spec: KeySpec) => fakeKey(spec, 100));
    const source = pooledKeySource(pool, fresh);
    expect((await source(P256)).privateKeyPem).toBe('ecdsa-256#1');
    expect((await source(P256)).privateKeyPem).toBe('ecdsa-256#100');
    expect((await source(ED25519)).privateKeyPem).toBe('ed25519#100');
    expect(fresh).toHaveBeenCalledTimes(2);
  });
});

describe('createKeyPool with the real RSA generator', () => {
  it('pre-generates distinct RSA-2048 keys from primes and hands each out once', async () => {
    pool = createKeyPool({ sizes: { 'rsa-2048': 2 }, generate: generateKey });
    await pool.whenFull();
    const first = pool.take(RSA_2048);
    const second = pool.take(RSA_2048);
    expect(pool.take(RSA_2048)).toBeNull(); // the refill of the first key is still searching primes
    for (const key of [first, second]) {
      expect(key?.privateKeyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
      expect(createPrivateKey(key!.privateKeyPem).asymmetricKeyDetails).toEqual({ modulusLength: 2048, publicExponent: 65537n });
    }
    expect(first!.privateKeyPem).not.toBe(second!.privateKeyPem);
    expect(pool.stats()[0]).toMatchObject({ hits: 2, misses: 1, generated: 2 });
  });
});
