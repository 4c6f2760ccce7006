/**
 * TLS for the API, as `cfssl serve -tls-cert -tls-key [-min-tls-version] [-mutual-tls-ca]
 * [-mutual-tls-cn]` (behaviour doc 5): HTTPS with the given certificate chain and key, a minimum
 * protocol version, and optionally client-certificate authentication (CFSSL's
 * `tls.RequireAndVerifyClientCert` against `-mutual-tls-ca`) with a regular expression the client
 * certificate's CN must match (checked per request, see `client-auth.ts`).
 *
 * Deliberate differences from CFSSL: only TLS 1.2 and 1.3 (CFSSL falls back to TLS 1.0 for any other
 * `-min-tls-version`); the files are checked at startup with coded errors (CFSSL fails in
 * `ListenAndServeTLS` with Go's text).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { SecureVersion } from 'node:tls';
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';
import { compileGoRegexp, matchGoRegexp } from '@certsmith/issuer';
import type { GoRegexp } from '@certsmith/issuer';

/** `--min-tls-version` values: `1.2` (default) or `1.3`. */
export type MinTlsVersion = '1.2' | '1.3';

/** Accepted `--min-tls-version` values. */
export const MIN_TLS_VERSIONS: readonly MinTlsVersion[] = ['1.2', '1.3'];

/** Default minimum TLS version. */
export const DEFAULT_MIN_TLS_VERSION: MinTlsVersion = '1.2';

/** TLS configuration of the API server: PEM contents, already read. */
export interface ApiTlsConfig {
  /** Server certificate, optionally followed by its intermediates (PEM). */
  cert: string;
  /** The certificate's private key (PEM, unencrypted). */
  key: string;
  /** Lowest protocol version accepted; default `1.2`. */
  minVersion?: MinTlsVersion;
  /**
   * CA certificates (PEM) client certificates must verify against. When set, every connection must
   * present a valid client certificate, else the TLS handshake fails (CFSSL `-mutual-tls-ca`).
   */
  clientCa?: string;
  /**
   * Only with `clientCa`: the client certificate's subject CN must match this expression
   * (unanchored, as Go's `regexp.MatchString`), else every request answers 403 `Invalid CN`
   * (CFSSL `-mutual-tls-cn`). {@link compileClientCnPattern} makes one from a Go pattern.
   */
  clientCn?: ClientCnMatcher;
}

/** What a CN pattern must do: an unanchored match (a RegExp qualifies too). */
export interface ClientCnMatcher {
  test(commonName: string): boolean;
}

/** Which part of an {@link ApiTlsConfig} is wrong. */
export type TlsConfigField = 'cert' | 'key' | 'clientCa' | 'clientCn' | 'minVersion';

/**
 * A TLS setting or file content is invalid. `field` names the part, so the server can name its
 * flag; the code is CFSSL's for the kind of file (1002/1003 certificate, 2002/2003/2100/2300 key,
 * 4002/4003 client CA roots, 400 otherwise).
 */
export class TlsConfigError extends CertsmithError {
  readonly field: TlsConfigField;

  constructor(code: number, field: TlsConfigField, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.field = field;
  }
}

/** Parse a `--min-tls-version` value (`1.2`, `1.3`; also `TLSv1.2` / `TLSv1.3`), or `null`. */
export function parseMinTlsVersion(value: string): MinTlsVersion | null {
  const match = /^(?:tlsv?)?(1\.[23])$/i.exec(value.trim());
  return match === null ? null : (match[1] as MinTlsVersion);
}

/**
 * Compile a `--mutual-tls-cn` expression as the Go (RE2) regexp CFSSL takes, matched in linear
 * time; throws {@link TlsConfigError} (400) for what Go refuses (lookaround, backreferences…).
 */
