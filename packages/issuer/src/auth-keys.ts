/**
 * CFSSL `auth_keys` (behaviour doc 4.4): HMAC-SHA256 keys for `authsign`, written as hex, as
 * `env:NAME` (an environment variable holding the hex) or `file:PATH` (a file holding it, trimmed),
 * as cfssl `auth.New` reads them. Reasons name the reference, never the key.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/** Where `env:` and `file:` references are read. */
export interface AuthKeyOptions {
  /** Directory relative `file:` paths resolve against (default: the working directory, as CFSSL). */
  baseDir?: string;
  /** Environment for `env:` references (default: `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** An auth key reference cannot give a key; `message` says why without showing the key. */
export class AuthKeyError extends Error {
  override name = 'AuthKeyError';
}

/**
 * Resolve an auth key reference like cfssl `auth.New`: hex, `env:VAR` or `file:/path`, all
 * hex-encoded. Stricter than CFSSL in one way: a key that resolves to nothing (an unset or empty
 * variable, an empty file, `""`) is refused — CFSSL accepts it as an empty HMAC key, which
 * anybody can compute tokens with.
 */
export function resolveAuthKey(reference: string, options: AuthKeyOptions = {}): Uint8Array {
  const colon = reference.indexOf(':');
  let hex: string;
  if (colon < 0) {
    hex = reference;
  } else {
    const prefix = reference.slice(0, colon);
    const rest = reference.slice(colon + 1);
    if (prefix === 'env') {
      const value = (options.env ?? process.env)[rest];
      if (value === undefined) throw new AuthKeyError(`environment variable ${rest} is not set`);
      hex = value;
      if (hex === '') throw new AuthKeyError(`environment variable ${rest} is empty`);
    } else if (prefix === 'file') {
      const path = isAbsolute(rest) ? rest : resolve(options.baseDir ?? process.cwd(), rest);
      try {
        hex = readFileSync(path, 'utf8').trim();
      } catch (cause) {
        throw new AuthKeyError(`cannot read file ${path} (${(cause as NodeJS.ErrnoException).code ?? 'read error'})`, { cause });
      }
      if (hex === '') throw new AuthKeyError(`file ${path} is empty`);
    } else {
      throw new AuthKeyError(`unknown key prefix: ${prefix} (expected hex, env:NAME or file:PATH)`);
    }
  }
  if (hex === '') throw new AuthKeyError('no key given (hex, env:NAME or file:PATH)');
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new AuthKeyError('the key is not hex-encoded (encoding/hex: invalid byte or odd length)');
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
