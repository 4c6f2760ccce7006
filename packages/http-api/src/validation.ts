/**
 * Request validation with zod, with messages that name the field and what was received:
 * `request.hosts must be an array of strings, got string`. CFSSL answers wrong JSON types with Go's
 * decoder text (`json: cannot unmarshal string into Go struct field CertificateRequest.request.hosts of
 * type []string`), HTTP 400 for struct endpoints and 500 for string-map ones (behaviour doc 1.4);
 * certsmith always answers 400 with code 400 and its own, clearer message.
 *
 * Only the first problem is reported: CFSSL's error envelope always holds exactly one error item.
 */
import { BadRequestError } from '@certsmith/x509-core';
import * as z from 'zod';
import { jsonTypeName } from './request-body.js';

/** How the whole body is named in messages when the problem is at the top level. */
const ROOT_NAME = 'request body';

/**
 * Parse `value` with `schema`; on failure throw a {@link BadRequestError} (code 400) whose message
 * names the first offending field. Messages set explicitly in a schema (`z.string({ error: '…' })`,
 * `.refine(…, '…')`) are used as written.
 */
export function validateRequest<TSchema extends z.ZodType>(schema: TSchema, value: unknown): z.output<TSchema> {
  const result = schema.safeParse(value, { error: describeIssue });
  if (result.success) return result.data;
  const [first] = result.error.issues;
  throw new BadRequestError(first?.message ?? `${ROOT_NAME} is invalid`);
}

/** Name of a field path for messages: `request.hosts[0]`, `names[1].C`, or `request body` at the root. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let name = '';
  for (const segment of path) {
    if (typeof segment === 'number') name += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_][\w-]*$/.test(segment)) name += name === '' ? segment : `.${segment}`;
    else name += `[${JSON.stringify(String(segment))}]`;
  }
  return name === '' ? ROOT_NAME : name;
}

/** zod error map: gets the raw issue (full path, the schema that raised it, the input value). */
function describeIssue(issue: z.core.$ZodRawIssue): string | undefined {
  const name = formatFieldPath(issue.path ?? []);
  const schema = isSchema(issue.inst) ? issue.inst : undefined;
  switch (issue.code) {
    case 'invalid_type':
    case 'invalid_union': {
      if (issue.input === undefined) return `${name} is required`;
      const expected =
        (schema && describeSchema(schema)) ?? (issue.code === 'invalid_type' ? withArticle(issue.expected) : 'valid');
      return `${name} must be ${expected}, got ${jsonTypeName(issue.input)}`;
    }
    case 'invalid_value':
      return `${name} must be ${issue.values.map(showValue).join(' or ')}, got ${showValue(issue.input)}`;
    case 'unrecognized_keys':
      return `${name} has unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
    default: {
      const fallback = z.config().localeError?.(issue);
      const text = typeof fallback === 'string' ? fallback : fallback?.message;
      return text ? `${name}: ${text}` : undefined;
    }
  }
}

function isSchema(value: unknown): value is z.core.$ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value && (value as z.core.$ZodType)._zod.traits.has('$ZodType');
}

/**
 * A short English description of what a schema accepts (`a string`, `an array of strings`,
 * `"ubiquitous" or "force"`), or `undefined` when it has no simple description.
 */
export function describeSchema(schema: z.core.$ZodType, plural = false): string | undefined {
  const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  const noun = (singular: string, many: string): string => (plural ? many : singular);
  switch (def.type) {
    case 'string':
      return noun('a string', 'strings');
    case 'number':
      return noun('a number', 'numbers');
    case 'bigint':
      return noun('an integer', 'integers');
    case 'boolean':
      return noun('a boolean', 'booleans');
    case 'null':
      return 'null';
    case 'object':
    case 'record':
      return noun('an object', 'objects');
    case 'tuple':
      return noun('an array', 'arrays');
    case 'array': {
      const element = describeSchema(def['element'] as z.core.$ZodType, true);
      return element ? `${noun('an array', 'arrays')} of ${element}` : noun('an array', 'arrays');
    }
    case 'literal':
      return (def['values'] as unknown[]).map(showValue).join(' or ');
    case 'enum':
      return `one of ${Object.values(def['entries'] as Record<string, unknown>).map(showValue).join(', ')}`;
    case 'nullable': {
      const inner = describeSchema(def['innerType'] as z.core.$ZodType, plural);
      return inner ? `${inner} or null` : undefined;
    }
    case 'optional':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return describeSchema(def['innerType'] as z.core.$ZodType, plural);
    case 'pipe':
      return describeSchema(def['in'] as z.core.$ZodType, plural);
    case 'lazy':
      return describeSchema((def['getter'] as () => z.core.$ZodType)(), plural);
    case 'union': {
      const options = (def['options'] as z.core.$ZodType[]).map((option) => describeSchema(option, plural));
      return options.every((option) => option !== undefined) ? options.join(' or ') : undefined;
    }
    default:
      return undefined;
  }
}

function withArticle(noun: string): string {
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

/**
 * Show a received value in a message. Only short strings and other primitives are quoted; anything
 * else is named by its JSON type, so a message never carries a pasted key or certificate into the logs.
 */
function showValue(value: unknown): string {
  if (typeof value === 'string') return value.length <= 64 ? JSON.stringify(value) : 'a long string';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (typeof value === 'bigint') return value.toString();
  return jsonTypeName(value);
}