export function compileClientCnPattern(source: string): ClientCnMatcher {
  let regexp: GoRegexp;
  try {
    regexp = compileGoRegexp(source);
  } catch (error) {
    throw new TlsConfigError(ErrorCode.BadRequest, 'clientCn', `malformed CN regex: ${(error as Error).message}`, { cause: error });
  }
  return { test: (commonName) => matchGoRegexp(regexp, commonName) };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

function parseCertificates(pem: string, field: 'cert' | 'clientCa'): X509Certificate[] {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  const decodeCode = field === 'cert' ? ErrorCode.CertificateDecodeFailed : ErrorCode.RootDecodeFailed;
  const parseCode = field === 'cert' ? ErrorCode.CertificateParseFailed : ErrorCode.RootParseFailed;
  if (blocks.length === 0) throw new TlsConfigError(decodeCode, field, 'no PEM CERTIFICATE block found');
  return blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch (error) {
      throw new TlsConfigError(parseCode, field, `certificate ${index + 1} cannot be parsed`, { cause: error });
    }
  });
}

function parseKey(pem: string): KeyObject {
  if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(pem)) {
    throw new TlsConfigError(ErrorCode.PrivateKeyDecodeFailed, 'key', 'no PEM private key found');
  }
  try {
    return createPrivateKey(pem);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MISSING_PASSPHRASE' || /ENCRYPTED/.test(pem)) {
      throw new TlsConfigError(ErrorCode.PrivateKeyEncrypted, 'key', 'the private key is encrypted; give an unencrypted key', { cause: error });
    }
    throw new TlsConfigError(ErrorCode.PrivateKeyParseFailed, 'key', 'the private key cannot be parsed', { cause: error });
  }
}

/**
 * Check a TLS configuration before listening: the certificate and key parse and belong together,
 * the client CA file holds certificates, `clientCn` is only given with `clientCa`, and Node accepts
 * the whole as a secure context. Throws {@link TlsConfigError}.
 */
export function checkTlsConfig(config: ApiTlsConfig): void {
  const [leaf] = parseCertificates(config.cert, 'cert');
  const key = parseKey(config.key);
  if (!leaf!.checkPrivateKey(key)) {
    throw new TlsConfigError(ErrorCode.PrivateKeyMismatch, 'key', 'the private key does not match the certificate (the first certificate of the file)');
  }
  if (config.clientCa !== undefined) parseCertificates(config.clientCa, 'clientCa');
  if (config.clientCn !== undefined && config.clientCa === undefined) {
    throw new TlsConfigError(ErrorCode.BadRequest, 'clientCn', 'a CN pattern needs client certificates: give the client CA too');
  }
  if (config.minVersion !== undefined && !MIN_TLS_VERSIONS.includes(config.minVersion)) {
    throw new TlsConfigError(ErrorCode.BadRequest, 'minVersion', `must be one of ${MIN_TLS_VERSIONS.join(', ')}, got ${String(config.minVersion)}`);
  }
  try {
    createSecureContext(secureContextOptions(config));
  } catch (error) {
    throw new TlsConfigError(ErrorCode.CertificateParseFailed, 'cert', `TLS cannot use the certificate and key: ${(error as Error).message}`, { cause: error });
  }
}

function secureContextOptions(config: ApiTlsConfig): HttpsServerOptions {
  const minVersion: SecureVersion = config.minVersion === '1.3' ? 'TLSv1.3' : 'TLSv1.2';
  const options: HttpsServerOptions = { cert: config.cert, key: config.key, minVersion };
  if (config.clientCa !== undefined) options.ca = config.clientCa;
  return options;
}

/**
 * The `https.createServer` options of a configuration: certificate, key, minimum version and, with
 * a client CA, `requestCert` + `rejectUnauthorized` (no valid client certificate, no connection).
 */
export function toHttpsServerOptions(config: ApiTlsConfig): HttpsServerOptions {
  const options = secureContextOptions(config);
  if (config.clientCa !== undefined) {
    options.requestCert = true;
    options.rejectUnauthorized = true;
  }
  return options;
}
