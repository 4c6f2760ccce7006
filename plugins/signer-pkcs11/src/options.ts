/**
 * Options of a `signers` config entry using this plugin, their schema and their validation. The
 * PIN is a reference (`env:NAME` or `file:PATH`), never the PIN itself: configuration files end up
 * in repositories, tickets and logs (style guide, "Plugin contract").
 */
import type { OptionsSchema, SignerContext } from '@certsmith/signer-api';
import { SecretReferenceError, parseSecretReference } from '@certsmith/signer-api';

import { PLUGIN_NAME, optionError } from './pkcs11-errors.js';
import type { KeySelector, TokenSelector } from './token-selector.js';
import { parseKeyId } from './token-selector.js';

/** Options of the PKCS#11 signer (see the README's options table). */
export interface Pkcs11SignerOptions extends TokenSelector, KeySelector {
  /** Path of the PKCS#11 library (`/usr/lib/softhsm/libsofthsm2.so`), relative to the config dir. */
  module: string;
  /** User PIN reference: `env:NAME` or `file:PATH` (relative to the config dir). */
  pin: string;
  /**
   * CA certificate PEM for the key, relative to the config dir. When absent the certificate object
   * stored on the token with the key's label/id is used.
   */
  cert?: string;
  /** Signatures in flight at once, and the size of the session pool (default 1). */
  maxConcurrency?: number;
}

/** JSON-schema subset checked by the host before {@link validatePkcs11Options}. */
export const PKCS11_OPTIONS_SCHEMA: OptionsSchema = {
  type: 'object',
  properties: {
    module: { type: 'string', description: 'path of the PKCS#11 library' },
    tokenLabel: { type: 'string', description: 'token label' },
    slot: { type: 'integer', description: 'slot ID' },
    tokenSerial: { type: 'string', description: 'token serial number' },
    keyLabel: { type: 'string', description: 'CKA_LABEL of the private key' },
    keyId: { type: 'string', description: 'CKA_ID of the private key, hex' },
    pin: { type: 'string', description: 'user PIN: env:NAME or file:PATH' },
    cert: { type: 'string', description: 'CA certificate PEM (default: the certificate object on the token)' },
    maxConcurrency: { type: 'integer', description: 'parallel signatures (default 1)' },
  },
  required: ['module', 'pin'],
  additionalProperties: false,
};

/** Largest accepted `maxConcurrency`: beyond this an HSM runs out of sessions before it runs out of engines. */
export const MAX_CONCURRENCY = 64;

/**
 * Refuse anything but `env:NAME` / `file:PATH` for a PIN. The value is never echoed: whatever is
 * there may be the PIN itself.
 */
export function assertPinReference(pin: unknown, option = 'pin'): string {
  if (typeof pin !== 'string' || parseSecretReference(pin) === null) {
    throw optionError(option, 'must be a reference, env:NAME or file:PATH; inline PINs are refused so that they never sit in configuration files');
  }
  return pin;
}

/** Check that exactly one token selector is set; returns it. */
export function checkTokenSelector(options: TokenSelector, prefix = ''): TokenSelector {
  const set = (['tokenLabel', 'slot', 'tokenSerial'] as const).filter((name) => options[name] !== undefined);
  if (set.length !== 1) {
    throw optionError(`${prefix}tokenLabel`, `choose the token with exactly one of tokenLabel, slot or tokenSerial, got ${set.length === 0 ? 'none' : set.join(', ')}`);
  }
  if (options.tokenLabel === '') throw optionError(`${prefix}tokenLabel`, 'must not be empty');
  if (options.tokenSerial === '') throw optionError(`${prefix}tokenSerial`, 'must not be empty');
  if (options.slot !== undefined && (!Number.isSafeInteger(options.slot) || options.slot < 0)) {
    throw optionError(`${prefix}slot`, `must be a non-negative integer slot ID, got ${options.slot}`);
  }
  const selector: TokenSelector = {};
  if (options.tokenLabel !== undefined) selector.tokenLabel = options.tokenLabel;
  if (options.slot !== undefined) selector.slot = options.slot;
  if (options.tokenSerial !== undefined) selector.tokenSerial = options.tokenSerial;
  return selector;
}

/** Check that at least one key selector is set and that `keyId` is hex; returns the selector. */
export function checkKeySelector(options: KeySelector, prefix = ''): KeySelector {
  if (options.keyLabel === undefined && options.keyId === undefined) throw optionError(`${prefix}keyLabel`, 'choose the key with keyLabel, keyId or both');
  if (options.keyLabel === '') throw optionError(`${prefix}keyLabel`, 'must not be empty');
  const selector: KeySelector = {};
  if (options.keyLabel !== undefined) selector.keyLabel = options.keyLabel;
  if (options.keyId !== undefined) {
    const id = parseKeyId(options.keyId);
    if (id === null) throw optionError(`${prefix}keyId`, `must be hexadecimal (e.g. "01a4"), got "${options.keyId}"`);
    selector.keyId = id.toString('hex');
  }
  return selector;
}

/** Validate raw options (after the schema check) into {@link Pkcs11SignerOptions}. */
export function validatePkcs11Options(raw: unknown): Pkcs11SignerOptions {
  const options = raw as Pkcs11SignerOptions;
  if (typeof options.module !== 'string' || options.module === '') throw optionError('module', 'must name the PKCS#11 library file');
  const pin = assertPinReference(options.pin);
  const validated: Pkcs11SignerOptions = { module: options.module, pin, ...checkTokenSelector(options), ...checkKeySelector(options) };
  if (options.cert !== undefined) {
    if (options.cert === '') throw optionError('cert', 'must not be empty (omit it to use the certificate stored on the token)');
    validated.cert = options.cert;
  }
  const maxConcurrency = options.maxConcurrency ?? 1;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1 || maxConcurrency > MAX_CONCURRENCY) {
    throw optionError('maxConcurrency', `must be an integer from 1 to ${MAX_CONCURRENCY}, got ${maxConcurrency}`);
  }
  validated.maxConcurrency = maxConcurrency;
  return validated;
}

/**
 * Read the PIN a reference names. Failures keep their 2001 code and name `options.pin` and the
 * variable or file, never the value.
 */
export async function resolvePin(reference: string, context: SignerContext): Promise<string> {
  let pin: string;
  try {
    pin = await context.resolveSecret(assertPinReference(reference));
  } catch (cause) {
    if (!(cause instanceof SecretReferenceError)) throw cause;
    throw new SecretReferenceError(`signer plugin ${PLUGIN_NAME}: options.pin: ${cause.message}`, { cause });
  }
  if (pin === '') throw optionError('pin', 'the referenced PIN is empty');
  return pin;
}
