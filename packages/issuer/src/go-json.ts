/**
 * Decoding already-parsed JSON the way Go's `encoding/json` decodes into a struct, because CFSSL's
 * request and config semantics come from it (behaviour doc 1.4, 3.1):
 * - keys match struct fields exactly first, then case-insensitively (`"cn"`, `"HOSTS"`); unknown
 *   keys are ignored; when two keys map to one field the later one wins;
 * - decoding merges into the existing value field by field, so defaults survive unless mentioned
 *   (`{"key":{"algo":"rsa"}}` keeps size 256);
 * - `null` clears pointers, slices and maps and leaves plain strings/ints/bools untouched;
 * - a value of the wrong JSON type fails with Go's exact text, e.g. `json: cannot unmarshal
 *   string into Go struct field CertificateRequest.request.hosts of type []string`.
 */
import { BadRequestError } from '@certsmith/x509-core';
import { JsonNumberLiteral } from './go-json-text.js';

import type { JsonPathSegment } from './config-problems.js';

/** A Go type the decoder understands. `goName` is the type as Go prints it in errors. */
export type GoType =
  | { kind: 'string' }
  | { kind: 'int'; goName?: string }
  | { kind: 'bool' }
  | { kind: 'bytes' }
  | { kind: 'any' }
  | { kind: 'slice'; goName: string; elem: GoType }
  | { kind: 'map'; goName: string; elem: GoType }
  | { kind: 'struct'; goName: string; structName: string; fields: readonly GoField[]; pointer?: boolean }
  | { kind: 'custom'; goName: string; decode(value: unknown, context: DecodeContext): unknown };

/** One struct field: its JSON name (as in the Go tag) and the property it lands in. */
export interface GoField {
  json: string;
  prop: string;
  type: GoType;
}

/** Where the decoder is, for error messages. */
export interface DecodeContext {
  /** Innermost struct type name (`CertificateRequest`). */
  structName: string;
  /** Go's view of the path: struct field names from the root (`request.hosts`), no map keys. */
  path: string[];
  /** The JSON path as written: keys as spelled in the document, map keys and array indexes. */
  at?: JsonPathSegment[];
  /** Collecting mode (see {@link GoDecodeSink}); without it the first error is thrown. */
  sink?: GoDecodeSink;
}

/**
 * Collecting mode: errors are reported here with their JSON path and decoding goes on (the value
 * keeps what it held), as Go's decoder goes on after a type mismatch — so a configuration check
 * can list every wrong-typed key at once.
 */
export interface GoDecodeSink {
  error(error: BadRequestError, at: readonly JsonPathSegment[]): void;
  /** A key no struct field matches (Go ignores it). */
  unknownKey?(at: readonly JsonPathSegment[]): void;
}

/** Go `string`. */
export const goString: GoType = { kind: 'string' };
/** Go `int` (a JSON number that is a safe integer). */
export const goInt: GoType = { kind: 'int' };
/** Go `bool`. */
export const goBool: GoType = { kind: 'bool' };
/** Go `[]byte` (standard base64 text in JSON). */
export const goBytes: GoType = { kind: 'bytes' };
/** Go `interface{}`: any JSON value, kept as it is. */
export const goAny: GoType = { kind: 'any' };
/** Go `[]string`. */
export const goStringSlice: GoType = { kind: 'slice', goName: '[]string', elem: goString };
/** Go `map[string]string`. */
export const goStringMap: GoType = { kind: 'map', goName: 'map[string]string', elem: goString };

/** The JSON kind name Go uses in `cannot unmarshal <kind>`. */
export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value instanceof JsonNumberLiteral) return 'number';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
    case 'bigint':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}

function goTypeName(type: GoType): string {
  switch (type.kind) {
    case 'string':
      return 'string';
    case 'int':
      return type.goName ?? 'int';
    case 'bool':
      return 'bool';
    case 'bytes':
      return '[]uint8';
    case 'any':
      return 'interface {}';
    default:
      return type.goName;
  }
}

