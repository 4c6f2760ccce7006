/**
 * The CAs a server revokes for: for every signer label whose signer can sign raw data (a local key,
 * the PKCS#11 signer, a plugin), the CA as a CRL signer and the identity that signs its OCSP
 * responses — the CA itself by default, or a delegated responder (CFSSL's `-responder` /
 * `-responder-key` for the `default` label, or `revocation.ocsp.responders.<label>` in the config
 * file). Built once at start-up, so a responder certificate the CA did not delegate OCSP signing to,
 * or a signer that cannot sign revocation data where the configuration asks for it, stops start-up
 * with a coded error (2000) instead of failing the first revocation.
 *
 * A signer that only forwards whole sign requests (`@certsmith/signer-multiroot`) cannot sign CRLs
 * or OCSP responses; its certificates are recorded and revoked on the CA that signs them. Such a
 * label is listed as unavailable (and logged) unless the configuration names it for revocation, in
 * which case start-up fails.
 */
import type { Logger } from '@certsmith/http-api';
import type { OcspSigningIdentity, RevocationSigner } from '@certsmith/revocation';
import { RevocationSignerError, createOcspSigningIdentity, createRevocationSigner } from '@certsmith/revocation';
import type { Signer } from '@certsmith/signer-api';
import type { Certificate } from '@certsmith/x509-core';
import { CertsmithError, isCodedError, toHex } from '@certsmith/x509-core';
import { EXIT_CONFIGURATION } from '../errors.js';
import { loadSigner } from '../signer-loader.js';
import type { ResponderDefinition } from './revocation-config.js';
import { loadResponderSigner } from './responder-files.js';

/** One CA this server revokes for. */
export interface RevocationAuthority {
  /** The signer label. */
  readonly label: string;
  /** The CA, prepared for signing CRLs (and OCSP responses when it signs them itself). */
  readonly ca: RevocationSigner;
  /** Who signs the CA's OCSP responses. */
  readonly ocsp: OcspSigningIdentity;
  /** The CA's key identifier, lower-case hex: the store's `authority_key_identifier` of what it issued. */
  readonly keyIdentifier: string;
  /** Where the OCSP signer is defined: `the CA`, `--responder/--responder-key`, `revocation.ocsp.responders.<label>`. */
  readonly responder: string;
}

/** The CAs of a server, by label and by key identifier. */
export interface RevocationAuthorities {
  readonly all: readonly RevocationAuthority[];
  /** Labels whose signer cannot sign revocation data, with why. */
  readonly unavailable: ReadonlyArray<{ label: string; reason: string }>;
  /** True when an OCSP responder was configured explicitly (flags or config): `ocspsign` is then served, as CFSSL serves it with `-responder`. */
  readonly explicitResponders: boolean;
  byLabel(label: string): RevocationAuthority | undefined;
  /** The CA with this key identifier (lower-case hex, no colons). */
  byKeyIdentifier(keyIdentifier: string): RevocationAuthority | undefined;
  /** The CA that issued `certificate`: by its AKI, else by its issuer name (byte for byte). */
  forCertificate(certificate: Certificate): RevocationAuthority | undefined;
  /** Close the delegated responders' signers (the CAs' signers belong to the server). */
  close(): Promise<void>;
}

/**
 * Revocation could not be set up at start-up: a responder that cannot be loaded or was not
 * delegated by its CA, a responder for a label no signer has, or a signer that cannot sign
 * revocation data where the configuration asks it to. Exit code 2, the underlying code (2000…).
 */
export class RevocationStartError extends CertsmithError {
  readonly exitCode: number = EXIT_CONFIGURATION;
}

/** What {@link loadRevocationAuthorities} needs. */
export interface LoadRevocationAuthoritiesOptions {
  /** The server's signers by label (use the instrumented ones so revocation signatures are counted). */
  signers: ReadonlyArray<{ label: string; signer: Signer }>;
  /** Configured responders by label (flags already mapped to `default`). */
  responders: ReadonlyMap<string, ResponderDefinition>;
  logger: Logger;
  /** The config file, for messages. */
  configFile?: string | null;
  env?: Readonly<Record<string, string | undefined>>;
}

function startError(where: string, error: unknown): RevocationStartError {
  const message = error instanceof Error ? error.message : String(error);
  return new RevocationStartError(isCodedError(error) ? error.code : 2000, `${where}: ${message}`, { cause: error });
}

