/**
 * Loading `--ca-bundle` / `--int-bundle` PEM files into pools with CFSSL's codes (behaviour doc 2.4):
 * unreadable → 4001 / 3001 with Go's file error text, unparsable → 4003 / 3003.
 */
import { readFile } from 'node:fs/promises';
import { CertsmithError, ErrorCode, parseCertificatesLazily, type Certificate, type LazyCertificate } from '@certsmith/x509-core';
import { CertificatePool, type CertificatePoolOptions } from './certificate-pool.js';

/** Which bundle a file is: decides the error category (4xxx roots, 3xxx intermediates). */
export type PoolKind = 'roots' | 'intermediates';

/** A CA/intermediate bundle file could not be read (4001/3001) or parsed (4003/3003). */
export class BundleFileError extends CertsmithError {}

/** Go's text for a failed read of `file` (`open x: no such file or directory`). */
export function goReadError(file: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return `open ${file}: no such file or directory`;
  if (code === 'EACCES') return `open ${file}: permission denied`;
  if (code === 'EISDIR') return `read ${file}: is a directory`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Parse a PEM bundle into certificates. Whitespace-only text is an empty pool (CFSSL accepts an
 * empty-but-present file); anything unparsable fails the whole bundle. Every certificate is parsed
 * (so a bad one fails the load, as in CFSSL) but kept lazily ({@link LazyCertificate}): a pool
 * holds DER and index fields, and parses again only the certificates a request reaches (see
 * docs/performance.md#trust-pools-hold-certificates-lazily).
 * @throws {BundleFileError} 4003 / 3003
 */
export function parseBundlePem(text: string, kind: PoolKind): Certificate[] {
  if (text.trim() === '') return [];
  try {
    return parseCertificatesLazily(text);
  } catch (error) {
    const code = kind === 'roots' ? ErrorCode.RootParseFailed : ErrorCode.IntermediatesParseFailed;
    throw new BundleFileError(code, undefined, { cause: error });
  }
}

/**
 * Read a PEM bundle file into a new {@link CertificatePool} (duplicates collapse).
 * @throws {BundleFileError} 4001/3001 (read), 4003/3003 (parse)
 */
export async function loadCertificatePool(
  file: string,
  kind: PoolKind,
  options: CertificatePoolOptions = {},
): Promise<CertificatePool> {
  return new CertificatePool(parseBundlePem(await readBundleFile(file, kind), kind), options);
}

/**
 * The text of a PEM bundle file, or CFSSL's read failure for its kind.
 * @throws {BundleFileError} 4001 / 3001 with Go's file error text
 */
export async function readBundleFile(file: string, kind: PoolKind): Promise<string> {
  try {
    // Read whole, then decoded once: with an encoding, fs/promises decodes each 512 KiB chunk on its
    // own and joins the pieces, which the first search then copies flat again (start-up pass 6c).
    return (await readFile(file)).toString('utf8');
  } catch (error) {
    const code = kind === 'roots' ? ErrorCode.RootReadFailed : ErrorCode.IntermediatesReadFailed;
    throw new BundleFileError(code, goReadError(file, error), { cause: error });
  }
}
