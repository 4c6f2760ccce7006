/**
 * A deliberately small JSON-Schema subset for plugin options: enough to reject a misspelt option
 * or a number where a path belongs, with a message that names the option, without pulling a schema
 * engine into every plugin. Plugins needing more write `validateOptions` instead.
 */

/** The supported subset of JSON Schema. */
export interface OptionsSchema {
  type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array';
  properties?: Record<string, OptionsSchema>;
  required?: readonly string[];
  additionalProperties?: boolean;
  items?: OptionsSchema;
  enum?: readonly unknown[];
  description?: string;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Return the problems of `value` against `schema`, each naming the option path
 * (`options.keyFile must be a string, got number`); empty when valid.
 */
export function checkOptionsSchema(schema: OptionsSchema, value: unknown, path = 'options'): string[] {
  const problems: string[] = [];
  const actual = typeOf(value);
  if (schema.type !== undefined) {
    const ok = schema.type === 'number' ? actual === 'number' || actual === 'integer' : actual === schema.type;
    if (!ok) return [`${path} must be ${schema.type === 'array' || schema.type === 'object' ? 'an' : 'a'} ${schema.type}, got ${actual}`];
  }
  if (schema.enum !== undefined && !schema.enum.includes(value)) {
    problems.push(`${path} must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  }
  if (actual === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) {
      if (record[key] === undefined) problems.push(`${path}.${key} is required`);
    }
    for (const [key, child] of Object.entries(record)) {
      const childSchema = schema.properties?.[key];
      if (childSchema) problems.push(...checkOptionsSchema(childSchema, child, `${path}.${key}`));
      else if (schema.additionalProperties === false) problems.push(`${path}.${key} is not a known option`);
    }
  }
  if (actual === 'array' && schema.items) {
    (value as unknown[]).forEach((item, index) => problems.push(...checkOptionsSchema(schema.items as OptionsSchema, item, `${path}[${index}]`)));
  }
  return problems;
}
