import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { describeSchema, formatFieldPath, validateRequest } from './validation.js';

function messageOf(schema: z.ZodType, value: unknown): string {
  try {
    validateRequest(schema, value);
  } catch (error) {
    expect(error).toMatchObject({ code: 400, name: 'BadRequestError' });
    return (error as Error).message;
  }
  throw new Error('expected validation to fail');
}

describe('validateRequest', () => {
  const newcert = z.object({
    request: z.object({
      CN: z.string().optional(),
      hosts: z.array(z.string()).optional(),
      names: z.array(z.object({ C: z.string().optional() })).optional(),
      key: z.object({ algo: z.string(), size: z.number().int() }).optional(),
    }),
    label: z.string().optional(),
    bundle: z.boolean().optional(),
  });

  it('returns the parsed value when it is valid', () => {
    expect(validateRequest(newcert, { request: { CN: 'a' }, ignored: true })).toEqual({ request: { CN: 'a' } });
  });

  it.each([
    [{}, 'request is required'],
    [{ request: { hosts: 'a' } }, 'request.hosts must be an array of strings, got string'],
    [{ request: { hosts: [1] } }, 'request.hosts[0] must be a string, got number'],
    [{ request: { names: [{ C: 1 }] } }, 'request.names[0].C must be a string, got number'],
    [{ request: { key: { algo: 'rsa', size: '2048' } } }, 'request.key.size must be a number, got string'],
    [{ request: {}, bundle: 'yes' }, 'bundle must be a boolean, got string'],
    [{ request: {}, label: {} }, 'label must be a string, got object'],
  ])('names the field and the received type for %j', (value, message) => {
    expect(messageOf(newcert, value)).toBe(message);
  });

  it('names the body itself at the top level', () => {
    expect(messageOf(z.object({ a: z.string() }), 'x')).toBe('request body must be an object, got string');
  });

  it('describes unions, enums and nullable values', () => {
    const schema = z.object({
      hosts: z.union([z.string(), z.array(z.string())]),
      flavor: z.enum(['ubiquitous', 'force']).optional(),
      ca: z.string().nullable().optional(),
    });
    expect(messageOf(schema, { hosts: 1 })).toBe('hosts must be a string or an array of strings, got number');
    expect(messageOf(schema, { hosts: 'a', flavor: 'x' })).toBe('flavor must be "ubiquitous" or "force", got "x"');
    expect(messageOf(schema, { hosts: 'a', ca: 3 })).toBe('ca must be a string, got number');
  });

  it('does not quote long received strings (they may be keys)', () => {
    const schema = z.object({ flavor: z.enum(['a']) });
    expect(messageOf(schema, { flavor: 'k'.repeat(100) })).toBe('flavor must be "a", got a long string');
  });

  it('names unknown fields of strict objects', () => {
    expect(messageOf(z.strictObject({ a: z.string().optional() }), { b: 1, c: 2 })).toBe(
      'request body has unknown fields "b", "c"',
    );
  });

  it('keeps messages written in the schema', () => {
    const schema = z.object({ certificate: z.string().optional() }).refine((v) => v.certificate !== undefined, {
      message: 'no valid parameter sets found',
    });
    expect(messageOf(schema, {})).toBe('no valid parameter sets found');
  });

  it('prefixes other zod messages with the field name', () => {
    expect(messageOf(z.object({ size: z.number().min(256) }), { size: 1 })).toMatch(/^size: /);
  });
});

describe('formatFieldPath', () => {
  it('joins keys with dots and indexes with brackets', () => {
    expect(formatFieldPath(['request', 'names', 2, 'OU'])).toBe('request.names[2].OU');
    expect(formatFieldPath(['weird key'])).toBe('["weird key"]');
    expect(formatFieldPath([])).toBe('request body');
  });
});

describe('describeSchema', () => {
  it('describes nested arrays in the plural', () => {
    expect(describeSchema(z.array(z.array(z.number())))).toBe('an array of arrays of numbers');
  });
});
