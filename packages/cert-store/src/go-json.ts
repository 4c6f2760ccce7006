/**
 * JSON text as Go's `json.Marshal` writes it, because CFSSL stores `metadata` and `sans` that way
 * (lifecycle spec §2.1): compact, map keys sorted, and `<`, `>`, `&`, U+2028, U+2029 escaped as
 * `\u003c`… (Go's HTML-safe default).
 */

/** `json.Marshal(value)` for JSON-compatible values (maps as objects with sorted keys). */
export function goJsonMarshal(value: unknown): string {
  return escapeHtml(JSON.stringify(sortKeys(value)) ?? 'null');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort(compareUtf8)) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

/** Go sorts map keys as byte strings (UTF-8), not by UTF-16 code units. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function escapeHtml(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
