/**
 * Plugin definition and loading. A plugin module's default export is `defineSigner({...})`; the host
 * (apps/server) loads it by package name from config as `[specifier, options]` and calls
 * {@link createSigner}, which checks the declared contract range, validates the options, creates the
 * signer and checks that what came back honours the contract, failing with a coded error that names
 * the plugin.
 */
import type { OptionsSchema } from './options-schema.js';
import { checkOptionsSchema } from './options-schema.js';
import { SignerApiVersionError, SignerConfigurationError } from './errors.js';
import type { Signer } from './signer.js';
import type { SignerContext } from './signer-context.js';
import { satisfiesVersionRange } from './version-range.js';

/** Version of this contract. Plugins declare a range over it in `meta.apiVersion`. */
export const SIGNER_API_VERSION = '1.0.0';

/** Who a plugin is and which contract versions it supports. */
export interface SignerPluginMeta {
  /** Package-like name used in messages (`@certsmith/signer-local`). */
  name: string;
  /** Semver range of {@link SIGNER_API_VERSION} the plugin works with, e.g. `^1.0.0`. */
  apiVersion: string;
  /** The plugin's own version, for logs. */
  version?: string;
  /**
   * True when `create(options, context)` may be called again, with the same options, inside a worker
   * thread and gives an equivalent signer (same key, same algorithms): a key held in memory. The
   * host then issues certificates for this signer entirely in its worker threads, off the event
   * loop. Leave it unset for signers that own sessions or connections (an HSM, a remote CA): they
   * stay on the main thread. The worker copy gets a context with the same `configDir` and
   * environment and a silent logger; the main-thread signer still answers `health` and `info`.
   */
  recreatableInWorkers?: boolean;
}

/** What a plugin author writes. */
export interface SignerPluginDefinition<Options> {
  meta: SignerPluginMeta;
  /** Options schema checked before `validateOptions`/`create` (a small JSON Schema subset). */
  optionsSchema?: OptionsSchema;
  /**
   * Turn raw options (from JSON config) into typed options; throw (any error, ideally a
   * {@link SignerConfigurationError}) when invalid. Without it, options pass through as they are.
   */
  validateOptions?(options: unknown): Options;
  /** Create a signer. Load keys, open sessions; fail with a coded error when impossible. */
  create(options: Options, context: SignerContext): Signer | Promise<Signer>;
}

/** A plugin as returned by {@link defineSigner}. */
export interface SignerPlugin<Options = unknown> extends SignerPluginDefinition<Options> {
  /** Brand so hosts can recognise plugins across package copies. */
  readonly kind: 'certsmith-signer';
}

/**
 * Declare a signer plugin; the result is the module's default export. Only checks the shape of the
 * definition (no work at import time beyond that).
 */
export function defineSigner<Options>(definition: SignerPluginDefinition<Options>): SignerPlugin<Options> {
  const name = definition?.meta?.name;
  if (typeof name !== 'string' || name === '') throw new SignerConfigurationError('signer plugin meta.name must be a non-empty string');
  if (typeof definition.meta.apiVersion !== 'string') {
    throw new SignerConfigurationError(`signer plugin ${name}: meta.apiVersion must be a semver range string`);
  }
  if (typeof definition.create !== 'function') throw new SignerConfigurationError(`signer plugin ${name}: create must be a function`);
  const recreatable = definition.meta.recreatableInWorkers;
  if (recreatable !== undefined && typeof recreatable !== 'boolean') {
    throw new SignerConfigurationError(`signer plugin ${name}: meta.recreatableInWorkers must be a boolean`);
  }
  return Object.freeze({ ...definition, meta: Object.freeze({ ...definition.meta }), kind: 'certsmith-signer' as const });
}

/**
 * True when `value` looks like a signer plugin (branded object with meta and create). Accepts the
 * plugin itself, not a module namespace; see {@link resolveSignerPlugin}.
 */
export function isSignerPlugin(value: unknown): value is SignerPlugin<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<SignerPlugin<unknown>>;
  return candidate.kind === 'certsmith-signer' && typeof candidate.create === 'function' && typeof candidate.meta?.name === 'string';
}

