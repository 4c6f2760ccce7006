/**
 * Revocation in a running server: the settings (flags over the config file), the CAs it revokes
 * for ({@link loadRevocationAuthorities}) and the operations they enable. `startServer` calls
 * {@link startRevocation} once its signers are loaded and {@link ServerRevocation.close} at shutdown,
 * after the last request.
 */
import { createOcspsignOperation } from '@certsmith/http-api';
import type { AnyOperation, Logger } from '@certsmith/http-api';
import type { Signer } from '@certsmith/signer-api';
import type { ServerConfig } from '../config-file.js';
import type { ServerOptions } from '../server-options.js';
import { loadRevocationAuthorities } from './revocation-authorities.js';
import type { RevocationAuthorities } from './revocation-authorities.js';
import { revocationSettings } from './revocation-settings.js';
import type { RevocationSettings } from './revocation-settings.js';

/** Revocation as a server runs it. */
export interface ServerRevocation {
  readonly settings: RevocationSettings;
  readonly authorities: RevocationAuthorities;
  /** Stop timers and watches, close the delegated responders' signers. Idempotent. */
  close(): Promise<void>;
}

/** What {@link startRevocation} needs. */
export interface StartRevocationOptions {
  options: ServerOptions;
  config: ServerConfig;
  /** The server's signers (instrumented, so revocation signatures are counted too). */
  signers: ReadonlyArray<{ label: string; signer: Signer }>;
  logger: Logger;
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Set revocation up.
 * @throws RevocationStartError (exit 2) when a responder cannot be loaded or was not delegated.
 */
export async function startRevocation(input: StartRevocationOptions): Promise<ServerRevocation> {
  const settings = revocationSettings(input.options.revocation, input.config.revocation);
  const authorities = await loadRevocationAuthorities({
    signers: input.signers,
    responders: settings.responders,
    logger: input.logger,
    configFile: input.config.file,
    ...(input.env ? { env: input.env } : {}),
  });
  for (const authority of authorities.all) {
    input.logger.info({ signer: authority.label, ca: authority.keyIdentifier, ocspSigner: authority.responder, algorithm: authority.ocsp.signer.algorithm }, 'revocation ready');
  }
  return {
    settings,
    authorities,
    close: () => authorities.close(),
  };
}

/**
 * The revocation operations: `ocspsign` when an OCSP responder was configured explicitly (CFSSL
 * serves it only with `-responder`/`-responder-key`: an open endpoint that makes the CA vouch for
 * any status of any certificate it issued should be a deliberate choice).
 */
export function revocationOperations(revocation: ServerRevocation | undefined, logger?: Logger): AnyOperation[] {
  if (revocation === undefined) return [];
  const operations: AnyOperation[] = [];
  const { authorities, settings } = revocation;
  if (authorities.explicitResponders && authorities.all.length > 0) {
    operations.push(
      createOcspsignOperation({
        identityFor: (certificate) => authorities.forCertificate(certificate)?.ocsp,
        intervalMs: settings.ocspIntervalMs,
      }),
    );
  } else {
    logger?.info({ endpoint: 'ocspsign' }, "endpoint 'ocspsign' is disabled: no OCSP responder is configured (--responder/--responder-key or revocation.ocsp.responders)");
  }
  return operations;
}
