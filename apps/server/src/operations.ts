/**
 * The operations a server serves. This is the single place where features are wired in: each
 * feature package exports an operation (or a factory taking what it needs from {@link ServerOptions})
 * and is added to the list here; its worker tasks are registered with the pool automatically.
 */
import { certinfoOperation, createHealthOperation } from '@certsmith/http-api';
import type { AnyOperation } from '@certsmith/http-api';
import type { ServerOptions } from './server-options.js';

/**
 * Build the operations for `options`. Today: `health` and `certinfo`. To come, e.g.
 * `createBundleOperation({ caBundleFile, intBundleFile, metadataFile })` and
 * `createNewcertOperation({ signer })`, enabled the way CFSSL enables endpoints: only when their
 * prerequisites (a signer, trust files) are configured.
 */
export async function buildOperations(_options: ServerOptions): Promise<AnyOperation[]> {
  return [createHealthOperation(), certinfoOperation];
}