/**
 * Extract the plugin from an imported module (`default` export, or the module itself when it is the
 * plugin). `specifier` is only used in the error message.
 */
export function resolveSignerPlugin(moduleOrPlugin: unknown, specifier = 'signer plugin'): SignerPlugin<unknown> {
  if (isSignerPlugin(moduleOrPlugin)) return moduleOrPlugin;
  const fallback = (moduleOrPlugin as { default?: unknown } | null)?.default;
  if (isSignerPlugin(fallback)) return fallback;
  throw new SignerConfigurationError(`${specifier} does not export a signer plugin (expected a default export made with defineSigner)`);
}

/**
 * Throw a {@link SignerApiVersionError} (code 2000) naming the plugin when its `apiVersion` range
 * does not include `hostVersion`.
 */
export function assertSignerApiCompatible(plugin: SignerPlugin<unknown>, hostVersion: string = SIGNER_API_VERSION): void {
  let compatible: boolean;
  try {
    compatible = satisfiesVersionRange(hostVersion, plugin.meta.apiVersion);
  } catch (cause) {
    throw new SignerApiVersionError(`signer plugin ${plugin.meta.name}: invalid apiVersion range "${plugin.meta.apiVersion}"`, { cause });
  }
  if (!compatible) {
    throw new SignerApiVersionError(
      `signer plugin ${plugin.meta.name} supports signer API ${plugin.meta.apiVersion}, host provides ${hostVersion}`,
    );
  }
}

/** Validate options as the plugin declares; returns the typed options. */
export function validateSignerOptions<Options>(plugin: SignerPlugin<Options>, options: unknown): Options {
  if (plugin.optionsSchema) {
    const problems = checkOptionsSchema(plugin.optionsSchema, options);
    if (problems.length > 0) throw new SignerConfigurationError(`signer plugin ${plugin.meta.name}: ${problems.join('; ')}`);
  }
  if (!plugin.validateOptions) return options as Options;
  try {
    return plugin.validateOptions(options);
  } catch (cause) {
    if (cause instanceof SignerConfigurationError) throw cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new SignerConfigurationError(`signer plugin ${plugin.meta.name}: ${reason}`, { cause });
  }
}

/** Check that a created signer honours the contract; throws 2000 naming the plugin otherwise. */
export function assertSignerShape(signer: unknown, pluginName: string): asserts signer is Signer {
  const problems: string[] = [];
  const candidate = signer as Partial<Signer> | null;
  if (typeof candidate !== 'object' || candidate === null) {
    throw new SignerConfigurationError(`signer plugin ${pluginName}: create did not return an object`);
  }
  if (typeof candidate.getCertificate !== 'function') problems.push('getCertificate must be a function');
  if (!Array.isArray(candidate.algorithms)) problems.push('algorithms must be an array');
  if (typeof candidate.close !== 'function') problems.push('close must be a function');
  const canSign = typeof candidate.sign === 'function';
  if (!canSign && typeof candidate.signRequest !== 'function') problems.push('one of sign or signRequest must be a function');
  if (canSign && Array.isArray(candidate.algorithms) && candidate.algorithms.length === 0) {
    problems.push('a signer with sign must list at least one algorithm');
  }
  if (problems.length > 0) throw new SignerConfigurationError(`signer plugin ${pluginName}: ${problems.join('; ')}`);
}

/**
 * Load-time entry point for hosts: check the contract range, validate options, create the signer and
 * check its shape. Errors are coded (2000 family) and name the plugin; errors thrown by `create`
 * that already carry a code (2100 encrypted key, 2300 key mismatch…) pass through unchanged.
 */
export async function createSigner(
  moduleOrPlugin: unknown,
  options: unknown,
  context: SignerContext,
  hostVersion: string = SIGNER_API_VERSION,
): Promise<Signer> {
  const plugin = resolveSignerPlugin(moduleOrPlugin);
  assertSignerApiCompatible(plugin, hostVersion);
  const typed = validateSignerOptions(plugin, options);
  const signer = await plugin.create(typed, context);
  assertSignerShape(signer, plugin.meta.name);
  return signer;
}
