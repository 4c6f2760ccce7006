/**
 * A pool of pre-generated keys, filled in idle time, so that a newcert at low concurrency does not
 * wait for RSA prime search. Per key spec (`rsa-2048`, `ecdsa-256`, `ed25519`…) a bounded FIFO;
 * `take` hands a key out once and forgets it. Keys live only in this process's memory: never
 * written, logged or shared.
 *
 * Refilling is deliberately modest: at most one generation in flight for the whole pool, started
 * only when the host's `busy()` says no request is being served, so the pool never competes with
 * requests for the CPU it is meant to save. While busy, a re-check runs on an unref'd timer with
 * doubling delay (bounded by `maxRecheckMs`); it never keeps the process alive. Under sustained
 * load the pool drains and callers generate fresh keys, as without a pool.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

import type { GeneratedKey, KeySpec } from './key-generation.js';
import { resolveKeySpec } from './key-generation.js';

/** Capacity per key spec name (`rsa-2048`, `ecdsa-256`, `ed25519`…); 0 disables the spec. */
export type KeyPoolSizes = Readonly<Record<string, number>>;

/** Largest capacity of one spec (an RSA-8192 key holds ≈ 10 KB of PEM and key objects). */
export const MAX_KEY_POOL_CAPACITY = 4096;

/**
 * A `--key-pool` value or pool size that is not acceptable. Code 400 for malformed input (syntax,
 * count, duplicate), 2400 with CFSSL's key text when the spec itself is not a valid key request
 * (`rsa-1024` → `RSA key is too weak`). `entry` names the offending part.
 */
export class KeyPoolConfigError extends CertsmithError {
  readonly entry: string;

  constructor(code: number, entry: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.entry = entry;
  }
}

/** The pool name of a key spec: `rsa-<bits>`, `ecdsa-<bits>` or `ed25519`. */
export function keySpecName(spec: KeySpec): string {
  switch (spec.algorithm) {
    case 'RSA':
      return `rsa-${spec.bits}`;
    case 'ECDSA':
      return `ecdsa-${spec.bits}`;
    case 'Ed25519':
      return 'ed25519';
  }
}

/** The key spec of a pool name (inverse of {@link keySpecName}); throws KeyPoolConfigError. */
export function keySpecFromName(name: string): KeySpec {
  const match = /^(rsa|ecdsa)-([1-9][0-9]{0,4})$|^(ed25519)$/.exec(name);
  if (match === null) {
    throw new KeyPoolConfigError(ErrorCode.BadRequest, name, `key pool: "${name}" is not a key spec (rsa-<bits>, ecdsa-<bits> or ed25519)`);
  }
  try {
    return match[3] !== undefined ? resolveKeySpec({ algo: 'ed25519' }) : resolveKeySpec({ algo: match[1] as string, size: Number(match[2]) });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new KeyPoolConfigError(ErrorCode.PrivateKeyGenerationFailed, name, `key pool: "${name}": ${reason}`, { cause });
  }
}

function checkCapacity(name: string, capacity: number): void {
  if (!Number.isSafeInteger(capacity) || capacity < 0 || capacity > MAX_KEY_POOL_CAPACITY) {
    throw new KeyPoolConfigError(ErrorCode.BadRequest, name, `key pool: the size of "${name}" must be an integer from 0 to ${MAX_KEY_POOL_CAPACITY}`);
  }
}

/**
 * Parse a key pool flag value, `rsa-2048=64,ecdsa-256=0` (spaces around entries allowed, empty
 * string → no pool). Throws KeyPoolConfigError for malformed entries, unknown or invalid specs,
 * counts outside 0–{@link MAX_KEY_POOL_CAPACITY} and duplicates.
 */
export function parseKeyPoolSizes(text: string): Record<string, number> {
  const sizes: Record<string, number> = {};
  if (text.trim() === '') return sizes;
  for (const rawEntry of text.split(',')) {
    const entry = rawEntry.trim();
    const match = /^([^=\s]+)=([0-9]+)$/.exec(entry);
    if (match === null) throw new KeyPoolConfigError(ErrorCode.BadRequest, entry, `key pool: "${entry}" is not <spec>=<size>`);
    const spec = keySpecFromName(match[1] as string);
    const name = keySpecName(spec);
    if (Object.hasOwn(sizes, name)) throw new KeyPoolConfigError(ErrorCode.BadRequest, entry, `key pool: "${name}" is given twice`);
    const capacity = Number(match[2]);
    checkCapacity(name, capacity);
    sizes[name] = capacity;
  }
  return sizes;
}

/** Counters of one spec's FIFO, for metrics. */
export interface KeyPoolSpecStats {
  /** Key spec name (`rsa-2048`). */
  spec: string;
  /** Keys ready now. */
  size: number;
  capacity: number;
  /** `take` calls answered with a key. */
  hits: number;
  /** `take` calls answered with null (the caller generated a fresh key). */
  misses: number;
  /** Keys added by the background refill. */
  generated: number;
  /** Background generations that failed. */
  failures: number;
}

/** Options of {@link createKeyPool}. */
export interface KeyPoolOptions {
  /** Capacity per spec name (see {@link parseKeyPoolSizes}); specs of capacity 0 are ignored. */
  sizes: KeyPoolSizes;
  /** The key generator used for refills (e.g. `generateKey`). */
  generate: (spec: KeySpec) => Promise<GeneratedKey>;
  /** True while the host serves requests (e.g. tasks in flight > 0); refills wait. Default: never busy. */
  busy?: () => boolean;
  /** First re-check delay while busy, ms (default 25); doubles up to `maxRecheckMs` (default 1000). */
  recheckMs?: number;
  maxRecheckMs?: number;
  /**
   * Background generation failures, for the host's log (the error is a KeyGenerationError or the
   * generator's error; it never carries key material). Refills back off like busy re-checks and
   * stop after 8 failures in a row until the next `take`.
   */
  onError?: (error: unknown, spec: string) => void;
}

