/**
 * Go's `time.ParseDuration` and `Duration.String`, because CFSSL profile `expiry` and `backdate`
 * are Go durations (behaviour doc 3.6): units h, m, s, ms, us/µs, ns only (no days), fractions and
 * sequences allowed (`1h30m`, `1.5h`), a sign allowed, `0` alone allowed. Error texts are Go's.
 */

const UNIT_NANOSECONDS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n],
  ['\u03bcs', 1_000n],
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const MAX_INT64 = (1n << 63n) - 1n;

function quote(text: string): string {
  return JSON.stringify(text);
}

/** Error thrown for malformed durations; `message` is Go's text. */
export class GoDurationError extends Error {
  override name = 'GoDurationError';
}

/**
 * Parse a Go duration string into nanoseconds (a bigint, exact like Go's int64). Throws
 * {@link GoDurationError} with Go's message (`time: invalid duration "abc"`, `time: missing unit
 * in duration "1"`, `time: unknown unit "d" in duration "1d"`).
 */
export function parseGoDurationNanoseconds(text: string): bigint {
  const invalid = (): GoDurationError => new GoDurationError(`time: invalid duration ${quote(text)}`);
  let rest = text;
  let negative = false;
  if (rest !== '' && (rest[0] === '-' || rest[0] === '+')) {
    negative = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw invalid();
  let total = 0n;
  while (rest !== '') {
    const number = /^([0-9]*)(?:\.([0-9]*))?/.exec(rest) as RegExpExecArray;
    const whole = number[1] ?? '';
    const fraction = number[2];
    if (whole === '' && (fraction === undefined || fraction === '')) throw invalid();
    rest = rest.slice(number[0].length);
    const unitMatch = /^[^0-9.]*/.exec(rest) as RegExpExecArray;
    const unit = unitMatch[0];
    if (unit === '') throw new GoDurationError(`time: missing unit in duration ${quote(text)}`);
    rest = rest.slice(unit.length);
    const scale = UNIT_NANOSECONDS.get(unit);
    if (scale === undefined) throw new GoDurationError(`time: unknown unit ${quote(unit)} in duration ${quote(text)}`);
    const wholeValue = whole === '' ? 0n : BigInt(whole);
    if (wholeValue > MAX_INT64 / scale) throw invalid();
    let value = wholeValue * scale;
    if (fraction) {
      // Go truncates the fractional part to nanoseconds.
      value += (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
    }
    total += value;
    if (total > MAX_INT64) throw invalid();
  }
  return negative ? -total : total;
}

/** Parse a Go duration into milliseconds (fractional for sub-millisecond parts). */
export function parseGoDuration(text: string): number {
  const nanoseconds = parseGoDurationNanoseconds(text);
  return Number(nanoseconds) / 1e6;
}
