/**
 * Many RSA-2048 keys from primes, each checked by OpenSSL's own key validation (`openssl rsa -check`:
 * primality of p and q, n = p·q, d·e ≡ 1 mod λ, dp, dq, qinv). The default count keeps the normal
 * suite (`npm test`) within about a minute on a loaded 2-core machine; the full run is
 *
 *   CERTSMITH_RSA_CHECK_KEYS=2000 npx vitest run --project @certsmith/issuer packages/issuer/src/rsa-key-from-primes.slow.test.ts
 *
 * Generating and checking one key costs ≈ 0.22 s of CPU (≈ 0.14 s generation, the rest the openssl
 * check and its process), so 2,000 keys need at least 3.7 min of both cores of the 2-core reference
 * machine: ≈ 5 min when it is idle, 15 min measured under heavy shared load. Two keys are generated
 * at a time (each searching its two primes in parallel) while up to two openssl processes check
 * earlier keys.
 */
import { execFile } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { bitLength, bigintFromBase64url } from './bigint-arithmetic.js';
import { generateKey, resolveKeySpec } from './key-generation.js';

const DEFAULT_KEYS = 150;
const KEYS = Number(process.env.CERTSMITH_RSA_CHECK_KEYS ?? DEFAULT_KEYS);
const OPENSSL_CONCURRENCY = 2;
/** Keys generated at once (each searches its two primes in parallel): keeps both cores busy while checks run. */
const GENERATION_CONCURRENCY = 2;
/** Keys waiting for a check before generation pauses (bounded memory, checks keep up). */
const MAX_PENDING_CHECKS = 4;

if (!Number.isSafeInteger(KEYS) || KEYS < 1) throw new Error(`CERTSMITH_RSA_CHECK_KEYS must be a positive integer, got ${process.env.CERTSMITH_RSA_CHECK_KEYS}`);

/** `openssl rsa -check -noout` of one PEM; resolves with its output (stdout + stderr). */
function opensslRsaCheck(pem: string): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile('openssl', ['rsa', '-check', '-noout'], (error, stdout, stderr) => resolve(`${stdout}${stderr}${error ? ` (${error.message})` : ''}`));
    child.stdin?.end(pem);
  });
}

/** Runs checks with bounded concurrency; `drain` waits for all of them. */
function checkQueue(concurrency: number) {
  const waiting: string[] = [];
  const failures: string[] = [];
  let running = 0;
  let checked = 0;
  let idle: (() => void) | undefined;
  const next = (): void => {
    while (running < concurrency && waiting.length > 0) {
      const pem = waiting.shift() as string;
      running++;
      void opensslRsaCheck(pem).then((output) => {
        running--;
        checked++;
        // Keep the output only (it names the failed check); never the key.
        if (output.trim() !== 'RSA key ok') failures.push(output.trim());
        next();
        if (running === 0 && waiting.length === 0) idle?.();
      });
    }
  };
  return {
    push(pem: string) {
      waiting.push(pem);
      next();
    },
    async whenBelow(limit: number) {
      while (waiting.length + running >= limit) await new Promise((resolve) => setTimeout(resolve, 5));
    },
    drain: () => (running === 0 && waiting.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve))),
    stats: () => ({ checked, failures }),
  };
}

describe(`RSA keys from primes (${KEYS} × 2048 bits)`, () => {
  it(
    'are all accepted by openssl rsa -check, distinct, and exactly 2048 bits',
    async () => {
      const spec = resolveKeySpec({ algo: 'rsa', size: 2048 });
      const queue = checkQueue(OPENSSL_CONCURRENCY);
      const primes = new Set<string>();
      let wrongSizes = 0;
      const started = performance.now();
      let startedKeys = 0;
      const generator = async (): Promise<void> => {
        while (startedKeys < KEYS) {
          startedKeys++;
          await queue.whenBelow(MAX_PENDING_CHECKS);
          const key = await generateKey(spec);
          const jwk = key.privateKey.export({ format: 'jwk' });
          if (bitLength(bigintFromBase64url(jwk.n as string)) !== 2048) wrongSizes++;
          // No prime may ever repeat, within a key or across keys (a broken RNG shows here first).
          primes.add(jwk.p as string);
          primes.add(jwk.q as string);
          queue.push(key.privateKeyPem);
        }
      };
      await Promise.all(Array.from({ length: GENERATION_CONCURRENCY }, generator));
      const generated = performance.now();
      await queue.drain();
      const seconds = (performance.now() - started) / 1000;
      const { checked, failures } = queue.stats();
      console.info(
        `${KEYS} RSA-2048 keys: generated in ${((generated - started) / 1000).toFixed(1)} s, all checked in ${seconds.toFixed(1)} s ` +
          `(${(KEYS / seconds).toFixed(2)} keys/s end to end)`,
      );
      expect(checked).toBe(KEYS);
      expect(failures).toEqual([]);
      expect(wrongSizes).toBe(0);
      expect(primes.size).toBe(2 * KEYS);
    },
    // Generous bound (a loaded machine does ≥ 2 keys/s end to end); the suite's 30 s default is for unit tests.
    60_000 + KEYS * 1_000,
  );
});
