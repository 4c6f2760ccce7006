/**
 * Revocation in a running server: the settings (flags over the config file), the CAs it revokes for
 * ({@link loadRevocationAuthorities}), and — with a certificate store — the {@link RevocationService}
 * (revoke, CRLs, OCSP responses signed at issuance and revocation and refreshed, other writers'
 * changes), the OCSP responder mounted at `--ocsp-path`, and the operations they enable.
 * `startServer` calls {@link startRevocation} once its signers and store are open and
 * {@link ServerRevocation.close} at shutdown, after the last request.
 */
import type { Store } from '@certsmith/cert-store';
import {
  compileClientCnPattern,
  createCrlFileOperation,
  createCrlOperation,
  createOcspsignOperation,
  createRevokeOperation,
  storeForRequests,
} from '@certsmith/http-api';
import type { AnyOperation, ClientCnMatcher, Logger, MountedHandler } from '@certsmith/http-api';
import { AuthKeyError, resolveAuthKey } from '@certsmith/issuer';
import { OcspResponder, createOcspIssuer } from '@certsmith/revocation';
import type { OcspIssuer } from '@certsmith/revocation';
import type { Signer } from '@certsmith/signer-api';
import { ErrorCode } from '@certsmith/x509-core';
import type { ServerConfig } from '../config-file.js';
import { ServerOptionError } from '../errors.js';
import type { ServerOptions } from '../server-options.js';
import { RevocationStartError, loadRevocationAuthorities } from './revocation-authorities.js';
import type { RevocationAuthorities } from './revocation-authorities.js';
import { RevocationService } from './revocation-service.js';
import { revocationSettings } from './revocation-settings.js';
import type { RevocationSettings } from './revocation-settings.js';

/** Largest OCSP request body read: a request is a few hundred bytes. */
const OCSP_MAX_BODY_BYTES = 64 * 1024;

/** Revocation as a server runs it. */
export interface ServerRevocation {
  readonly settings: RevocationSettings;
  readonly authorities: RevocationAuthorities;
  /** The store-backed service, `null` without a store (`--no-store`). */
  readonly service: RevocationService | null;
  /** The OCSP responder mounted at `--ocsp-path` (empty when not mounted). */
  readonly mounts: readonly MountedHandler[];
  /** How revoke and ocspsign are protected (for the operations). */
  readonly protection: { authKeys: Uint8Array[]; clientCn: ClientCnMatcher | undefined };
  /** Stop timers and watches, close the delegated responders' signers. Idempotent. */
  close(): Promise<void>;
}

/** What {@link startRevocation} needs. */
export interface StartRevocationOptions {
  options: ServerOptions;
  config: ServerConfig;
  /** The server's signers (instrumented, so revocation signatures are counted too). */
  signers: ReadonlyArray<{ label: string; signer: Signer }>;
  /** The certificate store, absent with `--no-store`. */
  store?: Store;
  logger: Logger;
  env?: Readonly<Record<string, string | undefined>>;
  /** Default true; false leaves the OCSP refresh schedule to another process (`RevocationServiceOptions.backgroundWork`). */
  backgroundWork?: boolean;
}

/** The `auth_keys` entry `name` of the config file, resolved (hex, `env:`, `file:`). */
function revokeAuthKey(name: string, config: ServerConfig, env: Readonly<Record<string, string | undefined>> | undefined): Uint8Array {
  const where = config.file === null ? 'no --config file' : config.file;
  const entry = config.policy.authKeys[name];
  if (entry === undefined) {
    throw new RevocationStartError(ErrorCode.PolicyInvalid, `revoke auth key: there is no auth_keys entry ${JSON.stringify(name)} (${where})`);
  }
  try {
    return resolveAuthKey(entry.key, { baseDir: config.dir, ...(env ? { env } : {}) });
  } catch (error) {
    if (error instanceof AuthKeyError) throw new RevocationStartError(ErrorCode.PolicyInvalid, `revoke auth key ${JSON.stringify(name)}: ${error.message}`, { cause: error });
    throw error;
  }
}

/** True for addresses only this machine can reach. */
function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || address === '[::1]' || /^127\./.test(address);
}

/**
 * Set revocation up.
 * @throws RevocationStartError (exit 2) when a responder cannot be loaded or was not delegated, or the
 *   revoke auth key does not resolve; ServerOptionError (exit 1) for `--revoke-client-cn` without
 *   mutual TLS.
 */
