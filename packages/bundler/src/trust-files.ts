/**
 * Which configured trust file an error came from. Loading reads up to three files at once
 * (`--ca-bundle`, `--int-bundle`, `--metadata`) and their loaders throw CFSSL-coded errors that do
 * not name the flag; the server's start-up error must (`--int-bundle: …`), so each load is tagged
 * with its file and {@link trustFileOf} answers for the error later.
 */

/** The files of a `BundleContextConfig`, by config key. */
export type BundleContextFile = 'caBundleFile' | 'intBundleFile' | 'metadataFile';

/** The trust file paths of a `BundleContextConfig` (what `readTrustSnapshot` reads). */
export type TrustFilePaths = { readonly [file in BundleContextFile]?: string };

/** Which configured file a load error came from (same thread only). */
const failedFiles = new WeakMap<object, BundleContextFile>();

/** `pending`, with its rejection remembered as coming from `file`. */
export function taggedWithFile<T>(file: BundleContextFile, pending: Promise<T>): Promise<T> {
  return pending.catch((error: unknown) => {
    if (typeof error === 'object' && error !== null) failedFiles.set(error, file);
    throw error;
  });
}

/**
 * The file whose loading raised `error` (thrown on this thread by `loadBundleContext` or
 * `readTrustSnapshot`), or `null` when it did not come from a configured file.
 */
export function trustFileOf(error: unknown): BundleContextFile | null {
  return typeof error === 'object' && error !== null ? (failedFiles.get(error) ?? null) : null;
}
