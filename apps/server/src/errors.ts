/**
 * Startup errors of the server. They carry the CFSSL code of the thing that could not be read (CFSSL's
 * own startup reads fail the same way, e.g. `-ca-key` → 2001 `Failed to read private key`) and name
 * the flag, config key or signer label, so the operator knows what to fix.
 *
 * Exit codes of `certsmith serve`: 1 for usage errors (unknown flags, bad flag values, files named by
 * flags that cannot be read: {@link ServerOptionError}); 2 when the configuration cannot be loaded
 * (config file content, signer plugins: {@link ConfigFileError}, {@link SignerLoadError}).
 */
import { CertsmithError, ErrorCode, isCodedError } from '@certsmith/x509-core';

/** Exit code of `certsmith serve` for usage errors. */
export const EXIT_USAGE = 1;
/** Exit code of `certsmith serve` when the configuration (config file, signers) cannot be loaded. */
export const EXIT_CONFIGURATION = 2;

/** A server option is invalid or names a file that cannot be read. */
export class ServerOptionError extends CertsmithError {
  /** The flag, as typed on the command line (e.g. `--ca-key`). */
  readonly flag: string;
  readonly exitCode: number = EXIT_USAGE;

  constructor(code: number, flag: string, message: string, options?: { cause?: unknown }) {
    super(code, `${flag}: ${message}`, options);
    this.flag = flag;
  }
}

/** CFSSL code for an unreadable file given to each file flag. */
export const FILE_FLAG_CODES: Readonly<Record<string, number>> = {
  '--ca': ErrorCode.CertificateReadFailed,
  '--ca-key': ErrorCode.PrivateKeyReadFailed,
  '--ca-bundle': ErrorCode.RootReadFailed,
  '--int-bundle': ErrorCode.IntermediatesReadFailed,
  // Platform metadata describes root stores; CFSSL aborts startup when it cannot load it.
  '--metadata': ErrorCode.RootReadFailed,
  // CFSSL's config.LoadFile wraps every failure as 5200 "Invalid or unknown policy".
  '--config': ErrorCode.PolicyInvalid,
  // The OCSP responder's certificate and key (CFSSL `-responder`, `-responder-key`).
  '--responder': ErrorCode.CertificateReadFailed,
  '--responder-key': ErrorCode.PrivateKeyReadFailed,
};

/**
 * The config file's content is invalid: not JSON, a malformed `signers` section, an invalid CFSSL
 * `signing` section (5200, as CFSSL's `config.LoadFile`), a CFSSL key certsmith does not implement
 * that would change what is issued, or a conflict with the flags. The message starts with the file
 * and the JSON path of the key: `config file /etc/certsmith.json: signers.hsm.plugin: must be a
 * non-empty string (a package name or a path), got number`.
 */
export class ConfigFileError extends CertsmithError {
  /** The config file (absolute), or `null` for conflicts between flags. */
  readonly file: string | null;
  /** JSON path of the offending key (`""` = the file itself). */
  readonly path: string;
  readonly exitCode: number = EXIT_CONFIGURATION;

  constructor(file: string | null, message: string, options?: { cause?: unknown; code?: number; path?: string }) {
    super(options?.code ?? ErrorCode.PolicyInvalid, file === null ? message : `config file ${file}: ${message}`, options);
    this.file = file;
    this.path = options?.path ?? '';
  }
}

/**
 * A signer could not be loaded: plugin not installed, not a plugin, incompatible contract version,
 * bad options, or its `create` failed. The message names the label, the plugin and what to do:
 * `signer "hsm" (plugin @certsmith/signer-pkcs11): <what went wrong>; <what to do>`. The code is
 * the plugin's own when it gave one (2001 unreadable key, 2300 key mismatch…), otherwise 2000.
 */
export class SignerLoadError extends CertsmithError {
  readonly label: string;
  /** The plugin as configured (package name or path). */
  readonly plugin: string;
  /**
   * Where the failure is configured: `signers.<label>.plugin` (not found, not a plugin, wrong API
   * version, broken contract) or `signers.<label>.options` (options refused, creation failed), or the
   * flags (`--ca/--ca-key`) for a signer they define.
   */
  readonly path: string;
  /** What went wrong and what to do, without the `signer "x" (plugin y): ` prefix. */
  readonly detail: string;
  readonly exitCode: number = EXIT_CONFIGURATION;

  constructor(label: string, plugin: string, reason: string, hint: string, options?: { cause?: unknown; code?: number; path?: string }) {
    super(options?.code ?? ErrorCode.PrivateKeyUnknown, `signer ${JSON.stringify(label)} (plugin ${plugin}): ${reason}; ${hint}`, options);
    this.label = label;
    this.plugin = plugin;
    this.path = options?.path ?? `signers.${label}`;
    this.detail = `${reason}; ${hint}`;
  }
}

/** The exit code `certsmith serve` uses for a startup failure: the error's `exitCode`, else 1. */
export function startupExitCode(error: unknown): number {
  const exitCode = (error as { exitCode?: unknown } | null)?.exitCode;
  if (isCodedError(error) && typeof exitCode === 'number' && Number.isInteger(exitCode) && exitCode > 0) return exitCode;
  return EXIT_USAGE;
}
