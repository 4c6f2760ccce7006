/**
 * How the `certsmith` executable starts node: its `#!/usr/bin/env -S [NAME=value …] node <flags>`
 * line, read by the build's code-cache step (V8 takes a cache only under the flags it was made with)
 * and by the benchmarks (which start `dist/cli.js` as the executable would).
 */
import { readFileSync } from 'node:fs';

/**
 * The environment the line sets and the node flags it passes, or `null` when the file's first line
 * is not such a line.
 *
 * @param {string} file  the executable (`bin/certsmith.js`) or the compiled CLI (`dist/cli.js`)
 * @returns {{ env: Record<string, string>, flags: string[] } | null}
 */
export function readExecutableShebang(file) {
  const firstLine = readFileSync(file, 'utf8').split('\n', 1)[0] ?? '';
  const match = /^#!\S*env -S (?<env>(?:[A-Z_][A-Z0-9_]*=\S* )*)node(?<flags>( --?\S+)*)\s*$/.exec(firstLine);
  if (match === null) return null;
  const words = (text) => text?.trim().split(/\s+/).filter(Boolean) ?? [];
  const env = Object.fromEntries(words(match.groups.env).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  return { env, flags: words(match.groups.flags) };
}
