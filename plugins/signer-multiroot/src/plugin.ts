/**
 * The plugin definition: validates options, resolves the auth key through the host's secret
 * resolver, reads TLS files, and builds the signer. Loading opens no connection, so certsmith
 * starts even when every CA is down (the first call then fails with 6000, and health says why).
 */
import { readFile } from 'node:fs/promises';

import type { SignerContext } from '@certsmith/signer-api';
import { SignerConfigurationError, defineSigner, parseSecretReference } from '@certsmith/signer-api';

import type { MultirootSigner } from './multiroot-signer.js';
import { createMultirootSigner } from './multiroot-signer.js';
import type { MultirootSignerSettings } from './options.js';
import { multirootOptionsSchema, validateMultirootOptions } from './options.js';
import type { RemoteTlsOptions } from './remote-group.js';

/** Package name, used in messages. */
export const PLUGIN_NAME = '@certsmith/signer-multiroot';

const HEX_KEY = /^(?:[0-9a-fA-F]{2})+$/;

/**
 * Decode the `authKey` option the way cfssl decodes `auth_keys.<name>.key` (behaviour doc 4.4):
 * `env:NAME` / `file:PATH` through the host's resolver (file paths relative to the config
 * directory, whitespace trimmed), then hex. A plain hex value is accepted as CFSSL does but logged
 * as discouraged. Errors name the reference, never the value.
 */
export async function resolveAuthKey(reference: string, context: SignerContext): Promise<Uint8Array> {
  let hex: string;
  let source: string;
  if (parseSecretReference(reference) !== null) {
    hex = await context.resolveSecret(reference);
    source = reference;
  } else if (HEX_KEY.test(reference)) {
    hex = reference;
    source = 'the inline value';
    context.logger.warn('authKey is written inline in the configuration; prefer env:NAME or file:PATH');
  } else {
    throw new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: authKey must be env:NAME, file:PATH or hex`);
  }
  if (!HEX_KEY.test(hex)) throw new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: authKey from ${source} is not a non-empty even-length hex string`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

async function readPemFile(option: string, path: string, context: SignerContext): Promise<string> {
  const resolved = context.resolvePath(path);
  try {
    return await readFile(resolved, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'read error';
    throw new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: cannot read ${option} ${resolved}: ${code}`, { cause });
  }
}

/** TLS material from `caFile`/`certFile`/`keyFile`, or `undefined` when none is set. */
async function loadTls(settings: MultirootSignerSettings, context: SignerContext): Promise<RemoteTlsOptions | undefined> {
  if (settings.caFile === null && settings.certFile === null) return undefined;
  if (!settings.remotes.some((remote) => remote.scheme === 'https')) {
    context.logger.warn('TLS options are set but no remote uses https; they are ignored');
  }
  const tls: RemoteTlsOptions = {};
  if (settings.caFile !== null) tls.ca = await readPemFile('caFile', settings.caFile, context);
  if (settings.certFile !== null && settings.keyFile !== null) {
    tls.cert = await readPemFile('certFile', settings.certFile, context);
    tls.key = await readPemFile('keyFile', settings.keyFile, context);
  }
  return tls;
}

/**
 * Create the signer from validated settings within a host context (what the plugin's `create`
 * does; exported for programmatic use and tests).
 */
export async function loadMultirootSigner(settings: MultirootSignerSettings, context: SignerContext): Promise<MultirootSigner> {
  const authKey = settings.authKey === null ? null : await resolveAuthKey(settings.authKey, context);
  const tls = await loadTls(settings, context);
  return createMultirootSigner(settings, { authKey, logger: context.logger, ...(tls ? { tls } : {}) });
}

/**
 * `["@certsmith/signer-multiroot", { "remotes": ["http://ca1:8888", "http://ca2:8888"], "authKey": "env:CA_AUTH_KEY" }]`
 */
export const multirootSignerPlugin = defineSigner<MultirootSignerSettings>({
  meta: { name: PLUGIN_NAME, apiVersion: '^1.0.0', version: '0.1.0' },
  optionsSchema: multirootOptionsSchema,
  validateOptions: validateMultirootOptions,
  create: loadMultirootSigner,
});
