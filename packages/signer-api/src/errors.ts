/**
 * Errors of the signer contract. All are {@link CertsmithError}s with CFSSL codes (behaviour doc
 * 1.5) so the HTTP layer maps them without knowing the plugin: 2500 when the key cannot be used
 * right now, 2000 when a plugin cannot be loaded or configured (CFSSL answers 2000 "Unknown private
 * key error" when no CA key is configured, behaviour doc 4.3), 2001 when a secret cannot be read.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/**
 * The CA key is unavailable (HSM logged out, remote down, signer closed): CFSSL 2500
 * `Private key is unavailable`.
 */
export class SignerUnavailableError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyUnavailable, message, options);
  }
}

/**
 * A signer plugin cannot be used: wrong contract version, malformed definition or invalid options.
 * Code 2000; the message names the plugin.
 */
export class SignerConfigurationError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyUnknown, message, options);
  }
}

/** A plugin's `apiVersion` range does not include this contract's version (code 2000). */
export class SignerApiVersionError extends SignerConfigurationError {}

/** An `env:`/`file:` secret reference could not be resolved: code 2001 `Failed to read private key` family. */
export class SecretReferenceError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyReadFailed, message, options);
  }
}
