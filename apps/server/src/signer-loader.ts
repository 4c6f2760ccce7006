/**
 * Loading one signer from a `signers` entry (issue 6): find the plugin module
 * ({@link resolvePluginModule}), import it (ESM or CommonJS; the plugin is the default export),
 * check its shape and its signer-API range, validate its options, and create the signer on the main
 * thread — HSM sessions and remote connection pools must never live in a worker. Every failure is a
 * {@link SignerLoadError} naming the label, the plugin and what to do; `certsmith serve` exits 2.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { Logger } from '@certsmith/http-api';
import type { WorkerSignerRecipe } from '@certsmith/issuer';
import {
  SIGNER_API_VERSION,
  assertSignerApiCompatible,
  assertSignerShape,
  createSignerContext,
  isSignerPlugin,
  validateSignerOptions,
} from '@certsmith/signer-api';
import type { Signer, SignerEvent, SignerLogger, SignerPlugin } from '@certsmith/signer-api';
import { isCodedError } from '@certsmith/x509-core';
import { SignerLoadError } from './errors.js';
import { CERTSMITH_DIR, PluginNotFoundError, resolvePluginModule } from './plugin-resolution.js';
import type { ResolvedPlugin } from './plugin-resolution.js';

/** Package name of the multi-root remote signer, which forwards labels unless it has a fixed one. */
export const MULTIROOT_PLUGIN_NAME = '@certsmith/signer-multiroot';

/**
 * URL of `@certsmith/signer-local`'s entry module (whose default export is `localSignerPlugin`), so
 * worker threads can recreate the local signers defined by flags and the development CA.
 */
export const LOCAL_SIGNER_MODULE = pathToFileURL(createRequire(import.meta.url).resolve('@certsmith/signer-local')).href;

/** A signer ready to serve. */
export interface LoadedSigner {
  label: string;
  /** The plugin as configured (package name or path), or the flag that defined it. */
  specifier: string;
  /** The plugin's `meta.name`. */
  pluginName: string;
  signer: Signer;
  /**
   * True when the signer passes the request's label on to a remote CA: a signer that says so with
   * `forwardsLabels: true`, or `@certsmith/signer-multiroot` configured without a fixed `label`.
   */
  forwardsLabels: boolean;
  /** How the module was found (`path`, `config-dir`, `certsmith`) or `builtin`. */
  resolvedFrom: ResolvedPlugin['from'] | 'builtin';
  /**
   * How worker threads recreate this signer: set when the plugin declares
   * `meta.recreatableInWorkers` and its module URL is known.
   */
  workerRecipe?: WorkerSignerRecipe;
}

/** What {@link loadSigner} needs. */
export interface LoadSignerOptions {
  label: string;
  /** Package name or path, resolved against `configDir`; or an already imported plugin. */
  plugin: string | SignerPlugin<unknown>;
  /** How to name the plugin in messages when `plugin` is an object (e.g. `@certsmith/signer-local from --ca/--ca-key`). */
  describedAs?: string;
  /**
   * URL of the module whose default export is `plugin`, when `plugin` is an object: lets worker
   * threads recreate a signer whose plugin declares `meta.recreatableInWorkers`.
   */
  pluginModule?: string;
  options: unknown;
  /** Folder of the config file: plugin paths, relative option paths and `file:` secrets resolve against it. */
  configDir: string;
  logger: Logger;
  /** Where to fall back to for package names (default: certsmith's own folder). */
  certsmithDir?: string;
  /** Environment for `env:` secrets (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the entry is configured, for hints: a config key (`signers.hsm`) or a flag (`--ca/--ca-key`). */
  where?: string;
  /** The config file holding `where`, for hints. */
  configFile?: string | null;
  /** Receives the events the signer reports through its context, with its label and plugin name (metrics). */
  onEvent?: (event: SignerEvent, signer: { label: string; plugin: string }) => void;
}

