/**
 * The server's trust data read once per process and handed to every worker thread as plain data:
 * a {@link TrustSnapshot}. Before, each worker read and fully parsed `--ca-bundle`, `--int-bundle`
 * and the metadata keystores itself (≈2,000 certificates with the cfssl_trust data) after it had
 * started, so start-up waited for the main thread, then the worker's start, then the parse. Now the
 * main thread reads and indexes the files while the workers start (two cores: both at once), and a
 * worker only builds its pools from the snapshot (`loadBundleContext(config, snapshot)`), with no
 * file and no parse. Numbers: docs/performance.md, start-up.
 *
 * Reading checks what CFSSL checks when it loads the files (PEM rules, each certificate's
 * structure, the metadata and its keystores); the full parse of each pool certificate happens on
 * its first use, and {@link checkTrustSnapshot} runs it over all of them when the server has time.
 */
import { readPoolSnapshot, snapshotCertificates } from '@certsmith/chain-builder';
import type { PoolSnapshot } from '@certsmith/chain-builder';
import { loadPlatforms } from '@certsmith/ubiquity-rules';
import type { Platform } from '@certsmith/ubiquity-rules';
import { parseCertificate } from '@certsmith/x509-core';
import { taggedWithFile, type BundleContextFile, type TrustFilePaths } from './trust-files.js';

/** The trust files of a `BundleContextConfig`, read and indexed: plain data (structured-clone safe). */
export interface TrustSnapshot {
  /** `--ca-bundle`; `null` without one (the worker uses Node's root store). */
  readonly roots: PoolSnapshot | null;
  /** `--int-bundle`; `null` without one (an empty pool). */
  readonly intermediates: PoolSnapshot | null;
  /** `--metadata`; `null` without one (the worker applies the config's default). */
  readonly platforms: readonly Platform[] | null;
}

/**
 * Read and index the trust files `config` names, all at once.
 * @throws the loaders' coded errors — 4001/4003 roots, 3001/3003 intermediates, platform metadata
 * errors — tagged with their file (`bundleContextFailedFile`)
 */
export async function readTrustSnapshot(config: TrustFilePaths): Promise<TrustSnapshot> {
  const [roots, intermediates, platforms] = await Promise.all([
    config.caBundleFile ? taggedWithFile('caBundleFile', readPoolSnapshot(config.caBundleFile, 'roots')) : null,
    config.intBundleFile ? taggedWithFile('intBundleFile', readPoolSnapshot(config.intBundleFile, 'intermediates')) : null,
    config.metadataFile ? taggedWithFile('metadataFile', loadPlatforms(config.metadataFile)) : null,
  ]);
  return { roots, intermediates, platforms };
}

/** A pool certificate that indexes but does not parse in full (found by {@link checkTrustSnapshot}). */
export interface TrustSnapshotProblem {
  file: Extract<BundleContextFile, 'caBundleFile' | 'intBundleFile'>;
  /** 0-based position of the certificate in the file. */
  position: number;
  /** The parse error's text (a CFSSL code's message, e.g. `Failed to parse certificate`), and its cause. */
  message: string;
}

/** Options of {@link checkTrustSnapshot}. */
export interface CheckTrustSnapshotOptions {
  /** Certificates parsed between two yields to the event loop. Default 32 (≈2–3 ms). */
  batch?: number;
}

/**
 * Parse every pool certificate of `snapshot` in full, yielding to the event loop between batches
 * (a server runs this after it listens: requests are not held up). The result lists what would
 * answer 1003 on its first use; `[]` when everything parses.
 */
export async function checkTrustSnapshot(snapshot: TrustSnapshot, options: CheckTrustSnapshotOptions = {}): Promise<TrustSnapshotProblem[]> {
  const batch = Math.max(1, options.batch ?? 32);
  const problems: TrustSnapshotProblem[] = [];
  const pools: [TrustSnapshotProblem['file'], PoolSnapshot | null][] = [
    ['caBundleFile', snapshot.roots],
    ['intBundleFile', snapshot.intermediates],
  ];
  let sinceYield = 0;
  for (const [file, pool] of pools) {
    if (pool === null) continue;
    let position = 0;
    for (const certificate of snapshotCertificates(pool)) {
      try {
        parseCertificate(certificate.der);
      } catch (error) {
        const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
        problems.push({ file, position, message: `${error instanceof Error ? error.message : String(error)}${cause}` });
      }
      position += 1;
      if (++sinceYield >= batch) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  return problems;
}

