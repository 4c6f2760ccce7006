/**
 * The signers of a running server, by label: `--ca`/`--ca-key` (the local signer, label
 * `default`), the config file's `signers` section, and the development CA when nothing defines
 * `default`. Built once at startup on the main thread; closed at shutdown. Also contributes the
 * `signers` map to `/health`.
 */
import type { HealthContributor, Logger } from '@certsmith/http-api';
import { createSignerDirectory } from '@certsmith/issuer';
import type { SignerDirectory, SignerEntry } from '@certsmith/issuer';
import type { SigningPolicy } from '@certsmith/issuer';
import type { SignerEvent } from '@certsmith/signer-api';
import { localSignerPlugin } from '@certsmith/signer-local';
import { ErrorCode } from '@certsmith/x509-core';
import { ConfigReport, joinPath } from '@certsmith/issuer';
import type { ServerConfig } from './config-file.js';
import { configFileError } from './config-file.js';
import { loadDevelopmentSigner } from './dev-ca.js';
import { ServerOptionError } from './errors.js';
import type { ServerOptions } from './server-options.js';
import { LOCAL_SIGNER_MODULE, loadSigner } from './signer-loader.js';
import type { LoadSignerOptions, LoadedSigner } from './signer-loader.js';

/** A loaded signer with the policy its label uses. */
export interface RegisteredSigner extends LoadedSigner {
  policy: SigningPolicy;
  /** Where it was defined: `--ca/--ca-key`, `signers.<label>`, or `development CA`. */
  source: string;
}

/** The server's signers. */
export interface SignerRegistry {
  /** Label routing for the issuing operations. */
  readonly directory: SignerDirectory;
  readonly signers: readonly RegisteredSigner[];
  /** `/health` contributor: `signers: { <label>: { healthy, message? } }`. */
  readonly healthContributor: HealthContributor;
  /** Close every signer (HSM sessions, connection pools). Idempotent; never rejects. */
  close(): Promise<void>;
}

/** What {@link loadSignerRegistry} needs. */
export interface LoadSignerRegistryOptions {
  options: ServerOptions;
  config: ServerConfig;
  logger: Logger;
  env?: Readonly<Record<string, string | undefined>>;
  /** Per-signer health probe budget (default 5 s). */
  healthTimeoutMs?: number;
  /** Receives the lifecycle events signers report, with who reported (metrics). */
  onSignerEvent?: (event: SignerEvent, signer: { label: string; plugin: string }) => void;
}

/** A signer `certsmith serve` loads, as {@link loadSigner} takes it, with the policy its label uses. */
export interface SignerDefinition {
  load: Omit<LoadSignerOptions, 'logger' | 'env' | 'onEvent'>;
  policy: SigningPolicy;
  /** Where it was defined: `--ca/--ca-key` or `signers.<label>`. */
  source: string;
}

/**
 * The signers the flags and the config file define, in loading order: `--ca`/`--ca-key` (label
 * `default`), then the `signers` entries in file order. Reports `signers.default` when both define
 * `default`. (Without any `default`, the server adds the development CA.)
 */
export function signerDefinitions(options: Pick<ServerOptions, 'caFile' | 'caKeyFile'>, config: ServerConfig, report: ConfigReport): SignerDefinition[] {
  const definitions: SignerDefinition[] = [];
  if (options.caFile !== undefined && options.caKeyFile !== undefined) {
    if (config.signers.some((signer) => signer.label === 'default')) {
      report.problem(['signers', 'default'], 'signer "default" is defined twice, by --ca/--ca-key and by signers.default; remove one of them');
    } else {
      definitions.push({
        load: {
          label: 'default',
          plugin: localSignerPlugin,
          describedAs: '@certsmith/signer-local from --ca/--ca-key',
          pluginModule: LOCAL_SIGNER_MODULE,
          options: { certFile: options.caFile, keyFile: options.caKeyFile },
          configDir: process.cwd(),
          where: '--ca/--ca-key',
        },
        policy: config.policy,
        source: '--ca/--ca-key',
      });
    }
  }
  for (const entry of config.signers) {
    definitions.push({
      load: { label: entry.label, plugin: entry.plugin, options: entry.options, configDir: config.dir, where: joinPath('signers', entry.label), configFile: config.file },
      policy: entry.policy ?? config.policy,
      source: joinPath('signers', entry.label),
    });
  }
  return definitions;
}

