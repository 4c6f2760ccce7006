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
 *   rule; equal duplicates are harmless and accepted).
 *
 * `JSON.parse` still does the work and checks the syntax: the exact reading (jsonc-parser's
 * tokenizer, ≈5× slower) runs only when the text holds such a number or more keys than the parsed
 * value, which ordinary requests do not.
 */
import { BadRequestError } from '@certsmith/x509-core';
import { visit } from 'jsonc-parser';

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
/** Strings (skipped) or number literals, in JSON text that `JSON.parse` accepted. */
const STRING_OR_NUMBER = /"(?:[^"\\]|\\.)*"|(-?\d[\d.eE+-]*)/g;
/** Where a number value can start: after `:`, `[` or `,` (quick test before the full scan). */
const NUMBER_VALUE = /[:[,]\s*-?\d/;
/** The end of an object key (and, rarely, `":` inside a string: a false alarm costs only time). */
const KEY_END = /"\s*:/g;

/**
 * Parse JSON text as Go reads it (see the module comment). Throws `SyntaxError` for invalid JSON,
 * as `JSON.parse` does, and a 400 {@link BadRequestError} for a duplicate key with another value.
 */
export function parseGoJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!hasInexactNumber(text) && !hasRepeatedKey(text, value)) return value;
  return parseExactly(text);
}

function hasInexactNumber(text: string): boolean {
  if (!NUMBER_VALUE.test(text)) return false;
  for (const match of text.matchAll(STRING_OR_NUMBER)) {
    const literal = match[1];
    if (literal !== undefined && !SAFE_INTEGER_LITERAL.test(literal)) return true;
  }
  return false;
}

function hasRepeatedKey(text: string, value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  let keyEnds = 0;
  KEY_END.lastIndex = 0;
  while (KEY_END.exec(text) !== null) keyEnds++;
  return keyEnds > countKeys(value);
}

/** Object keys in a parsed value, iteratively (the value may be nested 100,000 deep). */
function countKeys(root: object): number {
  let keys = 0;
  const pending: object[] = [root];
  while (pending.length > 0) {
    const value = pending.pop()!;
    const children = Array.isArray(value) ? value : Object.values(value);
    if (!Array.isArray(value)) keys += children.length;
    for (const child of children) {
      if (child !== null && typeof child === 'object') pending.push(child as object);
    }
  }
  return keys;
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

/** The slow, exact reading: jsonc-parser's tokenizer, numbers by their literal, duplicates checked. */
function parseExactly(text: string): unknown {
  type Container = { object: Record<string, unknown>; key: string | undefined } | { array: unknown[] };
  const stack: Container[] = [];
  let root: unknown;
  const place = (value: unknown): void => {
    const top = stack.at(-1);
    if (top === undefined) {
      root = value;
    } else if ('array' in top) {
      top.array.push(value);
    } else {
      const key = top.key as string;
      if (Object.hasOwn(top.object, key) && !sameJson(top.object[key], value)) {
        throw new BadRequestError(`duplicate key ${showKey(key)} in a JSON object`);
      }
      // Own data property even for `__proto__`, as JSON.parse makes it.
      Object.defineProperty(top.object, key, { value, writable: true, enumerable: true, configurable: true });
    }
  };
  try {
    visit(
      text,
      {
        onObjectBegin: () => void stack.push({ object: {}, key: undefined }),
        onObjectProperty: (property) => {
          (stack.at(-1) as { key: string | undefined }).key = property;
        },
        onObjectEnd: () => place((stack.pop() as { object: Record<string, unknown> }).object),
        onArrayBegin: () => void stack.push({ array: [] }),
        onArrayEnd: () => place((stack.pop() as { array: unknown[] }).array),
        onLiteralValue: (value: unknown, offset: number, length: number) => {
          place(typeof value === 'number' ? numberOf(text.slice(offset, offset + length)) : value);
        },
      },
      { disallowComments: true, allowTrailingComma: false },
    );
  } catch (error) {
    // The tokenizer descends recursively: a deep body (accepted by JSON.parse) overflows the stack.
    if (error instanceof RangeError) throw new BadRequestError('request body is nested too deeply', { cause: error });
    throw error;
  }
  return root;
}

/** Deep equality of two decoded JSON values (for harmless duplicates). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof JsonNumberLiteral && b instanceof JsonNumberLiteral) return a.literal === b.literal;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}