/** A pino logger as the plugin's {@link SignerLogger} (fields first, as pino wants). */
export function toSignerLogger(logger: Logger): SignerLogger {
  return {
    debug: (message, fields) => logger.debug(fields ?? {}, message),
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
  };
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The error's own CFSSL code when it has a signer/key/certificate one, else 2000. */
function codeOf(error: unknown): number | undefined {
  if (!isCodedError(error)) return undefined;
  // HTTP-level codes (400…) say nothing about a signer; keep the 2000 family default for those.
  return error.code >= 1000 ? error.code : undefined;
}

/** The plugin in an imported module: its default export (ESM, or CommonJS `module.exports`). */
function pluginFromModule(namespace: unknown): SignerPlugin<unknown> | null {
  const record = namespace as { default?: unknown } | null;
  const inner = record?.default as { default?: unknown } | undefined;
  // `module.exports = plugin` arrives as `default`; a transpiled `exports.default = plugin` as `default.default`.
  for (const candidate of [record?.default, inner?.default, namespace]) {
    if (isSignerPlugin(candidate)) return candidate;
  }
  return null;
}

/**
 * Load one signer. Errors ({@link SignerLoadError}, exit 2), each naming label and plugin:
 * not installed / file missing; import failed; no signer plugin exported; incompatible
 * `meta.apiVersion`; options rejected; `create` threw (its code kept, e.g. 2300 key mismatch);
 * the created object breaks the contract.
 */
export async function loadSigner(input: LoadSignerOptions): Promise<LoadedSigner> {
  const { label } = input;
  const where = input.where ?? `signers.${label}`;
  const inFile = input.configFile ? ` in ${input.configFile}` : '';
  // Options of a config entry live under `<where>.options`; a flag-defined signer's are the flags.
  const optionsRef = where.startsWith('signers.') ? `${where}.options${inFile}` : where;
  const pluginRef = `${where}.plugin${inFile}`;
  // JSON paths for the report: the entry's plugin or options, or the flags that define the signer.
  const pluginPath = where.startsWith('signers') ? `${where}.plugin` : where;
  const optionsPath = where.startsWith('signers') ? `${where}.options` : where;
  let plugin: SignerPlugin<unknown>;
  let specifier: string;
  let resolvedFrom: LoadedSigner['resolvedFrom'];
  let pluginModule = input.pluginModule;

  if (typeof input.plugin === 'string') {
    specifier = input.plugin;
    let resolved: ResolvedPlugin;
    try {
      resolved = await resolvePluginModule(specifier, input.configDir, input.certsmithDir ?? CERTSMITH_DIR);
    } catch (error) {
      if (error instanceof PluginNotFoundError) {
        const hint = error.isPath
          ? `fix the path in ${pluginRef} (relative paths resolve against ${input.configDir})`
          : `install it (npm install ${specifier}) in ${input.configDir} or next to certsmith, or give a path to the module; looked in ${error.searched.join(' and ')}`;
        throw new SignerLoadError(label, specifier, error.message, hint, { cause: error, path: pluginPath });
      }
      throw new SignerLoadError(label, specifier, `cannot be resolved: ${reasonOf(error)}`, `check ${pluginRef}`, { cause: error, path: pluginPath });
    }
    resolvedFrom = resolved.from;
    pluginModule = resolved.url;
    let namespace: unknown;
    try {
      namespace = await import(resolved.url);
    } catch (error) {
      throw new SignerLoadError(label, specifier, `${resolved.path} could not be imported: ${reasonOf(error)}`, 'check that the plugin is built and its own dependencies are installed', {
        cause: error,
        path: pluginPath,
      });
    }
    const found = pluginFromModule(namespace);
    if (found === null) {
      throw new SignerLoadError(
        label,
        specifier,
        `${resolved.path} does not export a signer plugin`,
        'its default export must be the object made by defineSigner({ meta: { name, apiVersion }, create }) of @certsmith/signer-api',
        { path: pluginPath },
      );
    }
    plugin = found;
  } else {
    plugin = input.plugin;
    specifier = input.describedAs ?? plugin.meta.name;
    resolvedFrom = 'builtin';
  }
  // Name the plugin as configured, plus its own name when the configured one does not show it.
  const named = specifier.startsWith(plugin.meta.name) ? specifier : `${specifier} = ${plugin.meta.name}`;

  try {
    assertSignerApiCompatible(plugin, SIGNER_API_VERSION);
  } catch (error) {
    throw new SignerLoadError(label, named, reasonOf(error), `use a version of the plugin built for signer API ${SIGNER_API_VERSION} (meta.apiVersion must accept it)`, {
      cause: error,
      path: pluginPath,
      code: codeOf(error),
    });
  }

  let options: unknown;
  try {
    options = validateSignerOptions(plugin, input.options);
  } catch (error) {
    throw new SignerLoadError(label, named, `options rejected: ${reasonOf(error)}`, `fix ${optionsRef}`, { cause: error, code: codeOf(error), path: optionsPath });
  }

  const logger = input.logger.child({ signer: label, plugin: plugin.meta.name });
  const onEvent = input.onEvent;
  const reporter = { label, plugin: plugin.meta.name };
  const context = createSignerContext({
    configDir: input.configDir,
    logger: toSignerLogger(logger),
    ...(input.env ? { env: input.env } : {}),
    ...(onEvent ? { onEvent: (event: SignerEvent) => onEvent(event, reporter) } : {}),
  });
  let signer: Signer;
  try {
    signer = await plugin.create(options, context);
  } catch (error) {
    throw new SignerLoadError(label, named, `could not create the signer: ${reasonOf(error)}`, `check ${optionsRef} and the resources they name (files, secrets, HSM, network)`, {
      cause: error,
      path: optionsPath,
      code: codeOf(error),
    });
  }
  try {
    assertSignerShape(signer, plugin.meta.name);
  } catch (error) {
    await Promise.resolve((signer as Partial<Signer> | null)?.close?.()).catch(() => undefined);
    throw new SignerLoadError(label, named, reasonOf(error), 'the plugin does not implement the Signer contract; report it to its author', { cause: error, path: pluginPath });
  }

  const declared = (signer as { forwardsLabels?: unknown }).forwardsLabels === true;
  const multirootWithoutLabel = plugin.meta.name === MULTIROOT_PLUGIN_NAME && !hasFixedLabel(options);
  logger.info({ resolvedFrom, version: plugin.meta.version, algorithms: signer.algorithms }, 'signer loaded');
  const loaded: LoadedSigner = { label, specifier, pluginName: plugin.meta.name, signer, forwardsLabels: declared || multirootWithoutLabel, resolvedFrom };
  if (plugin.meta.recreatableInWorkers === true && pluginModule !== undefined) {
    loaded.workerRecipe = { module: pluginModule, options: input.options, configDir: input.configDir, ...(input.env ? { env: input.env } : {}) };
  }
  return loaded;
}

function hasFixedLabel(options: unknown): boolean {
  const label = (options as { label?: unknown } | null)?.label;
  return typeof label === 'string' && label !== '';
}
