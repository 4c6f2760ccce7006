/** commander argument parsers of the revocation flags (a usage error, exit 1, names what is expected). */
import { InvalidArgumentError } from 'commander';
import { MAX_VALIDITY_MS, parseDurationSetting } from './revocation-config.js';

/** A Go duration (`96h`, `90m`) from `minMs` to `maxMs`, in ms. */
export function durationFlag(minMs: number, maxMs: number = MAX_VALIDITY_MS): (value: string) => number {
  return (value) => {
    const ms = parseDurationSetting(value, minMs, maxMs);
    if (typeof ms === 'string') throw new InvalidArgumentError(ms);
    return ms;
  };
}

/** A decimal integer from `min` to `max`. */
export function integerFlag(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!(number >= min && number <= max)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return number;
  };
}
