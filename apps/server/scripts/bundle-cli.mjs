/**
 * Bundle `dist/cli-runtime.js` (the program and the server, see src/cli-runtime.ts) into
 * `dist/cli-runtime.bundle.js`, which the `certsmith` executable loads when it exists: one file
 * instead of ≈400 modules, ≈100 ms less start-up on a 2-core machine (docs/performance.md, start-up).
 * Run by `npm run build` after `tsc -b`; it reads the compiled `dist/` files of the workspace.
 *
 * Kept out of the bundle, as separate modules shared with the rest of the process:
 * - packages that other threads, plugins or the executable itself load by URL or by name, so that
 *   the main thread holds one instance of each (the event loop runs bundle tasks it imports by
 *   URL; plugins import signer-api and x509-core; the executable opens the store before it loads
 *   the server; errors are told apart with instanceof): x509-core, worker-pool, chain-builder,
 *   bundler, ubiquity-rules, signer-api, native-ec, cert-store and the signer plugins;
 * - native addons (better-sqlite3, pkcs11js) and optional natives (pg-native).
 * A module of the bundle that finds something by its own location (`import.meta.url`: task
 * modules, the SQLite thread's entry, plugin resolution) gets its original file's URL.
 */
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const distDir = fileURLToPath(new URL('../dist/', import.meta.url));
const outfile = join(distDir, 'cli-runtime.bundle.js');

// A checkout whose node_modules predate esbuild (not yet `npm install`ed) still builds: the
// executable then runs the compiled modules — never an older bundle of older code.
let build;
try {
  ({ build } = await import('esbuild'));
} catch {
  await rm(outfile, { force: true });
  process.stderr.write('bundle-cli: esbuild is not installed (run npm install); certsmith runs unbundled, its start-up is slower\n');
  process.exit(0);
}

const SHARED_PACKAGES = [
  '@certsmith/x509-core',
  '@certsmith/worker-pool',
  '@certsmith/chain-builder',
  '@certsmith/bundler',
  '@certsmith/ubiquity-rules',
  '@certsmith/signer-api',
  '@certsmith/native-ec',
  '@certsmith/cert-store',
  '@certsmith/signer-local',
  '@certsmith/signer-multiroot',
  '@certsmith/signer-pkcs11',
];
const NATIVE_PACKAGES = ['better-sqlite3', 'pkcs11js', 'graphene-pk11', 'pg-native'];

/** `import.meta.url` of each bundled workspace file → that file's own URL, relative to the bundle. */
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(builder) {
    builder.onLoad({ filter: /[\\/](packages|plugins|apps)[\\/][^\\/]+[\\/]dist[\\/].*\.js$/ }, async (args) => {
      const contents = await readFile(args.path, 'utf8');
      if (!contents.includes('import.meta.url')) return { contents, loader: 'js' };
      const own = relative(dirname(outfile), args.path).split('\\').join('/');
      return { contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`), loader: 'js' };
    });
  },
};

/**
 * One copy per package version: npm nests a second copy of a package when the hoisted one is
 * another major (koa and type-is each get their own mime-types 3.0.2 — with its mime-db — beside
 * the root's 2.1.35); each copy would build its tables at start-up. A package already bundled at
 * the same version is reused from its first location.
 */
const onePackageVersion = {
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

/** `@scope/name` or `name` of a bare specifier. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join(sep) : parts[0];
}

await build({
  entryPoints: [join(distDir, 'cli-runtime.js')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: [...SHARED_PACKAGES, ...NATIVE_PACKAGES, '*.node'],
  // CommonJS dependencies (koa, pino…) call require() for Node's modules.
  banner: { js: "import { createRequire as __certsmithCreateRequire } from 'node:module';\nconst require = __certsmithCreateRequire(import.meta.url);" },
  plugins: [ownImportMetaUrl, onePackageVersion],
  legalComments: 'none',
  logLevel: 'warning',
});