/**
 * Load every signer ({@link signerDefinitions}, then the development CA if no `default` exists).
 * On any failure the signers loaded so far are closed and the error ({@link SignerLoadError},
 * {@link ConfigFileError}, or {@link ServerOptionError} for a lone `--ca`) is thrown.
 */
export async function loadSignerRegistry(input: LoadSignerRegistryOptions): Promise<SignerRegistry> {
  const { options, config, logger } = input;
  const loaded: RegisteredSigner[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.all(
      loaded.map(async (entry) => {
        try {
          await entry.signer.close();
        } catch (error) {
          logger.warn({ err: error, signer: entry.label }, 'closing a signer failed');
        }
      }),
    );
  };
  try {
    if ((options.caFile === undefined) !== (options.caKeyFile === undefined)) {
      const flag = options.caFile === undefined ? '--ca' : '--ca-key';
      const other = flag === '--ca' ? '--ca-key' : '--ca';
      throw new ServerOptionError(ErrorCode.BadRequest, flag, `is required with ${other} (the local signer needs both the CA certificate and its key)`);
    }
    const report = new ConfigReport();
    const definitions = signerDefinitions(options, config, report);
    if (report.problems.length > 0) throw configFileError(config.file ?? '', report.problems[0]);
    for (const definition of definitions) {
      const signer = await loadSigner({
        ...definition.load,
        logger,
        ...(input.env ? { env: input.env } : {}),
        ...(input.onSignerEvent ? { onEvent: input.onSignerEvent } : {}),
      });
      loaded.push({ ...signer, policy: definition.policy, source: definition.source });
    }
    if (!loaded.some((signer) => signer.label === 'default')) {
      const signer = await loadDevelopmentSigner(options.dataDir, logger);
      loaded.push({ ...signer, policy: config.policy, source: 'development CA' });
    }
  } catch (error) {
    await closeAll();
    throw error;
  }

  const entries: SignerEntry[] = loaded.map((signer) => ({
    label: signer.label,
    signer: signer.signer,
    policy: signer.policy,
    forwardsLabels: signer.forwardsLabels,
    pluginName: signer.pluginName,
    ...(signer.workerRecipe ? { workerRecipe: signer.workerRecipe } : {}),
  }));
  const directory = createSignerDirectory(entries);
  for (const signer of loaded) {
    logger.info(
      { signer: signer.label, plugin: signer.pluginName, source: signer.source, forwardsLabels: signer.forwardsLabels || undefined },
      'signer ready',
    );
  }

  let closing: Promise<void> | null = null;
  return {
    directory,
    signers: loaded,
    healthContributor: createSignerHealthContributor(loaded, input.healthTimeoutMs ?? 5_000),
    close() {
      closing ??= closeAll();
      return closing;
    },
  };
}

/** Health of every signer, probed in parallel with a time budget each. */
function createSignerHealthContributor(signers: readonly RegisteredSigner[], timeoutMs: number): HealthContributor {
  return {
    key: 'signers',
    async check() {
      const detail: Record<string, { healthy: boolean; message?: string }> = {};
      const outcomes = await Promise.all(signers.map((entry) => probe(entry, timeoutMs)));
      signers.forEach((entry, index) => (detail[entry.label] = outcomes[index]!));
      return { healthy: outcomes.every((outcome) => outcome.healthy), detail };
    },
  };
}

async function probe(entry: RegisteredSigner, timeoutMs: number): Promise<{ healthy: boolean; message?: string }> {
  if (typeof entry.signer.health !== 'function') return { healthy: true };
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`health check did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const health = await Promise.race([entry.signer.health(), timeout]);
    return health.message === undefined ? { healthy: health.ok } : { healthy: health.ok, message: health.message };
  } catch (error) {
    return { healthy: false, message: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
