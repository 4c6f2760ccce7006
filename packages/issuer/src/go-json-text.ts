/**
 * Reading JSON text for the Go-style decoder (go-json.ts) without losing what Go's `encoding/json`
 * sees and `JSON.parse` does not:
 * - **number literals as written.** Go decodes a number into an `int` with `strconv.ParseInt` on the
 *   literal, so `2048.0` and `1e3` are type errors (`json: cannot unmarshal number 2048.0 into …`)
 *   and any integer up to int64 is exact; `JSON.parse` turns both into the integer 2048/1000 and
 *   rounds `123456789012345678901` (a client-chosen serial number) to another number. Here a plain
 *   integer literal beyond 2^53 becomes a `bigint`, and any other literal whose value would pass for
 *   an integer (`2048.0`, `1e3`, `1e400`) a {@link JsonNumberLiteral} that only type errors accept;
 * - **duplicate keys.** Go decodes every occurrence of a key in turn (a type error in the first is
 *   an error; objects merge), `JSON.parse` keeps the last. A body whose meaning depends on which
 *   reader reads it — the bytes of an `/authsign` request are checked by HMAC and may be forwarded to
 *   a Go server — is refused: `duplicate key "x" in a JSON object` (certsmith's deliberate, stricter
 *   rule).
 *
 * `JSON.parse` does the parsing and checks the syntax. The exact reading costs one more pass over
 * the text (a regular-expression tokenizer that skips strings whole) and runs only when the parsed
 * value holds a number or the text more colons than the value has keys (see
 * docs/performance.md#go-exact-json-reading-only-when-it-matters).
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError } from '@certsmith/x509-core';

/**
 * A JSON number literal that is not a plain integer but whose value JavaScript would hold as one
 * (`2048.0`, `1e3`, `-0.0`, `1e400`): Go refuses it wherever an integer is expected, so it is kept
 * as written. The decoder treats it as a JSON number of this literal.
 */
export class JsonNumberLiteral {
  /** @param literal the number exactly as it appears in the JSON text */
  constructor(readonly literal: string) {}

  /** JavaScript's reading of the literal (for places that accept any number). */
  valueOf(): number {
    return Number(this.literal);
  }

  toJSON(): number {
    return Number(this.literal);
  }
}

/** A plain integer literal JavaScript holds exactly: what `JSON.parse` never gets wrong. */
const SAFE_INTEGER_LITERAL = /^-?(?:0|[1-9]\d{0,14})$/;
/** A plain integer literal of any size (Go's `ParseInt` syntax, without a sign of `+`). */
const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/;
/**
 * The tokens that matter in JSON text `JSON.parse` accepted: strings (whole, runs of plain
 * characters at once), brackets, and number literals. `true`, `false`, `null`, `,`, `:` and
 * whitespace are stepped over.
 */
const TOKEN = /"(?:[^"\\]+|\\.)*"|[{}[\]]|-?\d[\d.eE+-]*/g;
/** After a string: a `:` makes it an object key. */
const COLON = /\s*:/y;
/** Stands for a number literal inside the rewritten text; random, so no request can contain it. */
const SENTINEL = `\u0000${randomUUID()}\u0000`;

/**
 * Parse JSON text as Go reads it (see the module comment). Throws `SyntaxError` for invalid JSON,
 * as `JSON.parse` does, and a 400 {@link BadRequestError} for a key repeated in one object.
 */
export function parseGoJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  // Cheap first: a number in the value may have been written otherwise (2048.0), and more colons
  // than keys may mean a repeated key (or a colon inside a string: then the scan finds nothing).
  const { keys, numbers } = inspect(value);
  if (!numbers && countColons(text) <= keys) return value;
  const inexact = scan(text);
  if (inexact.length === 0) return value;
  // Each inexact literal becomes a sentinel string, JSON.parse reads the rest, and the sentinels
  // become numbers again as Go would read them.
  let rewritten = '';
  let from = 0;
  for (const [start, end] of inexact) {
    rewritten += `${text.slice(from, start)}${JSON.stringify(SENTINEL + text.slice(start, end))}`;
    from = end;
  }
  return restoreNumbers(JSON.parse(rewritten + text.slice(from)));
}

