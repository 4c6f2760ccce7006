/**
 * One running OCSP responder of `certsmith ocspserve`, built from a plain-data plan: the responses
 * (a `-responses` file's text, or a `-db-config` store opened read only), the CAs answered for, the
 * mount path, the listening address and the connection limits. The command runs one in its own
 * process (`--workers 1`) or hands the same plan to each worker process
 * (`ocsp-worker-cluster.ts`), so every process answers exactly alike.
 */
import type { DbConfig, Store } from '@certsmith/cert-store';
import { openStore } from '@certsmith/cert-store';
import type { OcspResponseSource } from '@certsmith/revocation';
import { OcspResponder, createOcspFileSource, createOcspIssuer, createStoreOcspSource } from '@certsmith/revocation';
import { parseCertificates } from '@certsmith/x509-core';
import type { OcspHttpLimits, OcspHttpServer } from './ocsp-http-server.js';
import { startOcspHttpServer } from './ocsp-http-server.js';
import { turnOffPretenuring } from '../pretenuring.js';

/** Everything a responder process needs; plain data, so it crosses to a worker process as is. */
export interface OcspResponderPlan {
  /** The text of a `-responses` file (read once by the command). */
  responsesText?: string;
  /** A `-db-config`, used when there is no `responsesText`. */
  dbConfig?: DbConfig;
  /** PEM of the `-ca` certificates (already checked by the command). */
  caPem?: string;
  /** `-path`. */
  path: string;
  host: string;
  port: number;
  limits: Omit<OcspHttpLimits, 'onError'>;
}

/** A running responder. */
export interface RunningOcspResponder {
  readonly server: OcspHttpServer;
  /** Stop the server (in-flight answers finish, up to `timeoutMs`), then close the store. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * Build the source, the responder and the server of `plan`, and listen. `warn` gets lookup failures.
 * `fileSource`: the responses of `plan.responsesText` when the caller has already read them in this
 * process (`--workers 1`), so the file is not parsed twice.
 */
export async function startOcspResponder(plan: OcspResponderPlan, warn: (message: string) => void, fileSource?: OcspResponseSource): Promise<RunningOcspResponder> {
  turnOffPretenuring();
  const issuers = plan.caPem === undefined ? [] : parseCertificates(plan.caPem).map((certificate) => createOcspIssuer(certificate));
  let source: OcspResponseSource;
  let store: Store | null = null;
  if (plan.responsesText !== undefined) {
    // Pieces that do not parse were reported by the command when it read the file.
    source = fileSource ?? createOcspFileSource(plan.responsesText);
  } else if (plan.dbConfig !== undefined) {
    // Read only: the schema is used as found (CFSSL's ocsp_responses table is enough).
    store = await openStore(plan.dbConfig, { migrations: 'off' });
    source = createStoreOcspSource(store);
  } else throw new TypeError('an OCSP responder plan needs responsesText or dbConfig');

  const responder = new OcspResponder({ source, issuers, path: plan.path, onError: (error) => warn(`lookup failed: ${(error as Error).message}`) });
  let server: OcspHttpServer;
  try {
    server = await startOcspHttpServer(responder, { host: plan.host, port: plan.port }, { ...plan.limits, onError: (error) => warn(`answer failed: ${(error as Error).message}`) });
  } catch (error) {
    await store?.close();
    throw error;
  }
  return {
    server,
    async close(timeoutMs) {
      await server.close(timeoutMs);
      await store?.close();
    },
  };
}
