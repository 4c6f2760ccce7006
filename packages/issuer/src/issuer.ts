/**
 * The issuing use case: CFSSL's newkey, newcert, sign, authsign and info (behaviour doc 3.1, 3.9,
 * 4.4, 4.5, 7.10) composed once — key and CSR generation, label routing, profile selection, the
 * signature (here, in a worker, or on a remote CA), digests, the record of the issued certificate
 * and the optional bundle — for every caller: the HTTP operations, the CLI (`gencert`, `sign`,
 * `genkey`) and the signer testkit. Pure library: no HTTP, no envelopes; failures are
 * CertsmithErrors with CFSSL codes.
 *
 * Where the work runs is the caller's to say, per call: the CPU-heavy steps (key generation, CSR
 * checks, and with `signatureSite: 'worker'` the whole certificate) are worker tasks, run by the
 * caller's task runner (a worker pool; by default this thread). The signer calls made here and the
 * record of the certificate happen on the calling thread.
 */
import type { InfoResult, SignRequest } from '@certsmith/signer-api';
import type { TaskDefinition } from '@certsmith/worker-pool';
import { BadRequestError, ErrorCode } from '@certsmith/x509-core';

import { authenticateSignRequest, peekAuthenticatedSignRequest } from './authenticated-sign-request.js';
import type { CertificateRequest, NewCertificateRequest, SignBody } from './certificate-request.js';
import { signOverridesOf } from './certificate-template.js';
import { csrFactsTask } from './csr-facts-task.js';
import { keyAndCsrTask } from './key-and-csr-task.js';
import { newcertInWorkerTask } from './newcert-in-worker-task.js';
import { countWorkerSignature, routeSignatureSite, selectRouteProfile, signHere, signRemotely } from './route-signing.js';
import type { RouteSignatureSite, SignatureSite, SignedCertificate } from './route-signing.js';
import { signInWorkerTask } from './sign-in-worker-task.js';
import type { SignerDirectory, SignerRoute } from './signer-directory.js';
import type { InfoRequest } from './signer-info.js';
import { signerInfo } from './signer-info.js';
import { withSignerTimeout } from './signer-timeout.js';
import type { Sums } from './sums.js';
import { computeSums } from './sums.js';

/** The 5300 message newcert adds when the request has no hosts (behaviour doc 3.1 step 9, exact text). */
export const NO_HOSTS_MESSAGE =
  'This certificate lacks a "hosts" field. This makes it unsuitable for\n' +
  'websites. For more information see the Baseline Requirements for the Issuance and Management\n' +
  'of Publicly-Trusted Certificates, v.1.1.6, from the CA/Browser Forum (https://cabforum.org);\n' +
  'specifically, section 10.2.3 ("Information Requirements").';

/** The 5300 message newcert/sign add when `bundle` is requested but no bundler exists (behaviour doc 3.1 step 8). */
export const NO_BUNDLER_MESSAGE = 'This request requires a bundler, but one is not initialized for the API server.';

/** A `{code, message}` item for the envelope's `messages`. */
export interface ResultMessage {
  code: number;
  message: string;
}

/** The tasks newkey runs (register them with the pool that runs a caller's tasks). */
export const NEWKEY_TASKS: readonly TaskDefinition[] = Object.freeze([keyAndCsrTask]);
/** The tasks newcert runs. */
export const NEWCERT_TASKS: readonly TaskDefinition[] = Object.freeze([keyAndCsrTask, newcertInWorkerTask]);
/** The tasks sign and authsign run. */
export const SIGN_TASKS: readonly TaskDefinition[] = Object.freeze([csrFactsTask, signInWorkerTask]);

/** A certificate this instance has just signed, as the record port receives it. */
export interface IssuedCertificateRecord {
  /** The configured label of the signer that signed it (`default` for requests without a label). */
  readonly label: string;
  /** The profile name as requested (`''`: the default profile). */
  readonly profile: string;
  readonly certificateDer: Uint8Array;
  /** PEM with trailing newline, exactly as returned to the caller. */
  readonly certificatePem: string;
  /**
   * What the issuing worker's hook gave for this certificate (`IssuingWorkerSetup.issuedHook`);
   * absent when the certificate was signed elsewhere (the calling thread: HSMs, the CLI) or the
   * workers have no hook. The record port must then do that work itself.
   */
  readonly attachment?: unknown;
}

