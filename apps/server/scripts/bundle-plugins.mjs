/**
 * What the bundles of `npm run build` share (bundle-cli.mjs: the main thread's program and server;
 * bundle-worker.mjs: the worker threads' code): loading esbuild, the options and externals every
 * bundle has, esbuild plugins, and the banner that CommonJS dependencies need.
 */
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

/** Banner of every bundle: CommonJS dependencies (koa, pino…) call require() for Node's modules. */
export const REQUIRE_BANNER = "import { createRequire as __certsmithCreateRequire } from 'node:module';\nconst require = __certsmithCreateRequire(import.meta.url);";

/** Native addons (better-sqlite3, pkcs11js, graphene-pk11's) and optional natives (pg-native): never bundled. */
export const NATIVE_PACKAGES = ['better-sqlite3', 'pkcs11js', 'graphene-pk11', 'pg-native'];

/** esbuild options of every bundle: Node 20 ESM, the require banner, no legal comments, warnings only. */
export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: REQUIRE_BANNER },
  legalComments: 'none',
  logLevel: 'warning',
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
