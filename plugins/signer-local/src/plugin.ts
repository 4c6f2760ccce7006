/**
 * The `@certsmith/signer-local` plugin: options `{ certFile, keyFile }`, each a path (relative to
 * the config directory), `file:PATH` or `env:NAME` (the PEM itself in an environment variable) —
 * the forms CFSSL accepts for `-ca` / `-ca-key` (`helpers.ReadBytes`, behaviour doc 4.2).
 */
import type { SignerContext } from '@certsmith/signer-api';
import { SecretReferenceError, SignerConfigurationError, defineSigner, parseSecretReference } from '@certsmith/signer-api';
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

import { createLocalSignerFromPem } from './local-signer.js';
import type { LocalSigner } from './local-signer.js';

/** Options of the local signer. */
export interface LocalSignerOptions {
  /** CA certificate: path, `file:PATH` or `env:NAME`. */
  certFile: string;
  /** CA private key: path, `file:PATH` or `env:NAME`. */
  keyFile: string;
}

/** Read a CFSSL-style source: `env:NAME` (value is the content), `file:PATH` or a plain path. */
async function readSource(value: string, context: SignerContext): Promise<string> {
  const reference = parseSecretReference(value) ? value : `file:${value}`;
  return new TextDecoder().decode(await context.resolveSecretBytes(reference));
}

/** Load the CA files named by `options` into a signer (see {@link createLocalSignerFromPem} for errors). */
export async function loadLocalSigner(options: LocalSignerOptions, context: SignerContext): Promise<LocalSigner> {
  let certificatePem: string;
  try {
    certificatePem = await readSource(options.certFile, context);
  } catch (cause) {
    // Reading the certificate is a certificate problem (1001), not a key problem.
    if (cause instanceof SecretReferenceError) throw new CertsmithError(ErrorCode.CertificateReadFailed, cause.message, { cause });
    throw cause;
  }
  const keyPem = await readSource(options.keyFile, context);
  const signer = createLocalSignerFromPem(certificatePem, keyPem, context.logger);
  context.logger.info('local signer loaded', { algorithms: signer.algorithms });
  return signer;
}

/** The plugin definition (default export of the package). */
export const localSignerPlugin = defineSigner<LocalSignerOptions>({
  // The key lives in memory: each worker thread can load its own copy and sign there.
  meta: { name: '@certsmith/signer-local', apiVersion: '^1.0.0', version: '0.1.0', recreatableInWorkers: true },
  optionsSchema: {
    type: 'object',
    properties: {
      certFile: { type: 'string', description: 'CA certificate: path, file:PATH or env:NAME' },
      keyFile: { type: 'string', description: 'CA private key: path, file:PATH or env:NAME' },
    },
    required: ['certFile', 'keyFile'],
    additionalProperties: false,
  },
  validateOptions(options: unknown): LocalSignerOptions {
    const { certFile, keyFile } = options as LocalSignerOptions;
    if (certFile === '' || keyFile === '') throw new SignerConfigurationError('signer plugin @certsmith/signer-local: certFile and keyFile must not be empty');
    return { certFile, keyFile };
  },
  create: loadLocalSigner,
});