/**
 * Records an issued certificate (a certificate store). Called on the calling thread once per
 * certificate this instance signed — here or in a worker — after the signature and before the
 * certificate is returned or bundled; a rejection fails the request with that error (a store that
 * is down: 503), so no certificate leaves without its record. Certificates a remote CA signed are
 * recorded there, not here.
 */
export type RecordIssued = (certificate: IssuedCertificateRecord) => Promise<void>;

/** Options of {@link createIssuer}. */
export interface IssuerOptions {
  /** Signers by label. */
  signers: SignerDirectory;
  /**
   * Where signers that can be recreated per worker (entries with a `workerRecipe`: keys held in
   * memory, as `@certsmith/signer-local`) make their signatures:
   * - `'worker'`: in the worker task that builds the certificate, with that thread's own copy of
   *   the signer; a whole newcert (key, CSR, certificate, signature, digests) is then one task. Every
   *   thread that runs the issuer's tasks must hold the copies: give the pool {@link issuingWorkerInits}.
   * - `'here'` (default): the configured signer signs on the calling thread; tasks do the rest.
   *
   * Other signers (HSMs) always sign on the calling thread, remote signers on their remote CA.
   */
  signatureSite?: SignatureSite;
  /**
   * Longest the signer calls of one request made here may take before it fails with 2500
   * `signer "<label>" did not answer within N ms` (default `DEFAULT_SIGNER_TIMEOUT_MS`, 30 s).
   */
  signerTimeoutMs?: number;
  /** Where issued certificates are recorded (see {@link RecordIssued}); absent: not recorded. */
  recordIssued?: RecordIssued;
}

/**
 * Runs the issuer's tasks: an HTTP operation's context (`runTask`, on the server's pool), a
 * worker pool (`{ runTask: (task, input) => pool.run(task, input) }`), or by default this thread.
 */
export interface IssuingTaskRunner {
  runTask<TInput, TOutput>(task: TaskDefinition<TInput, TOutput>, input: TInput): Promise<TOutput>;
}

/** How one call runs: where its tasks run, how it bundles, whether the caller is authenticated. */
export interface IssueCall<TBundle = never> {
  /** Runs the call's tasks (default: this thread, no copies). */
  tasks?: IssuingTaskRunner;
  /**
   * The optimal bundle of an issued certificate, for requests with `bundle: true` (the bundler's
   * use case); a rejection fails the request as CFSSL does. Absent or null: this caller has no
   * bundler, and such requests get CFSSL's 5300 no-bundler message instead (behaviour doc 3.1 step 8).
   */
  bundle?: ((certificatePem: string) => Promise<TBundle>) | null;
  /**
   * True when the caller proved it may use profiles with an `auth_key`: authsign's checked token, or
   * a CLI that holds the configuration. Default false: such profiles answer 400 `authentication required`.
   */
  authenticated?: boolean;
}

/** newcert's input: the decoded request, plus the hosts that replace the CSR's in the certificate. */
export interface NewCertificateInput extends NewCertificateRequest {
  /** Hosts replacing the CSR's in the certificate (`gencert -hostname`); absent or null: the CSR's. */
  hosts?: string[] | null;
}

/** What newcert gives (behaviour doc 3.1). */
export interface NewCertificateOutcome<TBundle = never> {
  privateKeyPem: string;
  csrPem: string;
  certificatePem: string;
  certificateDer: Uint8Array;
  sums: { certificate: Sums; certificate_request: Sums };
  /** The bundle, when asked for and the call had a bundler. */
  bundle?: TBundle;
  /** Envelope messages: the 5300 no-bundler or no-hosts message. */
  messages: ResultMessage[];
}

/** What sign and authsign give. */
export interface SignOutcome<TBundle = never> {
  certificatePem: string;
  certificateDer: Uint8Array;
  /** The bundle, when asked for and the call had a bundler. */
  bundle?: TBundle;
  /** Envelope messages: the 5300 no-bundler message. */
  messages: ResultMessage[];
}

/** What newkey gives (behaviour doc 3.9). */
export interface NewKeyOutcome {
  privateKeyPem: string;
  csrPem: string;
  sums: { certificate_request: Sums };
}

