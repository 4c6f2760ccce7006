/**
 * The plugin definition: options `{ keyFile, certFile }`.
 *
 * - `keyFile`: the CA private key as a JWK (JSON). A path (relative to the certsmith config
 *   file's folder), `file:PATH`, or `env:NAME` for a JWK held in an environment variable. It is a
 *   secret, so it goes through the host's secret resolver (`context.resolveSecret`).
 * - `certFile`: the CA certificate PEM, a path relative to the config folder.
 */
import { X509Certificate } from 'node:crypto';
import type { webcrypto } from 'node:crypto';
import { readFile } from 'node:fs/promises';

import type { Signer, SignerContext } from '@certsmith/signer-api';
import { SignerConfigurationError, defineSigner, parseSecretReference } from '@certsmith/signer-api';

import { CertificateReadError, KeyMismatchError } from './errors.js';
import { PLUGIN_NAME, createWebCryptoSigner } from './webcrypto-signer.js';

/** Options as written in the certsmith config. */
export interface WebCryptoSignerOptions {
  /** Private JWK: path, `file:PATH` or `env:NAME`. */
  keyFile: string;
  /** CA certificate PEM path. */
  certFile: string;
}

const configurationError = (message: string, cause?: unknown): SignerConfigurationError =>
  new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: ${message}`, cause === undefined ? undefined : { cause });

/** Read and parse the JWK named by `keyFile`; never echoes its content. */
async function readJwk(keyFile: string, context: SignerContext): Promise<webcrypto.JsonWebKey> {
  const reference = parseSecretReference(keyFile) ? keyFile : `file:${keyFile}`;
  const text = await context.resolveSecret(reference);
  let jwk: unknown;
  try {
    jwk = JSON.parse(text);
  } catch (cause) {
    throw configurationError(`keyFile ${keyFile} is not JSON (expected a JWK)`, cause);
  }
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw configurationError(`keyFile ${keyFile} does not hold a JWK object`);
  return jwk as webcrypto.JsonWebKey;
}

/** Read the certificate PEM; 1001 (CFSSL "Failed to read certificate") when unreadable. */
async function readCertificate(certFile: string, context: SignerContext): Promise<X509Certificate> {
  const path = context.resolvePath(certFile);
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'read error';
    throw new CertificateReadError(`signer plugin ${PLUGIN_NAME}: cannot read certFile ${path}: ${code}`, { cause });
  }
  try {
    return new X509Certificate(pem);
  } catch (cause) {
    throw configurationError(`certFile ${path} does not hold a PEM certificate`, cause);
  }
}

/** PEM of a certificate's DER, 64-column base64 and a trailing newline, as the contract asks. */
function certificatePem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** The public members of a JWK (RFC 7518 6.2.1, 6.3.1; RFC 8037 2). */
function publicMembers(jwk: webcrypto.JsonWebKey): string {
  const { kty, crv, x, y, n, e } = jwk;
  return JSON.stringify({ kty, crv, x, y, n, e });
}

/** Load key and certificate, check that they belong together, build the signer. */
export async function createSignerFromFiles(options: WebCryptoSignerOptions, context: SignerContext): Promise<Signer> {
  const [jwk, certificate] = await Promise.all([readJwk(options.keyFile, context), readCertificate(options.certFile, context)]);
  const certificateJwk = certificate.publicKey.export({ format: 'jwk' }) as webcrypto.JsonWebKey;
  if (publicMembers(certificateJwk) !== publicMembers(jwk)) {
    throw new KeyMismatchError(`signer plugin ${PLUGIN_NAME}: the key in ${options.keyFile} is not the key of the certificate in ${options.certFile}`);
  }
  if (!certificate.ca) context.logger.warn('certFile is not a CA certificate (basicConstraints CA:TRUE); issued certificates will not verify');
  const der = new Uint8Array(certificate.raw);
  const signer = await createWebCryptoSigner(jwk, { der, pem: certificatePem(certificate.raw) });
  context.logger.info('webcrypto signer loaded', { algorithms: signer.algorithms, subject: certificate.subject });
  return signer;
}

/**
 * `{ "plugin": "certsmith-signer-webcrypto-example", "options": { "keyFile": "ca-key.jwk", "certFile": "ca.pem" } }`
 */
export const webCryptoSignerPlugin = defineSigner<WebCryptoSignerOptions>({
  meta: { name: PLUGIN_NAME, apiVersion: '^1.0.0', version: '0.1.0' },
  optionsSchema: {
    type: 'object',
    properties: {
      keyFile: { type: 'string', description: 'private JWK: path, file:PATH or env:NAME' },
      certFile: { type: 'string', description: 'CA certificate PEM path' },
    },
    required: ['keyFile', 'certFile'],
    additionalProperties: false,
  },
  validateOptions(options: unknown): WebCryptoSignerOptions {
    const { keyFile, certFile } = options as WebCryptoSignerOptions;
    // Plain errors are fine here: the host prefixes the plugin name and turns them into a 2000.
    if (keyFile.trim() === '') throw new Error('keyFile must not be empty');
    if (certFile.trim() === '') throw new Error('certFile must not be empty');
    if (certFile.startsWith('env:')) throw new Error('certFile must be a path (a certificate is not a secret)');
    return { keyFile, certFile: certFile.startsWith('file:') ? certFile.slice(5) : certFile };
  },
  create: createSignerFromFiles,
});
