/**
 * CFSSL's OCSP responder files — `-responder` (the responder certificate, PEM) and `-responder-key`
 * (its unencrypted private key, PEM) — made into a signer of the contract, and the CA certificate
 * file an OCSP signer names with `-ca`. Shared by `certsmith serve` and the `ocspsign` /
 * `ocsprefresh` commands, so a file problem reads the same everywhere: the flag, then what is wrong,
 * with CFSSL's code for the kind of file (1001 certificate unreadable, 2001 key unreadable, 2300 key
 * and certificate do not match…).
 */
import { readFile } from 'node:fs/promises';
import type { Signer } from '@certsmith/signer-api';
import { createLocalSignerFromPem } from '@certsmith/signer-local';
import type { Certificate } from '@certsmith/x509-core';
import { CertificateParseError, CertsmithError, ErrorCode, isCodedError, parseCertificates } from '@certsmith/x509-core';

/** Where the responder files come from, for messages (`--responder`, `revocation.ocsp.responders.x`). */
export interface ResponderFileNames {
  certFlag: string;
  keyFlag: string;
}

const CFSSL_FLAGS: ResponderFileNames = { certFlag: '--responder', keyFlag: '--responder-key' };

async function readText(path: string, flag: string, code: number): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    throw new CertsmithError(code, `${flag}: cannot read file ${JSON.stringify(path)} (${(cause as NodeJS.ErrnoException).code ?? 'read error'})`, { cause });
  }
}

function named(flag: string, error: unknown): unknown {
  if (isCodedError(error) && error instanceof Error) return new CertsmithError(error.code, `${flag}: ${error.message}`, { cause: error });
  return error;
}

/**
 * A signer for the responder certificate `certFile` and its key `keyFile` (PEM, unencrypted, as
 * CFSSL reads them). The key must match the certificate (2300). Whether the CA delegated OCSP
 * signing to it is checked where the CA is known (`createOcspSigningIdentity`).
 */
export async function loadResponderSigner(certFile: string, keyFile: string, names: ResponderFileNames = CFSSL_FLAGS): Promise<Signer> {
  const certificatePem = await readText(certFile, names.certFlag, ErrorCode.CertificateReadFailed);
  const keyPem = await readText(keyFile, names.keyFlag, ErrorCode.PrivateKeyReadFailed);
  try {
    // No logger: the local signer's warnings are about CA certificates, and a responder is not one.
    return createLocalSignerFromPem(certificatePem, keyPem);
  } catch (error) {
    const code = isCodedError(error) ? error.code : 0;
    // Key problems (2xxx) name the key flag, certificate problems the certificate flag.
    throw named(code >= 2000 && code < 3000 ? names.keyFlag : names.certFlag, error);
  }
}

/**
 * The one certificate of a PEM file (CFSSL's `-ca` of `ocspsign` / `ocsprefresh`).
 * @throws CertsmithError 1001 unreadable, 1002/1003 not exactly one parsable certificate, naming `flag`.
 */
export async function readCertificateFile(path: string, flag: string): Promise<Certificate> {
  const text = await readText(path, flag, ErrorCode.CertificateReadFailed);
  let certificates: Certificate[];
  try {
    certificates = parseCertificates(text);
  } catch (error) {
    throw named(flag, error);
  }
  if (certificates.length !== 1) {
    throw named(flag, new CertificateParseError(`the file must hold exactly one certificate, it holds ${certificates.length}`));
  }
  return certificates[0]!;
}
