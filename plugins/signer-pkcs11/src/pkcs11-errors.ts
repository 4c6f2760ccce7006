/**
 * How PKCS#11 failures become certsmith errors. pkcs11js throws `Pkcs11Error`s whose message is the
 * `CKR_*` name; this module reads that name (never the rest of a native message, which could carry
 * arguments) and decides which failures are worth reconnecting for.
 */
import { SignerConfigurationError, SignerUnavailableError } from '@certsmith/signer-api';

/** The plugin name every configuration error starts with (the host matches plugins by it). */
export const PLUGIN_NAME = '@certsmith/signer-pkcs11';

/**
 * Return values after which a fresh session (and a fresh login) can succeed: the session or the
 * login state was lost, the device was pulled or reset, or the library was finalized underneath us
 * (PKCS#11 v2.40 §5.1: every one of these invalidates sessions without touching the keys). Object
 * and key handle errors are included because handles are only valid for one library
 * initialisation: after the token is re-enumerated the key has to be found again.
 */
const RECONNECT_CODES: ReadonlySet<string> = new Set([
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  'CKR_USER_NOT_LOGGED_IN',
  'CKR_DEVICE_REMOVED',
  'CKR_TOKEN_NOT_PRESENT',
  'CKR_CRYPTOKI_NOT_INITIALIZED',
  'CKR_DEVICE_ERROR',
  'CKR_KEY_HANDLE_INVALID',
  'CKR_OBJECT_HANDLE_INVALID',
]);

/** Login failures that must not be retried automatically: every retry burns one PIN attempt. */
const PIN_CODES: ReadonlySet<string> = new Set(['CKR_PIN_INCORRECT', 'CKR_PIN_LOCKED', 'CKR_PIN_EXPIRED', 'CKR_PIN_INVALID', 'CKR_PIN_LEN_RANGE']);

/**
 * The `CKR_*` name of a PKCS#11 failure, or `null` when `error` is not one. Only the name is kept:
 * it is safe to log and to put in an error message.
 */
export function ckrName(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const message = (error as { message?: unknown }).message;
  if (typeof message !== 'string') return null;
  const match = /\bCKR_[A-Z0-9_]+/.exec(message);
  return match ? match[0] : null;
}

/**
 * An operation failed with a generic code (SoftHSM answers `CKR_GENERAL_ERROR` when a session is
 * closed under a running `C_Sign`) and a probe showed that its session is gone: the failure is a
 * lost session, whatever the first code said. The message starts with the probe's CKR name.
 */
export class SessionLostError extends Error {
  constructor(probeCode: string, cause: unknown) {
    super(`${probeCode} (the operation itself failed with ${ckrName(cause) ?? 'a non-PKCS#11 error'})`, { cause });
    this.name = 'SessionLostError';
  }
}

/** True when `error` is a PKCS#11 failure after which reopening the session and logging in can help. */
export function isReconnectable(error: unknown): boolean {
  if (error instanceof SessionLostError) return true;
  const name = ckrName(error);
  return name !== null && RECONNECT_CODES.has(name);
}

/** True when `error` is a PIN failure (wrong, locked, expired): retrying would lock the token. */
export function isPinFailure(error: unknown): boolean {
  const name = ckrName(error);
  return name !== null && PIN_CODES.has(name);
}

/** `ckrName` in parentheses for messages (`" (CKR_PIN_INCORRECT)"`), or the error's class name. */
export function reasonSuffix(error: unknown): string {
  const name = ckrName(error);
  if (name) return ` (${name})`;
  if (error instanceof Error && error.name !== 'Error') return ` (${error.name})`;
  return '';
}

/**
 * A 2000 configuration error about one option, prefixed with the plugin name as the host expects:
 * `signer plugin @certsmith/signer-pkcs11: options.pin: login failed (CKR_PIN_INCORRECT)`.
 */
export function optionError(option: string, problem: string, cause?: unknown): SignerConfigurationError {
  return new SignerConfigurationError(`signer plugin ${PLUGIN_NAME}: options.${option}: ${problem}`, cause === undefined ? undefined : { cause });
}

/** A 2500 "signer unavailable" error naming the token; `detail` never contains a secret. */
export function unavailableError(tokenDescription: string, detail: string, cause?: unknown): SignerUnavailableError {
  return new SignerUnavailableError(`PKCS#11 signer unavailable: token ${tokenDescription}: ${detail}`, cause === undefined ? undefined : { cause });
}

/**
 * Lookup failures the signer distinguishes while (re)connecting; turned into 2000 option errors at
 * creation time and into 2500 errors when the token vanished later.
 */
export class TokenLookupError extends Error {
  /** Which option the failure is about (`tokenLabel`, `keyLabel`, `pin`, `cert`…). */
  readonly option: string;
  /** True when the token itself is absent (as opposed to a key or a login problem). */
  readonly tokenMissing: boolean;
  constructor(option: string, message: string, options: { tokenMissing?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TokenLookupError';
    this.option = option;
    this.tokenMissing = options.tokenMissing ?? false;
  }
}
