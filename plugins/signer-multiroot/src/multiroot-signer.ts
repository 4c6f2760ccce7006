/**
 * A signer that forwards whole sign requests to a remote CFSSL-compatible CA: Debian/Cloudflare
 * `multirootca` (labels select roots, `/authsign` only; behaviour doc 4.6), `cfssl serve` or
 * another certsmith (`/sign` or `/authsign`, doc 4.5). It cannot sign raw TBS bytes, so it offers
 * `signRequest` and no `sign`; the CA certificate comes from the remote's `/info`.
 */
import type {
  InfoRequest,
  InfoResult,
  SignRequest,
  SignRequestResult,
  Signer,
  SignerCertificate,
  SignerHealth,
  SignerLogger,
} from '@certsmith/signer-api';
import { SignerUnavailableError, createAuthenticatedRequest, silentLogger } from '@certsmith/signer-api';
import { ErrorCode, certificateToPem, parseCertificates } from '@certsmith/x509-core';

import type { RemoteState } from './backoff.js';
import { RemoteSignerError } from './errors.js';
import type { MultirootSignerSettings } from './options.js';
import { excerpt, readInfoAnswer, readSignAnswer } from './remote-answer.js';
import type { RemoteTlsOptions } from './remote-group.js';
import { RemoteGroup } from './remote-group.js';
import { encodeSignRequest } from './sign-request-json.js';

/** CFSSL API paths (behaviour doc 4.4–4.6). */
export const SIGN_PATH = '/api/v1/cfssl/sign';
/** Authenticated signing; the only signing route multirootca has. */
export const AUTHSIGN_PATH = '/api/v1/cfssl/authsign';
/** CA certificate, usages and expiry of a label/profile. */
export const INFO_PATH = '/api/v1/cfssl/info';

/** Health probes are bounded tighter than calls: a health check that hangs is worse than useless. */
const HEALTH_TIMEOUT_MS = 5_000;

/** What the plugin's `create` resolved from options and context. */
export interface MultirootSignerDependencies {
  /** Decoded auth key, or `null` to use `/sign` without a token. */
  authKey: Uint8Array | null;
  /** TLS material for https remotes. */
  tls?: RemoteTlsOptions;
  logger?: SignerLogger;
  /** Clock for back-off (tests). */
  now?: () => number;
}

/** The multiroot signer: a {@link Signer} with the remote-specific extras. */
export interface MultirootSigner extends Signer {
  /** Remote URLs in failover order. */
  readonly remotes: readonly string[];
  signRequest(request: SignRequest): Promise<SignRequestResult>;
  info(request: InfoRequest): Promise<InfoResult>;
  health(): Promise<SignerHealth>;
  /**
   * The CA certificate that signs requests carrying `label` (the fixed `label` option wins when
   * set; `''` means the remote's default label), from `/info`, cached per label. This is the
   * label-aware form the `Signer` contract lacks (`getCertificate()` takes no label).
   */
  getCertificateForLabel(label: string): Promise<SignerCertificate>;
  /** Back-off state of every remote (for status pages and tests). */
  remoteStates(): RemoteState[];
}

function parseCaCertificate(remote: string, pem: string): SignerCertificate {
  let der: Uint8Array | undefined;
  try {
    der = parseCertificates(pem)[0]?.der;
  } catch (cause) {
    throw new RemoteSignerError(ErrorCode.ApiClientJsonError, `remote ${remote} answered /info with a certificate that does not parse: ${excerpt((cause as Error).message)}`, { remote, status: 200 }, { cause });
  }
  if (der === undefined) throw new RemoteSignerError(ErrorCode.ApiClientJsonError, `remote ${remote} answered /info without a certificate`, { remote, status: 200 });
  return Object.freeze({ der, pem: certificateToPem(der) });
}

