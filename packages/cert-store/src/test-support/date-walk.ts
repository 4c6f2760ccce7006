/**
 * Dates for tests that compare two codecs of times: a fixed pseudo-random walk over the years
 * 0001–9999 (a linear congruential generator from `seed`, so every run tests the same dates), the
 * `i`-th date with `i % 1000` milliseconds, so that every millisecond value occurs.
 */
export function dateWalk(seed: number, count: number): Date[] {
  let state = seed >>> 0;
  const next = (): number => (state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
  const low = Date.UTC(1, 0, 1);
  const high = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
  return Array.from({ length: count }, (_, i) => new Date(Math.floor((low + next() * (high - low)) / 1000) * 1000 + (i % 1000)));
}
