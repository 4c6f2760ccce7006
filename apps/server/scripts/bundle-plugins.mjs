/**
 * What the bundles of `npm run build` share (bundle-cli.mjs: the main thread's program and server;
 * bundle-worker.mjs: the worker threads' code): loading esbuild, the options and externals every
 * bundle has, esbuild plugins, the banner that CommonJS dependencies need in an ES module bundle, and
 * writing a bundle in the form `src/bundle-loader.ts` runs.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { init as initLexer, parse as lexModule } from 'es-module-lexer';
import { BUNDLE_IMPORT, BUNDLE_URL } from '../dist/bundle-loader.js';

/** Banner of an ES module bundle: CommonJS dependencies (koa, pino…) call require() for Node's modules. */
export const REQUIRE_BANNER = "import { createRequire as __certsmithCreateRequire } from 'node:module';\nconst require = __certsmithCreateRequire(import.meta.url);";

/** Native addons (better-sqlite3, pkcs11js, graphene-pk11's) and optional natives (pg-native): never bundled. */
export const NATIVE_PACKAGES = ['better-sqlite3', 'pkcs11js', 'graphene-pk11', 'pg-native'];

/** esbuild options of every bundle: Node 20, no legal comments, warnings only. */
const COMMON_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
};

/** esbuild options of an ES module bundle (the workers' bundle, which a worker thread starts on): with the require banner. */
export const BUNDLE_OPTIONS = { ...COMMON_OPTIONS, format: 'esm', banner: { js: REQUIRE_BANNER } };

/**
 * esbuild options of a bundle run by src/bundle-loader.ts with a V8 code cache (the program's
 * bundle): CommonJS, as Node 20 has a code cache for scripts but not for ES modules, with
 * `import.meta.url` as the loader's name for the bundle's URL; written by {@link writeLoaderBundle},
 * not by esbuild.
 */
export const LOADER_BUNDLE_OPTIONS = {
  ...COMMON_OPTIONS,
  format: 'cjs',
  define: { 'import.meta.url': BUNDLE_URL },
  write: false,
  metafile: true,
};

/**
 * esbuild's `build`. A checkout whose node_modules predate esbuild (not yet `npm install`ed) still
 * builds: then `outfile` is removed — the executable runs the compiled modules, never an older
 * bundle of older code — `why` goes to stderr and the script ends with 0.
 *
 * @param {string} outfile
 * @param {string} why  e.g. "bundle-cli: esbuild is not installed (…)"
 */
export async function esbuildOrSkip(outfile, why) {
  // The program's ES module bundle of the builds before the code cache: never loaded any more.
  if (outfile.endsWith('.cjs')) await rm(outfile.replace(/\.cjs$/, '.js'), { force: true });
  try {
    return (await import('esbuild')).build;
  } catch {
    await rm(outfile, { force: true });
    process.stderr.write(`${why}\n`);
    process.exit(0);
  }
}

/** Where a workspace package's compiled file is: the files bundled under their own identity. */
export const WORKSPACE_DIST_FILE = /[\\/](packages|plugins|apps)[\\/][^\\/]+[\\/]dist[\\/].*\.js$/;