/** Build the signer from validated settings and resolved secrets; opens no connection yet. */
export function createMultirootSigner(settings: MultirootSignerSettings, dependencies: MultirootSignerDependencies): MultirootSigner {
  const logger = dependencies.logger ?? silentLogger;
  const authKey = dependencies.authKey;
  const group = new RemoteGroup({
    remotes: settings.remotes,
    timeoutMs: settings.timeoutMs,
    connectTimeoutMs: settings.connectTimeoutMs,
    backoff: { initialMs: settings.backoffInitialMs, maxMs: settings.backoffMaxMs },
    connections: settings.connections,
    logger,
    ...(dependencies.tls ? { tls: dependencies.tls } : {}),
    ...(dependencies.now ? { now: dependencies.now } : {}),
  });
  const certificates = new Map<string, Promise<SignerCertificate>>();
  let closed = false;

  const assertOpen = (): void => {
    if (closed) throw new SignerUnavailableError('signer is closed');
  };
  // A fixed label replaces whatever the request carries: certsmith selects this signer by its own
  // instance name, which is not the remote's label (style guide, "Plugin contract").
  const effectiveLabel = (label: string | undefined): string => settings.label ?? label ?? '';

  const fetchInfo = async (label: string, profile: string): Promise<{ remote: string; result: InfoResult }> => {
    // CFSSL's info.Req; never authenticated, as cfssl's remote signer (doc 4.4). Idempotent, so
    // a possibly-sent failure may still fail over.
    const body = JSON.stringify({ label, profile });
    const { remote, answer } = await group.post({ path: INFO_PATH, body, idempotent: true });
    return { remote, result: readInfoAnswer(remote, answer) };
  };

  const certificateFor = (label: string): Promise<SignerCertificate> => {
    let pending = certificates.get(label);
    if (pending === undefined) {
      pending = fetchInfo(label, settings.profile).then(({ remote, result }) => parseCaCertificate(remote, result.certificate));
      certificates.set(label, pending);
      // A failure is not cached: the remote may be back on the next call.
      pending.catch(() => {
        if (certificates.get(label) === pending) certificates.delete(label);
      });
    }
    return pending;
  };

  return {
    remotes: Object.freeze(group.remotes),
    // signRequest only: the remote applies its own policy and signs with a key we never see.
    algorithms: Object.freeze([]),

    async signRequest(request: SignRequest): Promise<SignRequestResult> {
      assertOpen();
      const outgoing: SignRequest = { ...request };
      const label = effectiveLabel(request.label);
      if (label !== '') outgoing.label = label;
      if (!outgoing.profile && settings.profile !== '') outgoing.profile = settings.profile;
      const json = encodeSignRequest(outgoing);
      // The HMAC covers these exact bytes (doc 4.4); the key itself never leaves this closure.
      const body = authKey ? JSON.stringify(createAuthenticatedRequest(json, authKey)) : json;
      const { remote, answer } = await group.post({ path: authKey ? AUTHSIGN_PATH : SIGN_PATH, body, idempotent: false });
      return { certificatePem: readSignAnswer(remote, answer) };
    },

    async info(request: InfoRequest): Promise<InfoResult> {
      assertOpen();
      const label = effectiveLabel(request.label);
      const { remote, result } = await fetchInfo(label, request.profile || settings.profile);
      if (!certificates.has(label)) {
        try {
          certificates.set(label, Promise.resolve(parseCaCertificate(remote, result.certificate)));
        } catch {
          // An unparsable certificate is the remote's problem to report; info relays it as CFSSL does.
        }
      }
      // CFSSL trims the PEM in /info answers (doc 7.10).
      return { ...result, certificate: result.certificate.trim() };
    },

    async getCertificate(): Promise<SignerCertificate> {
      assertOpen();
      return await certificateFor(effectiveLabel(undefined));
    },

    async getCertificateForLabel(label: string): Promise<SignerCertificate> {
      assertOpen();
      return await certificateFor(effectiveLabel(label));
    },

    async health(): Promise<SignerHealth> {
      if (closed) return { ok: false, message: 'signer is closed' };
      const body = JSON.stringify({ label: effectiveLabel(undefined), profile: settings.profile });
      const probes = await group.probe({ path: INFO_PATH, body, idempotent: true, timeoutMs: Math.min(settings.timeoutMs, HEALTH_TIMEOUT_MS) });
      const problems: string[] = [];
      let healthy = 0;
      for (const probe of probes) {
        if (probe.answer === null) {
          problems.push(`${probe.remote} unreachable (${probe.reason ?? 'unknown'})`);
          continue;
        }
        try {
          readInfoAnswer(probe.remote, probe.answer);
          healthy += 1;
        } catch (error) {
          problems.push((error as Error).message);
        }
      }
      if (problems.length === 0) return { ok: true };
      const message = `${healthy} of ${probes.length} remotes healthy: ${problems.join('; ')}`;
      return { ok: healthy > 0, message };
    },

    remoteStates: () => group.states(),

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      certificates.clear();
      await group.close();
    },
  };
}