/** Go's `UnmarshalTypeError` text as a 400 error. */
export function unmarshalTypeError(valueKind: string, type: GoType, context: DecodeContext): BadRequestError {
  const typeName = goTypeName(type);
  if (context.path.length === 0) {
    return new BadRequestError(`json: cannot unmarshal ${valueKind} into Go value of type ${typeName}`);
  }
  return new BadRequestError(
    `json: cannot unmarshal ${valueKind} into Go struct field ${context.structName}.${context.path.join('.')} of type ${typeName}`,
  );
}

/** Find the field for a JSON key: exact match first, then case-insensitive (Go's fold match). */
function findField(fields: readonly GoField[], key: string): GoField | undefined {
  const exact = fields.find((field) => field.json === key);
  if (exact) return exact;
  const folded = key.toLowerCase();
  return fields.find((field) => field.json.toLowerCase() === folded);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array) && !(value instanceof JsonNumberLiteral);
}

/** Go's `int` (int64) range, for integers read exactly from JSON text (go-json-text.ts). */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Decode `value` as Go would into a variable of `type` currently holding `existing`; returns the
 * new value. Throws a 400 {@link BadRequestError} with Go's text on type mismatch, unless
 * `context.sink` collects errors.
 */
export function decodeGo(value: unknown, type: GoType, existing: unknown, context: DecodeContext): unknown {
  if (context.sink === undefined) return decodeValue(value, type, existing, context);
  try {
    return decodeValue(value, type, existing, context);
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    context.sink.error(error, context.at ?? []);
    return existing;
  }
}

function decodeValue(value: unknown, type: GoType, existing: unknown, context: DecodeContext): unknown {
  if (value === undefined) return existing;
  if (value === null) {
    // Go: null sets pointers, slices, maps and interfaces to nil and leaves other kinds alone.
    if (type.kind === 'slice' || type.kind === 'map' || type.kind === 'bytes' || type.kind === 'any') return null;
    if (type.kind === 'struct' && type.pointer) return null;
    return existing;
  }
  // JSON paths are only tracked in collecting mode: request decoding (the hot path) allocates none.
  const sink = context.sink;
  const at = context.at ?? [];
  switch (type.kind) {
    case 'string':
      if (typeof value !== 'string') throw unmarshalTypeError(jsonKind(value), type, context);
      return value;
    case 'bool':
      if (typeof value !== 'boolean') throw unmarshalTypeError(jsonKind(value), type, context);
      return value;
    case 'int':
      // Read exactly from the JSON text: `2048.0` / `1e3` (JsonNumberLiteral) are not integers for
      // Go; an integer beyond 2^53 (bigint) is one up to int64.
      if (value instanceof JsonNumberLiteral) throw unmarshalTypeError(`number ${value.literal}`, type, context);
      if (typeof value === 'bigint') {
        if (value < INT64_MIN || value > INT64_MAX) throw unmarshalTypeError(`number ${value}`, type, context);
        return Number(value);
      }
      if (typeof value !== 'number') throw unmarshalTypeError(jsonKind(value), type, context);
      // Go reports a non-integral or overflowing number as `number <literal>`.
      if (!Number.isSafeInteger(value)) throw unmarshalTypeError(`number ${value}`, type, context);
      return value;
    case 'bytes': {
      if (value instanceof Uint8Array) return value;
      // Go decodes a JSON array into a []byte element by element, as into any other slice.
      if (Array.isArray(value)) return Uint8Array.from(value, (item) => decodeUint8(item, context));
      if (typeof value !== 'string') throw unmarshalTypeError(jsonKind(value), type, context);
      return decodeGoBase64(value);
    }
    case 'any':
      return value;
    case 'slice': {
      if (!Array.isArray(value)) throw unmarshalTypeError(jsonKind(value), type, context);
      return value.map((item, index) => decodeGo(item, type.elem, zeroValue(type.elem), sink ? { ...context, at: [...at, index] } : context));
    }
    case 'map': {
      if (!isPlainObject(value)) throw unmarshalTypeError(jsonKind(value), type, context);
      // Go reuses a non-nil map and keeps its entries.
      const out: Record<string, unknown> = isPlainObject(existing) ? { ...existing } : {};
      for (const [key, item] of Object.entries(value)) {
        out[key] = decodeGo(item, type.elem, out[key] ?? zeroValue(type.elem), sink ? { ...context, at: [...at, key] } : context);
      }
      return out;
    }
    case 'struct': {
      if (!isPlainObject(value)) throw unmarshalTypeError(jsonKind(value), type, context);
      const out: Record<string, unknown> = isPlainObject(existing) ? { ...existing } : zeroStruct(type);
      for (const [key, item] of Object.entries(value)) {
        const field = findField(type.fields, key);
        if (!field) {
          sink?.unknownKey?.([...at, key]);
          continue;
        }
        const child: DecodeContext = { structName: type.structName, path: [...context.path, field.json] };
        if (sink) {
          child.at = [...at, key];
          child.sink = sink;
        }
        out[field.prop] = decodeGo(item, field.type, out[field.prop], child);
      }
      return out;
    }
    case 'custom':
      return type.decode(value, context);
  }
}