async function closeQuietly(signer: Signer, logger: Logger): Promise<void> {
  try {
    await signer.close();
  } catch (error) {
    logger.warn({ err: error }, 'closing an OCSP responder signer failed');
  }
}

async function loadResponder(label: string, definition: ResponderDefinition, input: LoadRevocationAuthoritiesOptions): Promise<Signer> {
  if (definition.kind === 'files') return loadResponderSigner(definition.certFile, definition.keyFile);
  if (definition.kind === 'plugin') {
    const loaded = await loadSigner({
      label: `ocsp-${label}`,
      plugin: definition.plugin,
      options: definition.options,
      configDir: definition.configDir,
      logger: input.logger,
      where: definition.where,
      configFile: input.configFile ?? null,
      ...(input.env ? { env: input.env } : {}),
    });
    return loaded.signer;
  }
  throw new TypeError(`no responder signer to load for ${definition.kind}`);
}

/**
 * Prepare every label's CA and OCSP signer.
 * @throws RevocationStartError (exit 2) — see the class.
 */
export async function loadRevocationAuthorities(input: LoadRevocationAuthoritiesOptions): Promise<RevocationAuthorities> {
  const { logger } = input;
  const labels = new Set(input.signers.map((entry) => entry.label));
  for (const [label, definition] of input.responders) {
    if (!labels.has(label)) {
      throw new RevocationStartError(2000, `${definition.where}: no signer has the label ${JSON.stringify(label)} (labels: ${[...labels].join(', ')})`);
    }
  }
  const authorities: RevocationAuthority[] = [];
  const unavailable: Array<{ label: string; reason: string }> = [];
  const responderSigners: Signer[] = [];
  const closeResponders = async (): Promise<void> => {
    await Promise.all(responderSigners.map((signer) => closeQuietly(signer, logger)));
  };
  try {
    for (const { label, signer } of input.signers) {
      const definition = input.responders.get(label);
      let ca: RevocationSigner;
      try {
        ca = await createRevocationSigner(signer, { label });
      } catch (error) {
        // Needed only when the configuration names this label for revocation.
        if (definition !== undefined) throw startError(definition.where, error);
        if (!(error instanceof RevocationSignerError)) throw startError(`signer ${JSON.stringify(label)}`, error);
        unavailable.push({ label, reason: error.message });
        continue;
      }
      let ocsp: OcspSigningIdentity;
      let responder = 'the CA';
      if (definition === undefined || definition.kind === 'ca') {
        ocsp = createOcspSigningIdentity({ signer: ca });
      } else {
        let responderSigner: Signer;
        try {
          responderSigner = await loadResponder(label, definition, input);
        } catch (error) {
          throw startError(definition.where, error);
        }
        responderSigners.push(responderSigner);
        try {
          const prepared = await createRevocationSigner(responderSigner, { label: `OCSP responder of ${label}` });
          ocsp = createOcspSigningIdentity({ issuer: ca.certificate, signer: prepared });
        } catch (error) {
          throw startError(definition.where, error);
        }
        responder = definition.where;
      }
      authorities.push({ label, ca, ocsp, keyIdentifier: ca.keyIdentifierHex, responder });
    }
  } catch (error) {
    await closeResponders();
    throw error;
  }
  for (const entry of unavailable) logger.info({ signer: entry.label, reason: entry.reason }, `signer "${entry.label}" cannot revoke: revoke, CRLs and OCSP for its certificates belong on the CA that signs them`);

  const byLabel = new Map(authorities.map((authority) => [authority.label, authority]));
  const byKey = new Map<string, RevocationAuthority>();
  // Two labels may share one CA (different policies): the first one answers for the key.
  for (const authority of authorities) if (!byKey.has(authority.keyIdentifier)) byKey.set(authority.keyIdentifier, authority);
  let closing: Promise<void> | null = null;
  return {
    all: authorities,
    unavailable,
    explicitResponders: input.responders.size > 0,
    byLabel: (label) => byLabel.get(label),
    byKeyIdentifier: (keyIdentifier) => byKey.get(keyIdentifier.toLowerCase().replace(/:/g, '')),
    forCertificate(certificate) {
      if (certificate.authorityKeyId !== null && certificate.authorityKeyId.length > 0) {
        const found = byKey.get(toHex(certificate.authorityKeyId).toLowerCase());
        if (found !== undefined) return found;
      }
      const issuer = Buffer.from(certificate.issuer.der);
      return authorities.find((authority) => issuer.equals(authority.ca.certificate.subject.der));
    },
    close() {
      closing ??= closeResponders();
      return closing;
    },
  };
}
