/**
 * The check every file flag gets, in `serve` and in the CLI commands alike, so a missing `-ca`
 * reads the same in `serve` and `gencert`. A module of its own so that the commands do not load
 * the server's options (and with them the HTTP layer) to check a file.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ErrorCode } from '@certsmith/x509-core';
import { FILE_FLAG_CODES, ServerOptionError } from './errors.js';

/** CFSSL codes for unreadable TLS files (the other file flags have theirs in `FILE_FLAG_CODES`). */
const TLS_FILE_CODES: Readonly<Record<string, number>> = {
  '--tls-cert': ErrorCode.CertificateReadFailed,
  '--tls-key': ErrorCode.PrivateKeyReadFailed,
  '--mutual-tls-ca': ErrorCode.RootReadFailed,
};

/**
 * Check that the file a flag names exists, is a regular file and is readable; returns its absolute
 * path (relative paths resolve against `cwd`). Throws {@link ServerOptionError} naming the flag with
 * the CFSSL code of what the flag holds: `--ca-key: cannot read file "k.pem" (ENOENT)` (2001).
 */
export async function checkReadableFile(flag: string, path: string, cwd: string = process.cwd()): Promise<string> {
  const code = FILE_FLAG_CODES[flag] ?? TLS_FILE_CODES[flag] ?? ErrorCode.BadRequest;
  if (path === '') throw new ServerOptionError(code, flag, 'file name must not be empty');
  const absolute = resolve(cwd, path);
  try {
    const info = await stat(absolute);
    if (!info.isFile()) throw new ServerOptionError(code, flag, `"${path}" is not a regular file`);
    await access(absolute, constants.R_OK);
  } catch (error) {
    if (error instanceof ServerOptionError) throw error;
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ServerOptionError(code, flag, `cannot read file "${path}" (${reason})`, { cause: error });
  }
  return absolute;
}