/** Go's zero value for a type, in the decoder's representation. */
export function zeroValue(type: GoType): unknown {
  switch (type.kind) {
    case 'string':
      return '';
    case 'int':
      return 0;
    case 'bool':
      return false;
    case 'struct':
      return type.pointer ? null : zeroStruct(type);
    default:
      return null;
  }
}

function zeroStruct(type: Extract<GoType, { kind: 'struct' }>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of type.fields) out[field.prop] = zeroValue(field.type);
  return out;
}

/** Go's `uint8`, for the elements of a `[]byte` given as a JSON array. */
const goUint8: GoType = {
  kind: 'custom',
  goName: 'uint8',
  decode(value, context) {
    if (value === null) return 0;
    if (value instanceof JsonNumberLiteral) throw unmarshalTypeError(`number ${value.literal}`, goUint8, context);
    if (typeof value !== 'number') throw unmarshalTypeError(jsonKind(value), goUint8, context);
    if (!Number.isInteger(value) || value < 0 || value > 255) throw unmarshalTypeError(`number ${value}`, goUint8, context);
    return value;
  },
};

function decodeUint8(value: unknown, context: DecodeContext): number {
  return decodeGo(value, goUint8, 0, context) as number;
}

/**
 * Go's `[]byte` JSON decoding: standard base64 with padding, `\r` and `\n` skipped anywhere. Throws
 * Go's `illegal base64 data at input byte N` as a 400, N as Go computes it
 * (`encoding/base64.decodeQuantum`).
 */
export function decodeGoBase64(text: string): Uint8Array {
  const offset = base64ErrorOffset(text);
  if (offset !== null) throw new BadRequestError(`illegal base64 data at input byte ${offset}`);
  const buffer = Buffer.from(text.replace(/[\r\n]/g, ''), 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

const BASE64_ALPHABET = /^[A-Za-z0-9+/]$/;

/** Where Go's StdEncoding stops on `src` (`CorruptInputError`), or null when it decodes. */
function base64ErrorOffset(src: string): number | null {
  const skipNewlines = (at: number): number => {
    while (at < src.length && (src[at] === '\n' || src[at] === '\r')) at++;
    return at;
  };
  let si = 0;
  for (;;) {
    for (let j = 0; j < 4; j++) {
      if (si === src.length) return j === 0 ? null : si - j;
      const char = src[si++]!;
      if (BASE64_ALPHABET.test(char)) continue;
      if (char === '\n' || char === '\r') {
        j--;
        continue;
      }
      if (char !== '=' || j < 2) return si - 1;
      if (j === 2) {
        // `==` closes a quantum of two characters.
        si = skipNewlines(si);
        if (si === src.length) return src.length;
        if (src[si] !== '=') return si - 1;
        si++;
      }
      si = skipNewlines(si);
      return si < src.length ? si : null;
    }
  }
}
