/**
 * The one load cell that `variants.mjs` and `first-seconds.mjs` drive: run.mjs's fixtures (a signer
 * CA, the generated PKI, the trust files over the cfssl_trust data) and the request of the chosen
 * operation, byte for byte what run.mjs sends for it.
 */
import { BUNDLE_PATH, NEWCERT_PATH, bundleBody, newcertBody } from './operations.mjs';
import { createSignerCa, generateBenchPki, writeTrustFiles } from './pki.mjs';

/** The operations a single cell can be: `--op` of both scripts. */
export const SINGLE_CELL_OPS = ['newcert-ecdsa', 'newcert-rsa', 'bundle-generated'];

/**
 * Write the fixtures into `workDir` and name the cell's request.
 * @param {{ workDir: string, trustDir: string, op: string }} options
 * @returns {{ files: import('./servers.mjs').ServerFiles, path: string, bodies: string[] }}
 * @throws Error for an `op` not in {@link SINGLE_CELL_OPS}
 */
export function prepareSingleCell({ workDir, trustDir, op }) {
  if (!SINGLE_CELL_OPS.includes(op)) throw new Error(`--op must be one of ${SINGLE_CELL_OPS.join(', ')}`);
  const ca = createSignerCa(workDir);
  const pki = generateBenchPki();
  const trust = writeTrustFiles({ dir: workDir, trustDir, pki });
  const files = { ca: ca.certFile, caKey: ca.keyFile, caBundle: trust.caBundle, intBundle: trust.intBundle, metadata: trust.metadata };
  const requests = {
    'newcert-ecdsa': () => [NEWCERT_PATH, [newcertBody()]],
    'newcert-rsa': () => [NEWCERT_PATH, [newcertBody({ algo: 'rsa', size: 2048 })]],
    'bundle-generated': () => [BUNDLE_PATH, [bundleBody(pki.leaf.pem + pki.intermediate.pem)]],
  };
  const [path, bodies] = requests[op]();
  return { files, path, bodies };
}
