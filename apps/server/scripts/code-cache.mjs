/**
 * Make the V8 code caches that src/bundle-loader.ts runs the program's bundle with, one per set of
 * V8 flags the executable runs it under (`CODE_CACHE_FILES` of src/bundle-loader.ts). Run by `npm run build` after
 * bundle-cli.mjs; without the bundle (no esbuild) there is nothing to make. Numbers and what was
 * tried: docs/performance.md, start-up pass 6a.
 *
 * A cache holds the functions V8 has compiled when it is made, and V8 compiles a function on its
 * first call: so a cache is made after throwaway `certsmith serve` starts — on 127.0.0.1, port 0,
 * with a development CA, trust files made of it and a SQLite store in a temporary directory — and
 * their first `/health` answers, the path of a start on the main thread (the program, option
 * resolution, `startServer`): one start with a worker thread (prestarted as src/cli.ts does, reading
 * the trust files) and one without (`--workers 0`, the layout of `--processes N`, where the main
 * thread reads them).
 *
 * V8 takes a cache only under the flags it was made with, and checks the flags in force then, run
 * time changes included. So this script runs itself again under each role's node flags (the
 * executable's shebang, `bin/certsmith.js`; for the processes `serve --processes` forks, those plus
 * what the leader adds, src/cluster/worker-process-settings.ts) and holds back optimisation as
 * `serve` does before it loads the bundle (src/start-up-tiering.ts). The other commands' cache
 * (`command`: the shebang's flags alone) is made after the bundle's evaluation and the program's
 * construction only: what each command then runs differs. Then it checks, in a fresh
 * process per role, that V8 takes the cache; the build fails when it does not.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { readExecutableShebang } from './executable-shebang.mjs';

const dist = new URL('../dist/', import.meta.url);
const { CODE_CACHE_FILES } = await import(new URL('bundle-loader.js', dist).href);
const bundle = new URL('cli-runtime.bundle.cjs', dist);
const workerBundle = new URL('worker.bundle.js', dist);
const self = fileURLToPath(import.meta.url);

const [mode, role] = process.argv.slice(2);
if (mode === '--make') await makeCache(role);
else if (mode === '--check') await checkCache(role);
else await buildStep();

/** `npm run build`'s step: each role's cache made, then checked, under that role's flags. */
async function buildStep() {
  const cacheFiles = Object.values(CODE_CACHE_FILES);
  for (const file of cacheFiles) rmSync(file, { force: true });
  if (!existsSync(bundle)) process.exit(0);
  const serveFlags = shebangFlags(fileURLToPath(new URL('../bin/certsmith.js', import.meta.url)));
  const roles = { serve: serveFlags, process: await workerProcessFlags(serveFlags), command: serveFlags };
  for (const step of ['--make', '--check']) {
    for (const [name, flags] of Object.entries(roles)) {
      const child = spawnSync(process.execPath, [...flags, self, step, name], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
      if (child.status === 0) continue;
      for (const file of cacheFiles) rmSync(file, { force: true });
      const why = child.error?.message ?? (child.signal === null ? `exit code ${child.status}` : `signal ${child.signal}`);
      process.stderr.write(`code-cache: ${step === '--make' ? 'making' : 'checking'} the code cache of the "${name}" role failed (${why})\n`);
      process.exit(1);
    }
  }
}

/** In a child under `role`'s flags: the throwaway starts, then the cache of what they ran. */
async function makeCache(role) {
  const { loadBundle } = await import(new URL('bundle-loader.js', dist).href);
  if (role === 'command') {
    // The other commands: the program (every command's definition) after the bundle's evaluation.
    const loaded = loadBundle(bundle);
    loaded.exports.createProgram({ serve: async () => undefined });
    writeAtomically(CODE_CACHE_FILES[role], loaded.createCodeCache());
    process.exit(0);
  }
  const { holdBackOptimisation } = await import(new URL('start-up-tiering.js', dist).href);
  holdBackOptimisation();
  const { prestartWorkers } = await import('@certsmith/worker-pool/prestart');
  const { serveWorkerPrestart } = await import(new URL('serve-prestart.js', dist).href);
  const { createDevelopmentCa } = await import('@certsmith/signer-local');

  const scratch = mkdtempSync(join(tmpdir(), 'certsmith-code-cache-'));
  try {
    const ca = await createDevelopmentCa(join(scratch, 'ca'));
    const metadataFile = join(scratch, 'ca-bundle.crt.metadata');
    writeFileSync(metadataFile, JSON.stringify([{ name: 'build', weight: 1, hash_algo: 'SHA2', key_algo: 'ECDSA256', keystore: relative(scratch, ca.certFile) }]));
    const trustFiles = { caBundleFile: ca.certFile, intBundleFile: ca.certFile, metadataFile };
    // With worker threads, as src/cli.ts starts `serve`: the worker first, reading the trust files, then the server's code.
    const withWorker = role === 'serve' && existsSync(workerBundle);
    const prestarted = withWorker
      ? prestartWorkers({
          count: 1,
          workerEntry: workerBundle,
          ...serveWorkerPrestart(trustFiles),
        })
      : undefined;
    const loaded = loadBundle(bundle);
    const runtime = loaded.exports;
    const startOnce = async (workers, started) => {
      let server;
      await runtime
        .createProgram({
          async serve(input) {
            server = await runtime.startServer({ ...input, ...started });
          },
        })
        .parseAsync(
          [
            'serve', '--address', '127.0.0.1', '--port', '0', '--processes', '1', '--workers', String(workers),
            '--data-dir', join(scratch, 'data'), '--ca', ca.certFile, '--ca-key', ca.keyFile,
            '--ca-bundle', trustFiles.caBundleFile, '--int-bundle', trustFiles.intBundleFile, '--metadata', trustFiles.metadataFile,
          ],
          { from: 'user' },
        );
      const health = await fetch(`${server.url}/api/v1/cfssl/health`);
      if (health.status !== 200) throw new Error(`GET /health answered ${health.status}`);
      await health.arrayBuffer();
      await server.close();
    };
    if (prestarted !== undefined) {
      await startOnce(1, { prestartedWorkers: prestarted, workerEntry: workerBundle, prestartedTrust: { files: trustFiles, snapshot: prestarted.taskResult } });
    }
    await startOnce(0, {});

    // The bundle was compiled under the role's flags and start-up's interrupt budget (held since
    // the top); the server has turned pretenuring off since (src/pretenuring.ts), and V8 would stamp
    // the cache with that: it is turned back on while the cache is made.
    setFlagsFromString('--allocation-site-pretenuring');
    writeAtomically(CODE_CACHE_FILES[role], loaded.createCodeCache());
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  process.exit(0);
}

/** In a fresh child under `role`'s flags, as the executable loads the bundle: V8 takes the role's cache. */
async function checkCache(role) {
  const { holdBackOptimisation } = await import(new URL('start-up-tiering.js', dist).href);
  if (role !== 'command') holdBackOptimisation();
  const { loadBundle } = await import(new URL('bundle-loader.js', dist).href);
  const use = loadBundle(bundle, CODE_CACHE_FILES[role]).codeCache;
  if (use !== 'accepted') {
    process.stderr.write(`code-cache: V8 does not take the "${role}" cache (${use}) under that role's flags; did something change V8 flags before the bundle loads?\n`);
    process.exit(1);
  }
  process.exit(0);
}

/** Write `data` to `file` through a temporary file: a reader never sees half a cache. */
function writeAtomically(file, data) {
  const path = fileURLToPath(file);
  writeFileSync(`${path}.tmp`, data);
  renameSync(`${path}.tmp`, path);
}

/** The node flags of the executable's `#!/usr/bin/env -S [NAME=value …] node …` line. */
function shebangFlags(executable) {
  const shebang = readExecutableShebang(executable);
  if (shebang === null) throw new Error(`${executable}: no "#!/usr/bin/env -S node …" line`);
  return shebang.flags;
}

/** The flags of a process `serve --processes N` forks, when the leader runs with `flags` and no NODE_OPTIONS. */
async function workerProcessFlags(flags) {
  const { workerProcessExecArgv } = await import(new URL('cluster/worker-process-settings.js', dist).href);
  return workerProcessExecArgv(flags, {});
}
