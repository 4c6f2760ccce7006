import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_IMPORT, BUNDLE_URL, encodeCodeCache, loadBundle } from './bundle-loader.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-bundle-loader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A bundle as scripts/bundle-plugins.mjs writes them: strict, CommonJS, the loader's names for import() and import.meta.url. */
function writeBundle(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `"use strict";\n${body}\n`);
  return file;
}

const BUNDLE = writeBundle(
  'answer.bundle.cjs',
  [
    'const { join } = require("node:path");',
    'function answer(n) { return n * 2 + 1; }',
    'module.exports = {',
    '  answer,',
    '  here: () => [__filename, ' + BUNDLE_URL + '],',
    '  sloppyThis: function () { return this; },',
    '  importSibling: () => ' + BUNDLE_IMPORT + '("./sibling.mjs"),',
    '  importBuiltin: () => ' + BUNDLE_IMPORT + '("node:os").then((os) => typeof os.cpus),',
    '  joined: join("a", "b"),',
    '};',
  ].join('\n'),
);
writeFileSync(join(dir, 'sibling.mjs'), 'export const sibling = "next to the bundle";\n');

interface AnswerBundle {
  answer(n: number): number;
  here(): [string, string];
  sloppyThis(): unknown;
  importSibling(): Promise<{ sibling: string }>;
  importBuiltin(): Promise<string>;
  joined: string;
}

/** A cache of BUNDLE made after its functions ran (as scripts/code-cache.mjs makes them). */
function cacheOf(bundle: string, file: string): string {
  const loaded = loadBundle(bundle);
  const exports = loaded.exports as unknown as AnswerBundle;
  exports.answer(20);
  exports.here();
  writeFileSync(file, loaded.createCodeCache());
  return file;
}

describe('loadBundle', () => {
  it('runs a bundle without a cache: its exports, require from its directory, __filename and its URL', () => {
    const loaded = loadBundle(BUNDLE);
    const exports = loaded.exports as unknown as AnswerBundle;
    expect(loaded.codeCache).toBe('none');
    expect(exports.answer(20)).toBe(41);
    expect(exports.joined).toBe(join('a', 'b'));
    expect(exports.here()).toEqual([BUNDLE, pathToFileURL(BUNDLE).href]);
  });

  it('takes a file: URL as well as a path', () => {
    expect((loadBundle(pathToFileURL(BUNDLE)).exports as unknown as AnswerBundle).answer(1)).toBe(3);
  });

  it('runs in strict mode, as the ES module bundles did', () => {
    const { sloppyThis } = loadBundle(BUNDLE).exports as unknown as AnswerBundle;
    expect(sloppyThis()).toBeUndefined();
  });

  it('compiles the bundle when the cache file is missing, a directory, truncated or not a cache', () => {
    const cache = readFileSync(cacheOf(BUNDLE, join(dir, 'whole.cache')));
    const truncated = join(dir, 'truncated.cache');
    writeFileSync(truncated, cache.subarray(0, cache.length - 100));
    const headerOnly = join(dir, 'header-only.cache');
    writeFileSync(headerOnly, cache.subarray(0, 31));
    const garbage = join(dir, 'garbage.cache');
    writeFileSync(garbage, Buffer.alloc(cache.length, 0x5a));
    const empty = join(dir, 'empty.cache');
    writeFileSync(empty, '');
    for (const file of [join(dir, 'missing.cache'), dir, truncated, headerOnly, garbage, empty]) {
      const loaded = loadBundle(BUNDLE, file);
      expect({ file, use: loaded.codeCache }).toEqual({ file, use: 'none' });
      expect((loaded.exports as unknown as AnswerBundle).answer(2)).toBe(5);
    }
  });

  it('compiles the bundle when a byte of the cached data changed', () => {
    const cache = readFileSync(cacheOf(BUNDLE, join(dir, 'flipped.cache')));
    cache[cache.length - 50] ^= 0x01;
    const flipped = join(dir, 'flipped.cache');
    writeFileSync(flipped, cache);
    // V8 checks no checksum in release builds: handed to it, the damaged data could be deserialized.
    expect(loadBundle(BUNDLE, flipped).codeCache).toBe('none');
  });

  it('does not use a cache made for another source of the same length', () => {
    const cache = cacheOf(BUNDLE, join(dir, 'before-change.cache'));
    const source = readFileSync(BUNDLE, 'utf8');
    // V8 compares the source's length only: this cache would be taken, with the old functions' code.
    const changed = join(dir, 'changed.bundle.cjs');
    writeFileSync(changed, source.replace('n * 2 + 1', 'n * 2 + 3'));
    expect(readFileSync(changed).length).toBe(readFileSync(BUNDLE).length);
    const loaded = loadBundle(changed, cache);
    expect(loaded.codeCache).toBe('none');
    expect((loaded.exports as unknown as AnswerBundle).answer(20)).toBe(43);
  });

});

/**
 * What V8 does with a cache, each in a process of its own: V8 also answers a source compiled before in
 * the same thread from its in-memory compilation cache, without looking at the data given; and V8's
 * flags are per process. These run the built loader (`npm run build`, which the suite runs first).
 */
describe('loadBundle in a fresh process', () => {
  const loader = new URL('../dist/bundle-loader.js', import.meta.url).href;
  const run = (flags: string[], script: string): string =>
    execFileSync(process.execPath, [...flags, '--input-type=module', '-e', `import { loadBundle } from ${JSON.stringify(loader)};\n${script}`], { encoding: 'utf8' });
  /** Make the cache in one process (after the bundle's functions ran, imports included), as scripts/code-cache.mjs does. */
  const makeCache = (flags: string[], file: string): void => {
    run(
      flags,
      `import { writeFileSync } from 'node:fs';
       const b = loadBundle(${JSON.stringify(BUNDLE)});
       b.exports.answer(1);
       await b.exports.importSibling();
       await b.exports.importBuiltin();
       writeFileSync(${JSON.stringify(file)}, b.createCodeCache());`,
    );
  };
  const use = (flags: string[], cache: string): unknown =>
    JSON.parse(
      run(
        flags,
        `const b = loadBundle(${JSON.stringify(BUNDLE)}, ${JSON.stringify(cache)});
         const imported = await Promise.all([b.exports.importSibling().then((m) => m.sibling), b.exports.importBuiltin()]);
         process.stdout.write(JSON.stringify([b.codeCache, b.exports.answer(20), ...imported]));`,
      ),
    );

  it('runs the bundle from the code cache createCodeCache made, its dynamic imports included', () => {
    // With V8 11.3, import() itself fails in a function taken from a code cache (bundle-loader.ts).
    const cache = join(dir, 'fresh.cache');
    makeCache([], cache);
    expect(use([], cache)).toEqual(['accepted', 41, 'next to the bundle', 'function']);
  });

  it('compiles the bundle when V8 refuses the data of a well-formed cache file', () => {
    const refused = join(dir, 'refused.cache');
    writeFileSync(refused, encodeCodeCache(readFileSync(BUNDLE), Buffer.alloc(4096, 7)));
    expect(use([], refused)).toEqual(['rejected', 41, 'next to the bundle', 'function']);
  });

  it('compiles the bundle when the cache was made under other V8 flags', () => {
    const cache = join(dir, 'flags.cache');
    makeCache(['--max-old-space-size=100'], cache);
    expect(use(['--max-old-space-size=100'], cache)).toEqual(['accepted', 41, 'next to the bundle', 'function']);
    expect(use([], cache)).toEqual(['rejected', 41, 'next to the bundle', 'function']);
  });
});