export async function startRevocation(input: StartRevocationOptions): Promise<ServerRevocation> {
  const { options, config, logger } = input;
  const settings = revocationSettings(options.revocation, config.revocation);
  let clientCn: ClientCnMatcher | undefined;
  if (settings.revokeClientCn !== null) {
    if (options.mutualTlsCaFile === undefined) {
      throw new ServerOptionError(ErrorCode.BadRequest, '--revoke-client-cn', 'needs --mutual-tls-ca (the CN is read from the client certificate mutual TLS verified)');
    }
    clientCn = compileClientCnPattern(settings.revokeClientCn);
  }
  const authKeys = settings.revokeAuthKey === null ? [] : [revokeAuthKey(settings.revokeAuthKey, config, input.env)];

  const authorities = await loadRevocationAuthorities({
    signers: input.signers,
    responders: settings.responders,
    logger,
    configFile: config.file,
    ...(input.env ? { env: input.env } : {}),
  });
  for (const authority of authorities.all) {
    logger.info({ signer: authority.label, ca: authority.keyIdentifier, ocspSigner: authority.responder, algorithm: authority.ocsp.signer.algorithm }, 'revocation ready');
  }

  let service: RevocationService | null = null;
  const mounts: MountedHandler[] = [];
  if (input.store !== undefined) {
    service = new RevocationService({
      store: input.store,
      requestStore: storeForRequests(input.store, logger),
      authorities,
      settings,
      logger,
      ...(input.backgroundWork === undefined ? {} : { backgroundWork: input.backgroundWork }),
    });
    service.start();
    if (settings.ocspPath !== null) {
      const issuers = new Map<string, OcspIssuer>();
      for (const authority of authorities.all) if (!issuers.has(authority.keyIdentifier)) issuers.set(authority.keyIdentifier, createOcspIssuer(authority.ocsp));
      const responder = new OcspResponder({
        source: service.ocspSource,
        issuers: issuers.values(),
        path: settings.ocspPath,
        nonces: settings.nonces,
        onError: (error) => logger.warn({ err: error }, 'OCSP lookup failed (answered internalError)'),
      });
      mounts.push({ name: 'ocsp', path: settings.ocspPath, maxBodyBytes: OCSP_MAX_BODY_BYTES, handle: (request) => responder.handle(request) });
    }
  } else if (settings.ocspPath !== null) {
    logger.warn({ ocspPath: settings.ocspPath }, 'the OCSP responder is not served: it answers from the certificate store, and there is none (--no-store)');
  }

  const protectedRevoke = authKeys.length > 0 || clientCn !== undefined || options.mutualTlsCaFile !== undefined;
  if (service !== null && !protectedRevoke && !options.disable.includes('revoke') && !isLoopback(options.address)) {
    logger.warn(
      { endpoint: 'revoke', address: options.address },
      "endpoint 'revoke' is open to anyone who can reach this address (as CFSSL's): protect it with --revoke-auth-key or mutual TLS (--mutual-tls-ca, --revoke-client-cn), or --disable revoke",
    );
  }

  let closing: Promise<void> | null = null;
  return {
    settings,
    authorities,
    service,
    mounts,
    protection: { authKeys, clientCn },
    close() {
      closing ??= (async () => {
        await service?.close();
        await authorities.close();
      })();
      return closing;
    },
  };
}

/**
 * The revocation operations:
 * - `ocspsign` when an OCSP responder was configured explicitly (CFSSL serves it only with
 *   `-responder`/`-responder-key`: an open endpoint that makes the CA vouch for any status of any
 *   certificate it issued should be a deliberate choice);
 * - with a store: `revoke`, `crl` and the raw CRL (`crl_der`).
 * `revoke` and `ocspsign` carry the configured protection (auth key, client certificate CN).
 */
export function revocationOperations(revocation: ServerRevocation | undefined, logger?: Logger): AnyOperation[] {
  if (revocation === undefined) return [];
  const operations: AnyOperation[] = [];
  const { authorities, settings, service, protection } = revocation;
  if (authorities.explicitResponders && authorities.all.length > 0) {
    operations.push(
      createOcspsignOperation({
        identityFor: (certificate) => authorities.forCertificate(certificate)?.ocsp,
        intervalMs: settings.ocspIntervalMs,
        ...(protection.authKeys.length > 0 ? { authKeys: protection.authKeys } : {}),
        ...(protection.clientCn !== undefined ? { clientCn: protection.clientCn } : {}),
      }),
    );
  } else {
    logger?.info({ endpoint: 'ocspsign' }, "endpoint 'ocspsign' is disabled: no OCSP responder is configured (--responder/--responder-key or revocation.ocsp.responders)");
  }
  if (service === null) {
    logger?.info({ endpoints: ['revoke', 'crl', 'crl_der'] }, 'no certificate store: revoke and CRLs are not available');
    return operations;
  }
  operations.push(
    createRevokeOperation({
      revoke: (serial, authorityKeyId, reason) => service.revoke(serial, authorityKeyId, reason),
      ...(protection.authKeys.length > 0 ? { authKeys: protection.authKeys } : {}),
      ...(protection.clientCn !== undefined ? { clientCn: protection.clientCn } : {}),
    }),
  );
  const crls = { crlFor: (label: string | undefined) => service.crlFor(label), validityMs: settings.crlValidityMs };
  operations.push(createCrlOperation(crls), createCrlFileOperation(crls));
  return operations;
}