/** `import.meta.url` of each bundled workspace file → that file's own URL, relative to the bundle at `outfile`. */
export function ownImportMetaUrl(outfile) {
  return {
    name: 'own-import-meta-url',
    setup(builder) {
      builder.onLoad({ filter: WORKSPACE_DIST_FILE }, async (args) => {
        const contents = await readFile(args.path, 'utf8');
        if (!contents.includes('import.meta.url')) return { contents, loader: 'js' };
        return { contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(relativeUrl(outfile, args.path))}, import.meta.url).href`), loader: 'js' };
      });
    },
  };
}

/** `path` as a URL relative to the bundle at `outfile` (forward slashes on every platform). */
export function relativeUrl(outfile, path) {
  return relative(dirname(outfile), path).split('\\').join('/');
}

/**
 * One copy per package version: npm nests a second copy of a package when the hoisted one is
 * another major (koa and type-is each get their own mime-types 3.0.2 — with its mime-db — beside
 * the root's 2.1.35); each copy would build its tables at start-up. A package already bundled at
 * the same version is reused from its first location.
 */
export function onePackageVersion() {
  return {
    name: 'one-package-version',
    setup(builder) {
      const first = new Map();
      builder.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === 'one-package-version' || args.kind === 'entry-point') return undefined;
        const resolved = await builder.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'one-package-version' });
        if (resolved.errors.length > 0 || resolved.external || !resolved.path.includes(`${sep}node_modules${sep}`)) return resolved;
        const packageRoot = resolved.path.slice(0, resolved.path.lastIndexOf(`${sep}node_modules${sep}`) + `${sep}node_modules${sep}`.length) + packageName(args.path);
        let manifest;
        try {
          manifest = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8'));
        } catch {
          return resolved;
        }
        const key = `${manifest.name}@${manifest.version}`;
        const firstRoot = first.get(key);
        if (firstRoot === undefined) {
          first.set(key, packageRoot);
          return resolved;
        }
        return { ...resolved, path: join(firstRoot, relative(packageRoot, resolved.path)) };
      });
    },
  };
}

/** `@scope/name` or `name` of a bare specifier. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join(sep) : parts[0];
}

/**
 * Write the one output of an esbuild result (built with {@link LOADER_BUNDLE_OPTIONS}) to `outfile` as
 * src/bundle-loader.ts runs it: every `import()` left in it (packages kept outside, plugins loaded by
 * URL) becomes a call of the loader's import function — with V8 11.3, a dynamic import fails in a
 * function deserialized from a code cache (bundle-loader.ts says why). The bundle starts with
 * `"use strict"`, which becomes the directive of the loader's wrapper function: it runs in strict
 * mode, as the ES module bundles did (esbuild writes the directive only when its entry is a file).
 * Then come `require`s of every package kept outside that the bundle imports statically: an ES
 * module bundle's imports are loaded before any of its code runs, and so are these. esbuild would
 * leave each `require` where the module that imports it is first evaluated, which may be while an
 * `import()` of the same package is under way (e.g. a signer plugin's), and Node 20 refuses to
 * `require()` an ES module that is still loading (ERR_INTERNAL_ASSERTION "not yet fully loaded").
 * Checked: no `import.meta` is left.
 */
export async function writeLoaderBundle(result, outfile) {
  const [output, ...others] = result.outputFiles;
  if (output === undefined || others.length > 0) throw new Error(`${outfile}: esbuild wrote ${result.outputFiles.length} files, one expected`);
  const body = output.text.replace(/^"use strict";\n/, '');
  // What the bundled ES modules import statically from outside (a CommonJS dependency's own require()s stay where they are).
  const inputImports = Object.values(result.metafile.inputs).flatMap((input) => input.imports);
  const outside = [...new Set(inputImports.filter((entry) => entry.external && entry.kind === 'import-statement' && !isBuiltin(entry.path)).map((entry) => entry.path))];
  const source = ['"use strict";', ...outside.map((name) => `require(${JSON.stringify(name)});`), body].join('\n');
  await initLexer;
  const [imports] = lexModule(source, outfile);
  let rewritten = '';
  let from = 0;
  for (const entry of imports) {
    if (entry.t === 3) throw new Error(`${outfile}: import.meta is left at offset ${entry.ss}: ${source.slice(entry.ss, entry.se)}`);
    if (entry.t !== 2) throw new Error(`${outfile}: a static import is left at offset ${entry.ss}: ${source.slice(entry.ss, entry.se)}`);
    // A dynamic import: `import` (at ss) becomes the loader's function; the call's arguments stay.
    if (source.slice(entry.ss, entry.ss + 6) !== 'import') throw new Error(`${outfile}: no import keyword at offset ${entry.ss}`);
    rewritten += source.slice(from, entry.ss) + BUNDLE_IMPORT;
    from = entry.ss + 'import'.length;
  }
  rewritten += source.slice(from);
  await writeFile(outfile, rewritten);
}
