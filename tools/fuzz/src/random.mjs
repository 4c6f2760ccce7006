// @ts-check
/**
 * Deterministic randomness for the fuzzer. Every input is generated from its own stream, seeded by
 * (campaign seed, input index): input #i can be regenerated alone, so a failure, a hang or a
 * disagreement is reproduced with `run.mjs --seed S --replay i` without replaying the i-1 before it.
 */

/** SplitMix32-style integer hash: spreads (seed, index) over the state space. */
function mix(value) {
  let z = (value + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** A small, fast PRNG (mulberry32) with the helpers mutators need. */
export class Random {
  /** @param {number} seed @param {number} [stream] */
  constructor(seed, stream = 0) {
    this.state = mix(mix(seed >>> 0) ^ mix(stream >>> 0 ^ 0x5bd1e995)) || 1;
  }

  /** Uniform 32-bit unsigned integer. */
  next() {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Integer in [0, n). @param {number} n */
  below(n) {
    return n <= 1 ? 0 : this.next() % n;
  }

  /** True with probability p. @param {number} p */
  chance(p) {
    return this.next() / 0x100000000 < p;
  }

  /** One element of a non-empty array. @template T @param {readonly T[]} items @returns {T} */
  pick(items) {
    return /** @type {T} */ (items[this.below(items.length)]);
  }

  /** Index chosen by weight. @param {readonly number[]} weights */
  weighted(weights) {
    let total = 0;
    for (const weight of weights) total += weight;
    let roll = this.below(total);
    for (let i = 0; i < weights.length; i++) {
      roll -= /** @type {number} */ (weights[i]);
      if (roll < 0) return i;
    }
    return weights.length - 1;
  }

  /** `length` random octets. @param {number} length */
  bytes(length) {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) out[i] = this.next() & 0xff;
    return out;
  }
}