/** A pool of pre-generated keys (see the module note). */
export interface KeyPool {
  /** A ready key for `spec`, removed from the pool (used once), or null: generate a fresh one. */
  take(spec: KeySpec): GeneratedKey | null;
  /** Counters per configured spec, in configuration order. */
  stats(): KeyPoolSpecStats[];
  /**
   * Resolves once every FIFO is full, when refilling stops after repeated failures, or when the
   * pool is closed (start-up warm-up, tests).
   */
  whenFull(): Promise<void>;
  /**
   * Stop refilling and drop every ready key. BigInt, string and KeyObject key material cannot be
   * wiped in JavaScript; dropping the last references leaves them to the garbage collector. A
   * generation still in flight is discarded when it completes.
   */
  close(): void;
}

const MAX_CONSECUTIVE_FAILURES = 8;

interface Fifo {
  name: string;
  spec: KeySpec;
  capacity: number;
  keys: GeneratedKey[];
  hits: number;
  misses: number;
  generated: number;
  failures: number;
}

/**
 * Create a key pool and start filling it in the background (first check on the next timer tick,
 * so creating a pool never delays the caller). Throws KeyPoolConfigError for bad sizes.
 */
export function createKeyPool(options: KeyPoolOptions): KeyPool {
  const fifos = new Map<string, Fifo>();
  for (const [rawName, capacity] of Object.entries(options.sizes)) {
    const spec = keySpecFromName(rawName);
    const name = keySpecName(spec);
    checkCapacity(name, capacity);
    if (fifos.has(name)) throw new KeyPoolConfigError(ErrorCode.BadRequest, rawName, `key pool: "${name}" is given twice`);
    if (capacity > 0) fifos.set(name, { name, spec, capacity, keys: [], hits: 0, misses: 0, generated: 0, failures: 0 });
  }
  const busy = options.busy ?? (() => false);
  const firstDelay = options.recheckMs ?? 25;
  const maxDelay = Math.max(firstDelay, options.maxRecheckMs ?? 1000);

  let closed = false;
  let inFlight = false;
  let timer: NodeJS.Timeout | undefined;
  let delay = firstDelay;
  let consecutiveFailures = 0;
  let fullWaiters: Array<() => void> = [];

  /** The FIFO furthest from full (lowest fill ratio; configuration order breaks ties). */
  function neediest(): Fifo | undefined {
    let best: Fifo | undefined;
    for (const fifo of fifos.values()) {
      if (fifo.keys.length >= fifo.capacity) continue;
      if (best === undefined || fifo.keys.length / fifo.capacity < best.keys.length / best.capacity) best = fifo;
    }
    return best;
  }

  function settleWaiters(): void {
    if (!closed && consecutiveFailures < MAX_CONSECUTIVE_FAILURES && neediest() !== undefined) return;
    const waiters = fullWaiters;
    fullWaiters = [];
    for (const resolve of waiters) resolve();
  }

  function arm(ms: number): void {
    if (closed || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      refill();
    }, ms);
    timer.unref();
  }

  function refill(): void {
    if (closed || inFlight || consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) return;
    const fifo = neediest();
    if (fifo === undefined) return settleWaiters();
    if (busy()) {
      arm(delay);
      delay = Math.min(delay * 2, maxDelay);
      return;
    }
    delay = firstDelay;
    inFlight = true;
    let generation: Promise<GeneratedKey>;
    try {
      generation = options.generate(fifo.spec);
    } catch (error) {
      generation = Promise.reject(error);
    }
    generation.then(
      (key) => {
        inFlight = false;
        if (closed) return;
        consecutiveFailures = 0;
        fifo.generated++;
        if (fifo.keys.length < fifo.capacity) fifo.keys.push(key);
        settleWaiters();
        arm(0);
      },
      (error: unknown) => {
        inFlight = false;
        if (closed) return;
        fifo.failures++;
        consecutiveFailures++;
        options.onError?.(error, fifo.name);
        settleWaiters();
        arm(delay);
        delay = Math.min(delay * 2, maxDelay);
      },
    );
  }

  arm(0);

  return {
    take(spec) {
      if (closed) return null;
      const fifo = fifos.get(keySpecName(spec));
      if (fifo === undefined) return null;
      const key = fifo.keys.shift() ?? null;
      if (key === null) fifo.misses++;
      else fifo.hits++;
      consecutiveFailures = 0;
      arm(0);
      return key;
    },
    stats() {
      return [...fifos.values()].map(({ name, keys, capacity, hits, misses, generated, failures }) => ({
        spec: name,
        size: keys.length,
        capacity,
        hits,
        misses,
        generated,
        failures,
      }));
    },
    whenFull() {
      return new Promise<void>((resolve) => {
        fullWaiters.push(resolve);
        settleWaiters();
      });
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      for (const fifo of fifos.values()) fifo.keys.length = 0;
      settleWaiters();
    },
  };
}

/**
 * A `keySource` (see `KeyGenerationOptions`) that takes a pooled key when one is ready and
 * generates a fresh one otherwise.
 */
export function pooledKeySource(pool: KeyPool, generate: (spec: KeySpec) => Promise<GeneratedKey>): (spec: KeySpec) => Promise<GeneratedKey> {
  return async (spec) => pool.take(spec) ?? generate(spec);
}