/** Object keys in a parsed value, and whether it holds a number; iteratively (it may be nested 100,000 deep). */
function inspect(root: unknown): { keys: number; numbers: boolean } {
  if (root === null || typeof root !== 'object') return { keys: 0, numbers: typeof root === 'number' };
  let keys = 0;
  let numbers = false;
  const pending: object[] = [root];
  while (pending.length > 0) {
    const value = pending.pop()!;
    const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
    if (!Array.isArray(value)) keys += children.length;
    for (const child of children) {
      if (typeof child === 'number') numbers = true;
      else if (child !== null && typeof child === 'object') pending.push(child);
    }
  }
  return { keys, numbers };
}

/** `:` in the text: one per key, plus those inside strings. */
function countColons(text: string): number {
  let count = 0;
  for (let at = text.indexOf(':'); at !== -1; at = text.indexOf(':', at + 1)) count++;
  return count;
}

/**
 * One pass over the tokens: throws on a key repeated in one object; returns the spans of number
 * literals `JSON.parse` would not read as written.
 */
function scan(text: string): Array<[number, number]> {
  const inexact: Array<[number, number]> = [];
  // One entry per open bracket: the keys seen so far for an object, null for an array.
  const open: Array<Set<string> | null> = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const token = match[0];
    const first = token.charCodeAt(0);
    if (first === 0x22 /* " */) {
      COLON.lastIndex = TOKEN.lastIndex;
      if (!COLON.test(text)) continue;
      const keys = open.at(-1);
      const key = JSON.parse(token) as string;
      if (keys?.has(key)) throw new BadRequestError(`duplicate key ${showKey(key)} in a JSON object`);
      keys?.add(key);
    } else if (first === 0x7b /* { */) {
      open.push(new Set());
    } else if (first === 0x5b /* [ */) {
      open.push(null);
    } else if (first === 0x7d /* } */ || first === 0x5d /* ] */) {
      open.pop();
    } else if (!SAFE_INTEGER_LITERAL.test(token)) {
      inexact.push([match.index, TOKEN.lastIndex]);
    }
  }
  return inexact;
}

/** Replace the sentinels of {@link parseGoJson} by the numbers they stand for, iteratively. */
function restoreNumbers(root: unknown): unknown {
  const restore = (value: unknown): unknown =>
    typeof value === 'string' && value.startsWith(SENTINEL) ? numberOf(value.slice(SENTINEL.length)) : value;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const container = pending.pop();
    if (container === null || typeof container !== 'object') continue;
    const entries = container as Record<string, unknown>;
    for (const key of Object.keys(entries)) {
      const child = entries[key];
      if (child !== null && typeof child === 'object') pending.push(child);
      // An own `__proto__` key (JSON.parse makes one) must stay a plain property.
      else Object.defineProperty(entries, key, { value: restore(child), writable: true, enumerable: true, configurable: true });
    }
  }
  return restore(root);
}

/** A number literal as the decoder gets it. */
function numberOf(literal: string): number | bigint | JsonNumberLiteral {
  if (SAFE_INTEGER_LITERAL.test(literal)) return Number(literal);
  if (INTEGER_LITERAL.test(literal)) return BigInt(literal);
  const value = Number(literal);
  // A fraction that stays one (1.5) is refused by every integer type as it is.
  return Number.isFinite(value) && !Number.isInteger(value) ? value : new JsonNumberLiteral(literal);
}

/** How a duplicate key is named in the message: quoted when short, never the whole of a long one. */
function showKey(key: string): string {
  return key.length <= 64 ? JSON.stringify(key) : 'of more than 64 characters';
}
