/**
 * The access log: one JSON line per request, `msg: "request"`, written at `info`.
 *
 * For loggers made by `createLogger` the line is put together here and handed straight to the
 * logger's destination: pino's generic path (argument normalisation, the loop over the object's keys
 * with serializer and stringifier look-ups, a fresh `Date` per line) cost the event loop ≈4 µs per
 * request, garbage collection included (see docs/performance.md#the-request-path-outside-the-operation,
 * `tools/bench/http-api/request-log-line.bench.mjs`).
 * The text is pino's, byte for byte (the tests compare both); any other logger gets pino's path.
 */
import { pino } from 'pino';
import type { Logger } from 'pino';
import { isPlainJsonLogger } from './logger.js';

/** The fields of the request line, in the order they are written; `undefined` ones are left out (as pino does). */
export interface RequestLogFields {
  reqId: string;
  method: string;
  path: string;
  operation: string | undefined;
  status: number;
  code: number | undefined;
  label: string | undefined;
  profile: string | undefined;
  durationMs: number;
}

/** Writes the request line of one request (or nothing, below the logger's level). */
export type RequestLog = (fields: RequestLogFields) => void;

/** pino's number for `info`. */
const INFO = 30;

/**
 * The request log of `logger`. Its bindings (`base`, a child's fields) are written as pino writes
 * them; path redaction does not apply, since the line has fixed keys and scalar values only, none of
 * them a secret field (see docs/performance.md#the-request-log-line-skips-redaction).
 */
export function createRequestLog(logger: Logger): RequestLog {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as { write(line: string): void; [key: symbol]: unknown };
  // A multistream wants the line's level and object beside the text: only pino's path gives them.
  if (!isPlainJsonLogger(logger) || stream[pino.symbols.needsMetadataGsym] === true) {
    const accessLog = logger.child({}, { redact: { paths: [] } });
    return (fields) => accessLog.info(fields, 'request');
  }
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
  const time = createIsoTimeField();
  return (fields) => {
    // Read per line: the level of a pino logger can be changed at any time.
    if (logger.levelVal > INFO) return;
    let line = `{"level":30${time()}${bindings},"reqId":${jsonString(fields.reqId)},"method":${jsonString(fields.method)},"path":${jsonString(fields.path)}`;
    if (fields.operation !== undefined) line += `,"operation":${jsonString(fields.operation)}`;
    line += `,"status":${jsonNumber(fields.status)}`;
    if (fields.code !== undefined) line += `,"code":${jsonNumber(fields.code)}`;
    if (fields.label !== undefined) line += `,"label":${jsonString(fields.label)}`;
    if (fields.profile !== undefined) line += `,"profile":${jsonString(fields.profile)}`;
    stream.write(`${line},"durationMs":${jsonNumber(fields.durationMs)},"msg":"request"}\n`);
  };
}

/**
 * pino's `isoTime` field (`,"time":"2026-11-26T16:51:27.534Z"`), its date and time made once per
 * second: a `Date` and `toISOString()` per line were a third of the line's cost.
 */
function createIsoTimeField(): () => string {
  let secondStarts = NaN;
  let prefix = '';
  return () => {
    const now = Date.now();
    let milliseconds = now - secondStarts;
    // Outside [0, 1000): another second, or the clock went back.
    if (!(milliseconds >= 0 && milliseconds < 1000)) {
      milliseconds = ((now % 1000) + 1000) % 1000;
      secondStarts = now - milliseconds;
      const iso = new Date(secondStarts).toISOString();
      // `…T16:51:27.` without the milliseconds; years outside 0–9999 are written differently.
      prefix = iso.length === 24 ? `,"time":"${iso.slice(0, 20)}` : '';
    }
    return prefix === '' ? `,"time":"${new Date(now).toISOString()}"` : `${prefix}${THREE_DIGITS[milliseconds]}Z"`;
  };
}

const THREE_DIGITS: readonly string[] = Array.from({ length: 1000 }, (_, value) => String(value).padStart(3, '0'));

/**
 * A number as pino writes it (`String`, `null` when not finite). A duration rounded to the
 * microsecond (k / 1000, what the app logs) is written from its integer: a double's shortest text
 * is that decimal whenever it has at most 15 significant digits, and `String` on a fraction is
 * costly.
 */
function jsonNumber(value: number): string {
  const thousandths = Math.round(value * 1000);
  if (thousandths >= 0 && thousandths < 1e15 && thousandths / 1000 === value && !Object.is(value, -0)) {
    const fraction = thousandths % 1000;
    const whole = (thousandths - fraction) / 1000;
    if (fraction === 0) return String(whole);
    return `${whole}.${FRACTIONS[fraction]}`;
  }
  return Number.isFinite(value) ? String(value) : 'null';
}

/** `FRACTIONS[f]`: the digits of f / 1000 after the point, trailing zeros dropped (`50` → `05`). */
const FRACTIONS: readonly string[] = THREE_DIGITS.map((digits) => digits.replace(/0+$/, ''));

/** pino 10 writes strings with `JSON.stringify` from Node 25 on, and with its own escaping before. */
const PINO_USES_JSON_STRINGIFY = Number(process.versions.node.split('.')[0]) >= 25;

/**
 * A string as pino 10 writes it (its `asString`): `JSON.stringify` for long strings and strings with
 * control characters; otherwise only `"` and `\` escaped, so a lone surrogate stays as it is.
 */
function jsonString(value: string): string {
  const length = value.length;
  if (PINO_USES_JSON_STRINGIFY || length > 100) return JSON.stringify(value);
  let escapes = false;
  for (let index = 0; index < length; index += 1) {
    const unit = value.charCodeAt(index);
    if (unit < 32) return JSON.stringify(value);
    if (unit === 34 || unit === 92) escapes = true;
  }
  return escapes ? `"${value.replace(QUOTE_OR_BACKSLASH, '\\$&')}"` : `"${value}"`;
}

const QUOTE_OR_BACKSLASH = /["\\]/g;
