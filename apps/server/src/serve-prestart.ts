/**
 * What the `certsmith` executable starts for `certsmith serve` before the server's code is loaded,
 * guessed from the command line (docs/performance.md, start-up): the certificate store's thread
 * ({@link prestartServeStore}) and the reading of the trust files in the first worker
 * ({@link guessTrustFiles}). The server uses what was started only when its own resolved options
 * name the same store and the same files (`PrestartedStore.take`, `StartServerOptions.prestartedTrust`),
 * so a wrong guess costs the guess and changes nothing else; every check of start-up still runs.
 *
 * This module is imported before everything else: it must stay light (the store's package is
 * imported when the store is prestarted).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { MigrationMode, PrestartedStore } from '@certsmith/cert-store';
import type { PrestartOptions } from '@certsmith/worker-pool/prestart';
import { defaultDataDir, defaultDbConfig } from './data-dir.js';

/**
 * The packages the worker threads of `serve` take their tasks and init hooks from (bundling,
 * issuing, the signers), imported by a prestarted worker while the main thread imports its own.
 */
const SERVE_WORKER_PACKAGES = [
  '@certsmith/x509-core',
  '@certsmith/worker-pool',
  '@certsmith/chain-builder',
  '@certsmith/bundler',
  '@certsmith/signer-api',
  '@certsmith/signer-local',
  '@certsmith/issuer',
];

/**
 * What `serve`'s prestarted workers do before a pool takes them (`prestartWorkers`): the first reads
 * the trust files, when the command line names them, then each imports {@link SERVE_WORKER_PACKAGES}.
 * The executable (cli.ts) and the build's code-cache starts (scripts/code-cache.mjs) start them so.
 */
export function serveWorkerPrestart(trustFiles: TrustFileGuess | undefined): Pick<PrestartOptions, 'preload' | 'task'> {
  return {
    preload: SERVE_WORKER_PACKAGES.map((name) => import.meta.resolve(name)),
    ...(trustFiles === undefined ? {} : { task: { module: import.meta.resolve('@certsmith/bundler'), name: 'bundle.read-trust', input: trustFiles } }),
  };
}

/** The trust files of `serve` (`--ca-bundle`, `--int-bundle`, `--metadata`), as absolute paths. */
export interface TrustFileGuess {
  caBundleFile?: string;
  intBundleFile?: string;
  metadataFile?: string;
}

/**
 * The long flags of `args` by name, as commander with the Go-style shim reads them: `--name value`,
 * `--name=value`, `-name value`, `-name=value`; a flag followed by another flag maps to `''` (a
 * guess only, see the module comment).
 */
export function readServeFlags(args: readonly string[]): ReadonlyMap<string, string> {
  const flags = new Map<string, string>();
  for (let index = 0; index < args.length; index += 1) {
    const match = /^--?([a-z][a-z0-9-]+)(?:=(.*))?$/s.exec(args[index]!);
    if (match === null) continue;
    const [, name, inline] = match;
    const next = args[index + 1];
    if (inline !== undefined) flags.set(name!, inline);
    else if (next === undefined || next.startsWith('-')) flags.set(name!, '');
    else {
      flags.set(name!, next);
      index += 1;
    }
  }
  return flags;
}

/** The trust files `flags` name, or `undefined` when they name none or bundling is disabled. */
export function guessTrustFiles(flags: ReadonlyMap<string, string>): TrustFileGuess | undefined {
  if ((flags.get('disable') ?? '').split(',').some((name) => name.trim() === 'bundle')) return undefined;
  const files: TrustFileGuess = {};
  for (const [flag, key] of TRUST_FLAGS) {
    const path = flags.get(flag);
    if (path) files[key] = resolve(path);
  }
  return Object.keys(files).length > 0 ? files : undefined;
}

const TRUST_FLAGS = [
  ['ca-bundle', 'caBundleFile'],
  ['int-bundle', 'intBundleFile'],
  ['metadata', 'metadataFile'],
] as const;

/**
 * Start opening the store `serve` would open by default — SQLite in `<data-dir>/certs.db` — or
 * `undefined` when the flags name another store (`--db-config`) or none (`--no-store`), or the file
 * does not exist yet (the first start creates and migrates it, once its configuration is validated).
 */
export async function prestartServeStore(flags: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv = process.env): Promise<PrestartedStore | undefined> {
  if (flags.has('db-config') || flags.has('no-store')) return undefined;
  const config = defaultDbConfig(resolve(flags.get('data-dir') || defaultDataDir(env)));
  if (!existsSync(config.dataSource)) return undefined;
  const migrations: MigrationMode = flags.get('db-migrations') === 'off' ? 'off' : 'apply';
  const { prestartStore } = await import('@certsmith/cert-store');
  return prestartStore(config, { migrations });
}