/** The issuing use case over one signer directory (see {@link createIssuer}). */
export interface Issuer {
  /** The signers by label this issuer routes to. */
  readonly signers: SignerDirectory;
  /**
   * newcert: key and CSR for `input.request`, signed by the signer of `input.label` under
   * `input.profile`, with digests. Errors: 5200 unknown label, 5400 unknown profile and 400
   * `authentication required` (before any key is made), 2400 key request, 9300 subject or
   * extensions, 5300/5500/5100 policy, 2500 signer.
   */
  newCertificate<TBundle = never>(input: NewCertificateInput, call?: IssueCall<TBundle>): Promise<NewCertificateOutcome<TBundle>>;
  /**
   * sign: a client's CSR signed by the signer of `request.label` under `request.profile`, with the
   * request's overrides (hosts, subject, serial, extensions, validity). Errors as newcert, plus the
   * CSR's (9002 decode, 9003 parse, 9300 not a CSR or a bad self-signature).
   */
  signCertificate<TBundle = never>(request: SignBody, call?: IssueCall<TBundle>): Promise<SignOutcome<TBundle>>;
  /**
   * authsign: decode an `auth.AuthenticatedRequest` body, check its token with the keys of the
   * label it names (a key of one label never signs for another, CFSSL issue #950), then sign as
   * {@link Issuer.signCertificate} does for an authenticated caller. Errors in CFSSL's order: 400
   * Go JSON text, `Unable to parse authenticated sign request`, `no authentication provider`,
   * `invalid token`, `missing parameter 'certificate_request'`; 5400 unknown profile.
   */
  authsign<TBundle = never>(body: unknown, call?: Omit<IssueCall<TBundle>, 'authenticated'>): Promise<SignOutcome<TBundle>>;
  /** info: the CA certificate of the signer of `label` and the `usages`/`expiry` of `profile`. */
  info(request: InfoRequest): Promise<InfoResult>;
}

/** Runs tasks on this thread, as they are (no copies): the default of a call. */
const THIS_THREAD: IssuingTaskRunner = {
  async runTask<TInput, TOutput>(task: TaskDefinition<TInput, TOutput>, input: TInput): Promise<TOutput> {
    return task.run(input);
  },
};

/**
 * newkey: a key and a CSR for `request` with the CSR's digests, in the `issue.key-and-csr` task.
 * Errors: 2400 key request, 9300 subject or extensions.
 */
export async function newKey(request: CertificateRequest, call: Pick<IssueCall, 'tasks'> = {}): Promise<NewKeyOutcome> {
  const generated = await (call.tasks ?? THIS_THREAD).runTask(keyAndCsrTask, { request, withFacts: false });
  return { privateKeyPem: generated.privateKeyPem, csrPem: generated.csrPem, sums: { certificate_request: generated.csrSums } };
}

