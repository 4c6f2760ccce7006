/**
 * Bundle the code of `serve`'s worker threads into `dist/worker.bundle.js`, which the `certsmith`
 * executable starts its workers on when it exists (the pool's `workerEntry`): one file instead of
 * one per module, so the first worker reaches the trust reading the first request waits for ≈20 ms
 * sooner (docs/performance.md, start-up pass 4). Run by `npm run build` after bundle-cli.mjs; it
 * reads the compiled `dist/` files.
 *
 * Workers import their task modules and init hooks by URL (a task's `module`, an init hook's
 * `module`, the prestart's preload), so the bundle's entry registers every workspace module it
 * contains under the URL of its original file (`registerBundledModules`) before it runs the thread
 * (`runWorkerThread`): the worker then takes those modules from the bundle, one instance each.
 * Registered modules are evaluated on their first import, as separate files would be (a prestarted
 * worker reads the trust files before it evaluates the issuer).
 *
 * Kept out, as separate modules: the packages signer plugins import by name (x509-core,
 * signer-api: one instance per thread for the plugins and the issuer), the signer plugins themselves
 * (loaded by name, like third-party ones), the store, undici (loaded on the first AIA fetch) and
 * native addons.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLE_OPTIONS, NATIVE_PACKAGES, WORKSPACE_DIST_FILE, esbuildOrSkip, onePackageVersion, ownImportMetaUrl, relativeUrl } from './bundle-plugins.mjs';

const distDir = fileURLToPath(new URL('../dist/', import.meta.url));
const outfile = join(distDir, 'worker.bundle.js');

const build = await esbuildOrSkip(outfile, 'bundle-worker: esbuild is not installed (run npm install); the workers run unbundled, start-up is slower');

/** What the workers of `serve` import by URL: the packages of their tasks and init hooks, and the server's issued hook. */
const WORKER_ROOTS = ['@certsmith/worker-pool', '@certsmith/bundler', '@certsmith/chain-builder', '@certsmith/issuer', './issued-recording-worker.js'];
const OWN_PACKAGES = ['@certsmith/x509-core', '@certsmith/signer-api', '@certsmith/native-ec', '@certsmith/cert-store', '@certsmith/signer-local', '@certsmith/signer-multiroot', '@certsmith/signer-pkcs11'];
// Imported on the first AIA fetch only (chain-builder's aia-fetcher.ts): inside, its 1 MB would be
// parsed by every thread at start for nothing.
const LOADED_LATER = ['undici'];

const common = {
  ...BUNDLE_OPTIONS,
  external: [...OWN_PACKAGES, ...NATIVE_PACKAGES, ...LOADED_LATER, '*.node'],
};

// First pass: which workspace modules the roots reach (the files the entry registers).
const graph = await build({
  ...common,
  stdin: { contents: WORKER_ROOTS.map((root) => `import ${JSON.stringify(root)};`).join('\n'), resolveDir: distDir, loader: 'js' },
  write: false,
  metafile: true,
  outfile,
  plugins: [onePackageVersion()],
});
const modules = Object.keys(graph.metafile.inputs)
  .map((input) => join(process.cwd(), input))
  .filter((path) => WORKSPACE_DIST_FILE.test(path))
  .sort();

const entry = [
  "import { registerBundledModules, runWorkerThread } from '@certsmith/worker-pool/worker-thread';",
  'const own = (path) => new URL(path, import.meta.url).href;',
  'registerBundledModules({',
  ...modules.map((path) => {
    const url = JSON.stringify(relativeUrl(outfile, path));
    return `  [own(${url})]: () => import(${JSON.stringify(`./${relativeUrl(outfile, path)}`)}),`;
  }),
  '});',
  'await runWorkerThread();',
].join('\n');

await build({
  ...common,
  stdin: { contents: entry, resolveDir: distDir, sourcefile: 'worker-bundle-entry.js', loader: 'js' },
  outfile,
  plugins: [ownImportMetaUrl(outfile), onePackageVersion()],
});
