/**
 * Bundle `dist/cli-runtime.js` (the program and the server, see src/cli-runtime.ts) into
 * `dist/cli-runtime.bundle.cjs`, which the `certsmith` executable runs when it exists
 * (src/bundle-loader.ts, with the code cache code-cache.mjs makes): one file instead of ≈400
 * modules, ≈100 ms less start-up on a 2-core machine (docs/performance.md, start-up). CommonJS
 * because Node 20 has a code cache for scripts only. Run by `npm run build` after `tsc -b`; it
 * reads the compiled `dist/` files of the workspace.
 *
 * Kept out of the bundle, as separate modules shared with the rest of the process:
 * - packages that other threads, plugins or the executable itself load by URL or by name, so that
 *   the main thread holds one instance of each (the event loop runs bundle tasks it imports by
 *   URL; plugins import signer-api and x509-core; the executable opens the store before it loads
 *   the server; errors are told apart with instanceof): x509-core, worker-pool, signer-api,
 *   native-ec, cert-store and the signer plugins (signer-local is imported by URL as a plugin);
 *   chain-builder, bundler and ubiquity-rules are inside: since the event loop runs the task
 *   definitions it holds (worker-pool's `workerInitsHeldHere`), nothing on the main thread imports
 *   them by URL, and they then come with the bundle's code cache;
 * - undici, imported on the first AIA fetch only;
 * - native addons (better-sqlite3, pkcs11js) and optional natives (pg-native).
 * A module of the bundle that finds something by its own location (`import.meta.url`: task
 * modules, the SQLite thread's entry, plugin resolution) gets its original file's URL.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOADER_BUNDLE_OPTIONS, NATIVE_PACKAGES, esbuildOrSkip, onePackageVersion, ownImportMetaUrl, writeLoaderBundle } from './bundle-plugins.mjs';

const distDir = fileURLToPath(new URL('../dist/', import.meta.url));
const outfile = join(distDir, 'cli-runtime.bundle.cjs');

const build = await esbuildOrSkip(outfile, 'bundle-cli: esbuild is not installed (run npm install); certsmith runs unbundled, its start-up is slower');

const SHARED_PACKAGES = [
  '@certsmith/x509-core',
  '@certsmith/worker-pool',
  '@certsmith/signer-api',
  '@certsmith/native-ec',
  '@certsmith/cert-store',
  '@certsmith/signer-local',
  '@certsmith/signer-multiroot',
  '@certsmith/signer-pkcs11',
];

// Imported on the first AIA fetch only (chain-builder's aia-fetcher.ts): inside, its 1 MB would be
// parsed at every start for nothing.
const LOADED_LATER = ['undici'];

const result = await build({
  ...LOADER_BUNDLE_OPTIONS,
  entryPoints: [join(distDir, 'cli-runtime.js')],
  outfile,
  external: [...SHARED_PACKAGES, ...NATIVE_PACKAGES, ...LOADED_LATER, '*.node'],
  plugins: [ownImportMetaUrl(outfile), onePackageVersion()],
});
await writeLoaderBundle(result, outfile);
