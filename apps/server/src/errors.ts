/**
 * Startup errors of the server. They carry the CFSSL code of the thing that could not be read (CFSSL's
 * own startup reads fail the same way, e.g. `-ca-key` → 2001 `Failed to read private key`) and name
 * the flag, so the operator knows which argument to fix.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/** A server option is invalid or names a file that cannot be read. */
export class ServerOptionError extends CertsmithError {
  /** The flag, as typed on the command line (e.g. `--ca-key`). */
  readonly flag: string;

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
};
