/**
 * Start-up check of the trust files given to `certsmith serve` (`--ca-bundle`, `--int-bundle`,
 * `--metadata`), used when no worker loads them at start-up (`startServer` normally warms every
 * worker with them before listening, which checks them too). Bundling loads them lazily inside each worker thread; without this check a broken
 * file would only show up as an error on every bundle request. CFSSL refuses to start when the
 * platform metadata does not load (behaviour doc 2.11), and so does certsmith — for all three files.
 * The parsed data is discarded: the workers keep their own copies.
 */
import { loadCertificatePool } from '@certsmith/chain-builder';
import { loadPlatforms } from '@certsmith/ubiquity-rules';
import { CertsmithError, isCodedError } from '@certsmith/x509-core';
import { EXIT_CONFIGURATION } from './errors.js';

/** A trust file given on the command line cannot be loaded; `certsmith serve` exits with code 2. */
export class TrustFileError extends CertsmithError {
  /** The flag that named the file (`--ca-bundle`, `--int-bundle`, `--metadata`). */
  readonly flag: string;
  readonly exitCode: number = EXIT_CONFIGURATION;

  constructor(code: number, flag: string, message: string, options?: { cause?: unknown }) {
    super(code, `${flag}: ${message}`, options);
    this.flag = flag;
  }
}

/** The trust files of a server, as resolved from its options. */
export interface TrustFiles {
  caBundleFile?: string | undefined;
  intBundleFile?: string | undefined;
  metadataFile?: string | undefined;
}

/** What loaded, for the start-up log line. */
export interface TrustSummary {
  roots: number | null;
  intermediates: number | null;
  platforms: number | null;
}

async function check<T>(flag: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = isCodedError(error) ? error.code : 0;
    const message = error instanceof Error ? error.message : String(error);
    throw new TrustFileError(code, flag, message, { cause: error });
  }
}

/**
 * Load each given trust file once and report how much it holds.
 * @throws {TrustFileError} naming the flag, with the loader's CFSSL code (4001/4003 roots and
 *   metadata, 3001/3003 intermediates)
 */
export async function checkTrustFiles(files: TrustFiles): Promise<TrustSummary> {
  const [roots, intermediates, platforms] = await Promise.all([
    files.caBundleFile ? check('--ca-bundle', () => loadCertificatePool(files.caBundleFile as string, 'roots')) : null,
    files.intBundleFile
      ? check('--int-bundle', () => loadCertificatePool(files.intBundleFile as string, 'intermediates'))
      : null,
    files.metadataFile ? check('--metadata', () => loadPlatforms(files.metadataFile as string)) : null,
  ]);
  return {
    roots: roots ? roots.size : null,
    intermediates: intermediates ? intermediates.size : null,
    platforms: platforms ? platforms.length : null,
  };
}