/** Build the issuing use case over `options.signers`. */
export function createIssuer(options: IssuerOptions): Issuer {
  const { signers, signerTimeoutMs, recordIssued } = options;
  const configuredSite = options.signatureSite ?? 'here';

  /**
   * The record step: after the signature, before the certificate goes anywhere. A certificate is
   * recorded where it is signed: a route whose signature site is `'remote'` (a signer with only the
   * `signRequest` capability, e.g. a forwarding `@certsmith/signer-multiroot`) gets back a certificate
   * its CA has already recorded, and a second row here would collide when both share a database.
   */
  const record = async (route: SignerRoute, site: RouteSignatureSite, profile: string | undefined, certificate: SignedCertificate & { attachment?: unknown }): Promise<void> => {
    if (recordIssued === undefined || site === 'remote') return;
    const { certificateDer, certificatePem, attachment } = certificate;
    await recordIssued({ label: route.label, profile: profile ?? '', certificateDer, certificatePem, ...(attachment === undefined ? {} : { attachment }) });
  };

  const sign = async <TBundle>(body: SignBody, route: SignerRoute, call: IssueCall<TBundle>): Promise<SignOutcome<TBundle>> => {
    const site = routeSignatureSite(route, configuredSite);
    const profile = selectRouteProfile(route, site, body.profile, call.authenticated === true);
    const tasks = call.tasks ?? THIS_THREAD;
    const { bundle: wantsBundle, ...request } = body;
    const signRequest: SignRequest = request;
    let signed: SignedCertificate & { attachment?: unknown };
    if (site === 'worker') {
      // CSR check, certificate and signature in one task, with the worker's copy of the signer.
      signed = await countWorkerSignature(route, () => tasks.runTask(signInWorkerTask, { label: route.label, request: signRequest, profile: body.profile ?? '' }));
    } else if (site === 'here') {
      // The CSR's signature check is CPU work for a task; the signature is made here.
      const facts = await tasks.runTask(csrFactsTask, { csrPem: signRequest.certificate_request });
      signed = await signHere(route, profile!, facts, signOverridesOf(signRequest), signerTimeoutMs);
    } else {
      // The remote CA parses the CSR and applies its own policy.
      signed = await signRemotely(route, signRequest, signerTimeoutMs);
    }
    await record(route, site, body.profile, signed);
    const outcome: SignOutcome<TBundle> = { certificatePem: signed.certificatePem, certificateDer: signed.certificateDer, messages: [] };
    if (wantsBundle) {
      if (call.bundle) outcome.bundle = await call.bundle(signed.certificatePem);
      else outcome.messages.push({ code: ErrorCode.PolicyInvalidRequest, message: NO_BUNDLER_MESSAGE });
    }
    return outcome;
  };

  return {
    signers,

    async newCertificate<TBundle>(input: NewCertificateInput, call: IssueCall<TBundle> = {}): Promise<NewCertificateOutcome<TBundle>> {
      const route = signers.route(input.label);
      const site = routeSignatureSite(route, configuredSite);
      // Label, profile and authentication fail before any key is generated.
      const profile = selectRouteProfile(route, site, input.profile, call.authenticated === true);
      const tasks = call.tasks ?? THIS_THREAD;
      const hosts = input.hosts ?? null;
      let outcome: NewCertificateOutcome<TBundle>;
      if (site === 'worker') {
        const issued = await countWorkerSignature(route, () =>
          tasks.runTask(newcertInWorkerTask, { label: route.label, request: input.request, profile: input.profile ?? '', hosts }),
        );
        await record(route, site, input.profile, issued);
        outcome = {
          privateKeyPem: issued.privateKeyPem,
          csrPem: issued.csrPem,
          certificatePem: issued.certificatePem,
          certificateDer: issued.certificateDer,
          sums: { certificate: issued.certificateSums, certificate_request: issued.csrSums },
          messages: [],
        };
      } else {
        const generated = await tasks.runTask(keyAndCsrTask, { request: input.request, withFacts: site === 'here' });
        let signed: SignedCertificate;
        if (site === 'here') {
          signed = await signHere(route, profile!, generated.facts!, hosts === null ? {} : { hosts }, signerTimeoutMs);
        } else {
          const forwarded: SignRequest = { certificate_request: generated.csrPem, profile: input.profile ?? '' };
          if (hosts !== null) forwarded.hosts = hosts;
          signed = await signRemotely(route, forwarded, signerTimeoutMs);
        }
        await record(route, site, input.profile, signed);
        outcome = {
          privateKeyPem: generated.privateKeyPem,
          csrPem: generated.csrPem,
          certificatePem: signed.certificatePem,
          certificateDer: signed.certificateDer,
          sums: { certificate: computeSums(signed.certificateDer), certificate_request: generated.csrSums },
          messages: [],
        };
      }
      if (input.bundle) {
        if (!call.bundle) {
          // CFSSL returns at once after the no-bundler message: never a second (no-hosts) message.
          outcome.messages.push({ code: ErrorCode.PolicyInvalidRequest, message: NO_BUNDLER_MESSAGE });
          return outcome;
        }
        outcome.bundle = await call.bundle(outcome.certificatePem);
      }
      if (hosts === null && (input.request.hosts ?? []).length === 0) outcome.messages.push({ code: ErrorCode.PolicyInvalidRequest, message: NO_HOSTS_MESSAGE });
      return outcome;
    },

    async signCertificate<TBundle>(request: SignBody, call: IssueCall<TBundle> = {}): Promise<SignOutcome<TBundle>> {
      return sign(request, signers.route(request.label), call);
    },

    async authsign<TBundle>(body: unknown, call: Omit<IssueCall<TBundle>, 'authenticated'> = {}): Promise<SignOutcome<TBundle>> {
      // The token must be checked with the keys of the label the request will be signed for.
      const route = signers.route(peekAuthenticatedSignRequest(body)?.label ?? '');
      const request = authenticateSignRequest(body, route.policy);
      const signing = signers.route(request.label);
      if (signing.label !== route.label || signing.forwardLabel !== route.forwardLabel) {
        // Only reachable if the first look at the label disagreed with the full decoding: never
        // sign for a label whose keys did not check the token.
        throw new BadRequestError('invalid token');
      }
      return sign(request, route, { ...call, authenticated: true });
    },

    async info(request: InfoRequest): Promise<InfoResult> {
      const route = signers.route(request.label);
      return withSignerTimeout(route.label, signerTimeoutMs, () => signerInfo(route.signer, route.policy, request.profile, route.forwardLabel));
    },
  };
}
