/**
 * Running the CommonJS bundle `npm run build` makes of the program and the server
 * (`dist/cli-runtime.bundle.cjs`) with the V8 code cache made for it at build time
 * (`scripts/code-cache.mjs`): V8 then deserializes the bundle's compiled functions — its top level
 * and every function the build's throwaway `serve` starts ran — instead of parsing and compiling
 * 1.9 MB of source on every start. Numbers: docs/performance.md, start-up pass 6a.
 *
 * Why by hand, with `node:vm`: Node 20 has no compile cache of its own (`module.enableCompileCache`
 * is Node 22.1) and none for ES modules, so the bundles are CommonJS run through `vm.Script` with
 * `cachedData`. `v8-compile-cache` (and its fork `v8-compile-cache-lib`) hook `require` for every
 * CommonJS module and keep their caches in the temporary directory, made at the first run, from
 * compilation alone (without the functions compiled later, lazily); they know nothing of ES modules
 * or of `import()`. What is kept from Node 22's own cache (src/compile_cache.cc) is its check: V8
 * checks its version, its flags and the source's *length* only, and verifies no checksum in release
 * builds, so a cache file also carries CRC-32s of the source it was made for and of its data, and
 * anything that does not match is not handed to V8 at all.
 *
 * A missing, unreadable, truncated, corrupt or stale cache, or one V8 rejects (another Node, other
 * V8 flags: a cache is made under `certsmith serve`'s flags), only costs the normal compilation.
 *
 * The bundles contain no `import()` (the build rewrites each to a call of {@link BUNDLE_IMPORT}):
 * V8 11.3 drops a script's host-defined options when it serializes its code cache, so a dynamic
 * import in a function taken from the cache fails with ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING
 * (fixed in V8 12.6: nodejs/node#52535).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';

/** The name a bundle's dynamic imports call instead of `import()` (see the module comment). */
export const BUNDLE_IMPORT = '__certsmithImport';

/** The name a bundle's `import.meta.url` is replaced with: the bundle's own URL. */
export const BUNDLE_URL = '__certsmithBundleUrl';

/**
 * The code caches of the program's bundle that `npm run build` makes (scripts/code-cache.mjs), one
 * per set of V8 flags the executable runs it under, as V8 takes a cache only under the flags it was
 * made with: `serve`, the executable's `serve` (its shebang's flags and start-up's interrupt budget,
 * start-up-tiering.ts); `process`, the processes `serve --processes N` forks
 * (cluster/worker-process-settings.ts adds a flag); `command`, every other command (the shebang's
 * flags alone).
 */
export const CODE_CACHE_FILES = {
  serve: new URL('./cli-runtime.serve.cache', import.meta.url),
  process: new URL('./cli-runtime.serve-process.cache', import.meta.url),
  command: new URL('./cli-runtime.command.cache', import.meta.url),
} as const;

/** What a code cache file starts with; its version changes when the layout below does. */
const MAGIC = Buffer.from('certsmith-code-cache-1\n', 'latin1');
/** Layout: MAGIC, CRC-32 of the bundle's source, CRC-32 of the V8 data (uint32 LE each), the data. */
const HEADER_LENGTH = MAGIC.length + 8;

/**
 * How the code cache went: V8 took it, V8 refused it, or there was none to give (missing, or not
 * matching the source). V8 also reports "took it" when it found the source in its in-memory
 * compilation cache (compiled before in the same thread), without reading the data.
 */
export type CodeCacheUse = 'accepted' | 'rejected' | 'none';

/** A bundle run by {@link loadBundle}. */
export interface LoadedBundle {
  /** What the bundle exports (its `module.exports`). */
  readonly exports: Record<string, unknown>;
  /** Whether it ran from its code cache. */
  readonly codeCache: CodeCacheUse;
  /**
   * A code cache of the bundle as V8 holds it now — with every function compiled so far, so made
   * after the work whose compilation it should save — in the file format {@link loadBundle} reads.
   */
  createCodeCache(): Buffer;
}

/**
 * Run the CommonJS bundle at `bundle` (a path or `file:` URL), with the code cache in `cacheFile`
 * when it matches (see the module comment), and give what it exports. `require` in the bundle is
 * Node's, from the bundle's directory (packages left outside the bundle, ES modules included:
 * Node ≥ 20.19 requires them as the same instances `import` gives); its dynamic imports are this
 * module's `import()`, relative ones resolved against the bundle.
 */
export function loadBundle(bundle: string | URL, cacheFile?: string | URL): LoadedBundle {
  const filename = bundle instanceof URL || bundle.startsWith('file:') ? fileURLToPath(bundle) : bundle;
  const sourceBytes = readFileSync(filename);
  const cachedData = cacheFile === undefined ? undefined : readCodeCache(cacheFile, sourceBytes);
  const script = new Script(wrap(sourceBytes.toString('utf8')), { filename, ...(cachedData === undefined ? {} : { cachedData }) });
  const codeCache: CodeCacheUse = cachedData === undefined ? 'none' : script.cachedDataRejected === true ? 'rejected' : 'accepted';
  const module = { exports: {} as Record<string, unknown> };
  const url = pathToFileURL(filename);
  const bundleImport = (specifier: string): Promise<unknown> => import(/^\.\.?\//.test(specifier) ? new URL(specifier, url).href : specifier);
  (script.runInThisContext() as BundleFunction).call(module.exports, module.exports, createRequire(filename), module, filename, dirname(filename), bundleImport, url.href);
  return {
    exports: module.exports,
    codeCache,
    createCodeCache: () => encodeCodeCache(sourceBytes, script.createCachedData()),
  };
}

type BundleFunction = (
  this: unknown,
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
  bundleImport: (specifier: string) => Promise<unknown>,
  bundleUrl: string,
) => void;

/**
 * The bundle as one function expression, Node's CommonJS wrapper plus this loader's two names. The
 * source's first statement, esbuild's `"use strict"`, stays the function's directive: the bundle
 * runs in strict mode, as the ES module bundle did.
 */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname, ${BUNDLE_IMPORT}, ${BUNDLE_URL}) {${source}\n})`;
}

/** `data` (V8's code cache of the bundle whose source is `source`) in the file format {@link loadBundle} reads. */
export function encodeCodeCache(source: Uint8Array, data: Uint8Array): Buffer {
  const header = Buffer.alloc(HEADER_LENGTH);
  MAGIC.copy(header);
  header.writeUInt32LE(crc32(source), MAGIC.length);
  header.writeUInt32LE(crc32(data), MAGIC.length + 4);
  return Buffer.concat([header, data]);
}

/**
 * V8's data from the code cache file `file` when it was made for `source` and is whole, else
 * `undefined` (no file, unreadable, another format, another source, damaged).
 */
export function readCodeCache(file: string | URL, source: Uint8Array): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  if (bytes.length <= HEADER_LENGTH || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (bytes.readUInt32LE(MAGIC.length) !== crc32(source)) return undefined;
  const data = bytes.subarray(HEADER_LENGTH);
  return bytes.readUInt32LE(MAGIC.length + 4) === crc32(data) ? data : undefined;
}
