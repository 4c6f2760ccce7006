/**
 * A {@link Signer} whose CA key lives on a PKCS#11 token.
 *
 * Concurrency: a FIFO semaphore admits `maxConcurrency` signatures at once; each holds one session
 * from a small pool (opened lazily, at most `maxConcurrency`), because a PKCS#11 session runs one
 * operation at a time. Logging in once is enough: login state belongs to the application and the
 * token, and every session of the process shares it (PKCS#11 v2.40 §5.6 "C_Login").
 *
 * Faults: a signature that fails because the session, the login or the library state was lost
 * (see `isReconnectable`) retires the pool, reconnects (find the token again, open, log in, find
 * the key) and is retried once. When that fails too the signer is *down*: calls fail fast with a
 * 2500 error and `health()` reports the reason, until a reconnection attempt succeeds. Attempts
 * happen on the next call or health probe after an exponential back-off (250 ms doubling to 30 s),
 * so a missing HSM is not hammered. A PIN failure while reconnecting is *not* retried: each
 * attempt would burn one PIN try and lock the token; the signer stays down until restarted.
 *
 * Besides the log, transitions are reported to the host (`context.reportEvent`, counted in
 * `/metrics`): `session_recovered` (sessions reopened, no outage), `backend_down` (up → down or
 * disabled) and `backend_recovered` (down → up).
 */
import { constants, randomBytes, verify as verifySignature } from 'node:crypto';
import { readFile } from 'node:fs/promises';

import { KeyType } from 'graphene-pk11';
import type { PrivateKey, Session, Slot } from 'graphene-pk11';

import type { SignatureAlgorithm, Signer, SignerCertificate, SignerContext, SignerEvent, SignerHealth, SignerLogger } from '@certsmith/signer-api';
import { SignerUnavailableError, signatureHash } from '@certsmith/signer-api';
import type { Certificate } from '@certsmith/x509-core';
import {
  CertsmithError,
  ErrorCode,
  KeyMismatchError,
  UnsupportedKeyAlgorithmError,
  certificateToPem,
  isCodedError,
  parseCertificate,
  parseCertificates,
  publicKeyObject,
} from '@certsmith/x509-core';

import { algorithmsForKey } from './mechanisms.js';
import { acquireModule } from './module-registry.js';
import type { ModuleLease } from './module-registry.js';
import type { Pkcs11SignerOptions } from './options.js';
import { resolvePin } from './options.js';
import { PLUGIN_NAME, SessionLostError, TokenLookupError, ckrName, isPinFailure, isReconnectable, optionError, reasonSuffix, unavailableError } from './pkcs11-errors.js';
import { describeKey, describeToken, findCertificateDer, findPrivateKey, findTokenSlot, login, openSession, tokenMechanisms } from './token-selector.js';
import type { KeySelector, TokenSelector } from './token-selector.js';
import { Semaphore } from './semaphore.js';
import { signOnToken } from './token-signing.js';

/** A PKCS#11 signer: the contract plus what operators and tests want to know about it. */
export interface Pkcs11Signer extends Signer {
  /** The parsed CA certificate. */
  readonly certificate: Certificate;
  /** How messages name the token (`labelled "ca"`). */
  readonly tokenDescription: string;
  /** Signatures allowed in flight at once. */
  readonly maxConcurrency: number;
  sign(tbs: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array>;
  health(): Promise<SignerHealth>;
}

/** First delay before reconnecting to a token that is down; doubles per failed attempt. */
export const INITIAL_BACKOFF_MS = 250;
/** Longest delay between reconnection attempts. */
export const MAX_BACKOFF_MS = 30_000;

/** Session states in which the user is logged in: CKS_RO_USER_FUNCTIONS (1), CKS_RW_USER_FUNCTIONS (3); pkcs11js has no CKS_ constants. */
const USER_SESSION_STATES: ReadonlySet<number> = new Set([1, 3]);

function closeQuietly(session: Session): void {
  try {
    session.close();
  } catch {
    // The session is already gone (closed underneath, library finalised): nothing to release.
  }
}

/**
 * A slot, the key found on it and a pool of sessions, valid for one library initialisation. The
 * first session is the *anchor*: it stays open so the key handle and the login stay valid (some
 * libraries, SoftHSM among them, drop token object handles when an application's last session on
 * a slot closes).
 */
class Connection {
  private idle: Session[];
  private retired = false;

  constructor(
    readonly slot: Slot,
    readonly key: PrivateKey,
    anchor: Session,
  ) {
    this.idle = [anchor];
  }

  /** A free session (opening one when the pool is empty; the semaphore bounds how many exist). */
  take(): Session {
    return this.idle.pop() ?? openSession(this.slot);
  }

  /** Return a session to the pool, or close it when the connection was retired meanwhile. */
  give(session: Session): void {
    if (this.retired) closeQuietly(session);
    else this.idle.push(session);
  }

  /** An idle session to probe, left in the pool (probing is synchronous). */
  peek(): Session | undefined {
    return this.idle[this.idle.length - 1];
  }

  /** Close idle sessions now and in-use ones when they come back. Idempotent. */
  retire(): void {
    this.retired = true;
    for (const session of this.idle.splice(0)) closeQuietly(session);
  }
}

type State =
  | { kind: 'up' }
  | { kind: 'down'; detail: string; delayMs: number; nextAttemptAt: number }
  | { kind: 'failed'; detail: string }
  | { kind: 'closed' };

/** What a signer needs to (re)connect; the PIN stays in this closure-held object, never on the signer. */
interface ConnectParameters {
  lease: ModuleLease;
  tokenSelector: TokenSelector;
  keySelector: KeySelector;
  pin: string;
  tokenDescription: string;
}

/** Find the token, open the anchor session, log in, find the key. Synchronous: PKCS#11 lookups are. */
function connect(parameters: ConnectParameters): Connection {
  const slot = findTokenSlot(parameters.lease.module, parameters.tokenSelector);
  const session = openSession(slot);
  try {
    login(session, parameters.pin);
    const key = findPrivateKey(session, parameters.keySelector, parameters.tokenDescription);
    return new Connection(slot, key, session);
  } catch (error) {
    closeQuietly(session);
    throw error;
  }
}

/**
 * {@link connect}, reinitialising the library once when it was finalised underneath us or the
 * token is not listed: most libraries only enumerate tokens in `C_Initialize`, so a token that
 * came back is invisible until then.
 */
async function connectWithReset(parameters: ConnectParameters): Promise<Connection> {
  const generation = parameters.lease.generation;
  try {
    return connect(parameters);
  } catch (error) {
    const tokenMissing = error instanceof TokenLookupError && error.tokenMissing;
    if (!tokenMissing && !isReconnectable(error)) throw error;
    await parameters.lease.reinitialize(generation);
    return connect(parameters);
  }
}

class Pkcs11SignerImpl implements Pkcs11Signer {
  readonly algorithms: readonly SignatureAlgorithm[];
  readonly certificate: Certificate;
  readonly tokenDescription: string;
  readonly maxConcurrency: number;

  private readonly caCertificate: SignerCertificate;
  private readonly parameters: ConnectParameters;
  private readonly logger: SignerLogger;
  private readonly reportEvent: (event: SignerEvent) => void;
  private connection: Connection | null;
  private state: State = { kind: 'up' };
  private reconnecting: Promise<Connection> | null = null;
  private closing: Promise<void> | null = null;
  private readonly semaphore: Semaphore;

  constructor(init: {
    parameters: ConnectParameters;
    connection: Connection;
    certificate: Certificate;
    algorithms: readonly SignatureAlgorithm[];
    maxConcurrency: number;
    logger: SignerLogger;
    reportEvent: (event: SignerEvent) => void;
  }) {
    this.parameters = init.parameters;
    this.connection = init.connection;
    this.certificate = init.certificate;
    this.algorithms = Object.freeze([...init.algorithms]);
    this.maxConcurrency = init.maxConcurrency;
    this.semaphore = new Semaphore(init.maxConcurrency);
    this.logger = init.logger;
    this.reportEvent = init.reportEvent;
    this.tokenDescription = init.parameters.tokenDescription;
    this.caCertificate = Object.freeze({ der: init.certificate.der, pem: certificateToPem(init.certificate.der) });
  }

  async getCertificate(): Promise<SignerCertificate> {
    return this.caCertificate;
  }

  async sign(tbs: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array> {
    if (this.state.kind === 'closed') throw new SignerUnavailableError('signer is closed');
    if (!this.algorithms.includes(algorithm)) {
      throw new SignerUnavailableError(`signer cannot sign with ${algorithm}; it offers ${this.algorithms.join(', ')}`);
    }
    await this.semaphore.acquire();
    try {
      let connection = await this.usableConnection();
      try {
        return await this.signWith(connection, algorithm, tbs);
      } catch (error) {
        if (!isReconnectable(error)) throw unavailableError(this.tokenDescription, `signing failed${reasonSuffix(error)}`, error);
        this.logger.warn('PKCS#11 session lost, reconnecting', { token: this.tokenDescription, reason: ckrName(error) });
        connection = await this.reconnect(connection);
        try {
          return await this.signWith(connection, algorithm, tbs);
        } catch (retryError) {
          if (isReconnectable(retryError)) this.markDown(retryError, connection);
          throw unavailableError(this.tokenDescription, `signing failed after reconnecting${reasonSuffix(retryError)}`, retryError);
        }
      }
    } finally {
      this.semaphore.release();
    }
  }

  async health(): Promise<SignerHealth> {
    if (this.state.kind === 'closed') return { ok: false, message: 'signer is closed' };
    if (this.reconnecting) await this.reconnecting.catch(() => undefined);
    const state = this.state as State;
    if (state.kind === 'failed') return { ok: false, message: state.detail };
    if (state.kind === 'down') {
      if (Date.now() < state.nextAttemptAt) return { ok: false, message: `token ${this.tokenDescription}: ${this.downDetail(state)}` };
      try {
        await this.reconnect(null);
        return { ok: true };
      } catch (error) {
        return { ok: false, message: error instanceof Error ? error.message : String(error) };
      }
    }
    const connection = this.connection;
    if (connection === null) return { ok: false, message: 'no connection' };
    try {
      this.probe(connection);
      return { ok: true };
    } catch (error) {
      this.logger.warn('PKCS#11 health probe failed, reconnecting', { token: this.tokenDescription, reason: ckrName(error) });
      try {
        await this.reconnect(connection);
        return { ok: true };
      } catch (reconnectError) {
        return { ok: false, message: reconnectError instanceof Error ? reconnectError.message : String(reconnectError) };
      }
    }
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.state = { kind: 'closed' };
    this.closing = (async () => {
      // Take every permit: signatures in flight finish first, queued ones then fail with 2500.
      for (let permit = 0; permit < this.maxConcurrency; permit++) await this.semaphore.acquire();
      if (this.reconnecting) await this.reconnecting.catch(() => undefined);
      this.connection?.retire();
      this.connection = null;
      this.parameters.lease.release();
      this.parameters.pin = '';
    })();
    return this.closing;
  }

  private async signWith(connection: Connection, algorithm: SignatureAlgorithm, tbs: Uint8Array): Promise<Uint8Array> {
    const session = connection.take();
    try {
      return await signOnToken(this.parameters.lease, session, connection.key, algorithm, tbs);
    } catch (error) {
      if (isReconnectable(error)) throw error;
      // A generic failure may hide a session that died during the call: ask the session itself.
      try {
        this.parameters.lease.module.lib.C_GetSessionInfo(session.handle);
      } catch (probeError) {
        if (isReconnectable(probeError)) throw new SessionLostError(ckrName(probeError) as string, error);
      }
      throw error;
    } finally {
      connection.give(session);
    }
  }

  /** Cheap liveness check: token info answers and an idle session is still logged in. */
  private probe(connection: Connection): void {
    const lib = this.parameters.lease.module.lib;
    lib.C_GetTokenInfo(connection.slot.handle);
    const session = connection.peek();
    if (session !== undefined) {
      const { state } = lib.C_GetSessionInfo(session.handle);
      if (!USER_SESSION_STATES.has(state)) throw new Error('CKR_USER_NOT_LOGGED_IN');
    }
  }

  /** The connection to sign with: the current one, a reconnection when one is due, or a 2500. */
  private async usableConnection(): Promise<Connection> {
    const state = this.state;
    if (state.kind === 'closed') throw new SignerUnavailableError('signer is closed');
    if (state.kind === 'failed') throw unavailableError(this.tokenDescription, state.detail);
    if (this.reconnecting) return this.reconnecting;
    if (state.kind === 'up' && this.connection !== null) return this.connection;
    if (state.kind === 'down' && Date.now() < state.nextAttemptAt) throw unavailableError(this.tokenDescription, this.downDetail(state));
    return this.reconnect(null);
  }

  /**
   * Replace `stale` by a fresh connection (single flight: concurrent callers share one attempt,
   * and a caller whose connection was already replaced gets the new one).
   */
  private reconnect(stale: Connection | null): Promise<Connection> {
    if (this.reconnecting) return this.reconnecting;
    if (stale !== null && this.connection !== null && this.connection !== stale && this.state.kind === 'up') return Promise.resolve(this.connection);
    const attempt = this.runReconnect();
    this.reconnecting = attempt;
    attempt.then(
      () => (this.reconnecting = null),
      () => (this.reconnecting = null),
    );
    return attempt;
  }

  private async runReconnect(): Promise<Connection> {
    const wasDown = this.state.kind === 'down';
    this.connection?.retire();
    this.connection = null;
    try {
      const connection = await connectWithReset(this.parameters);
      if (this.state.kind === 'closed') {
        connection.retire();
        throw new SignerUnavailableError('signer is closed');
      }
      this.connection = connection;
      this.state = { kind: 'up' };
      this.logger.info(wasDown ? 'PKCS#11 token is back, signer recovered' : 'PKCS#11 session reopened', { token: this.tokenDescription });
      this.reportEvent(wasDown ? 'backend_recovered' : 'session_recovered');
      return connection;
    } catch (error) {
      if (error instanceof SignerUnavailableError) throw error;
      const pinError = error instanceof TokenLookupError && error.option === 'pin' ? error.cause : isPinFailure(error) ? error : null;
      if (pinError !== null) {
        const detail = `login failed${reasonSuffix(pinError)}; not retrying (each attempt uses up a PIN try): fix options.pin and restart`;
        const wasUp = this.state.kind === 'up';
        this.state = { kind: 'failed', detail };
        this.logger.error('PKCS#11 login failed, signer disabled', { token: this.tokenDescription, reason: ckrName(pinError) });
        if (wasUp) this.reportEvent('backend_down');
        throw unavailableError(this.tokenDescription, detail, error);
      }
      this.markDown(error, null);
      throw unavailableError(this.tokenDescription, this.describeFault(error), error);
    }
  }

  /** Enter (or stay in) the down state with the next back-off step. `connection` guards against stale reports. */
  private markDown(error: unknown, connection: Connection | null): void {
    if (connection !== null && this.connection !== connection) return;
    if (this.state.kind === 'closed' || this.state.kind === 'failed') return;
    this.connection?.retire();
    this.connection = null;
    const previous = this.state.kind === 'down' ? this.state.delayMs : 0;
    const delayMs = previous === 0 ? INITIAL_BACKOFF_MS : Math.min(previous * 2, MAX_BACKOFF_MS);
    const detail = this.describeFault(error);
    const wasUp = this.state.kind === 'up';
    this.state = { kind: 'down', detail, delayMs, nextAttemptAt: Date.now() + delayMs };
    this.logger.error('PKCS#11 token unavailable', { token: this.tokenDescription, reason: ckrName(error), detail, retryInMs: delayMs });
    // A transition only: failed attempts while already down are back-off steps, not new outages.
    if (wasUp) this.reportEvent('backend_down');
  }

  private describeFault(error: unknown): string {
    if (error instanceof TokenLookupError) return error.message;
    const name = ckrName(error);
    return name ? `token not usable (${name})` : `token not usable (${error instanceof Error ? error.name : 'unknown error'})`;
  }

  private downDetail(state: Extract<State, { kind: 'down' }>): string {
    return `${state.detail}; next reconnection attempt in ${Math.max(0, state.nextAttemptAt - Date.now())} ms`;
  }
}

/** The CA certificate from `options.cert` (a PEM file) or, when absent, from the token. */
async function loadCertificate(options: Pkcs11SignerOptions, context: SignerContext, session: Session, key: PrivateKey, tokenDescription: string): Promise<Certificate> {
  if (options.cert !== undefined) {
    const path = context.resolvePath(options.cert);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? 'read error';
      throw new CertsmithError(ErrorCode.CertificateReadFailed, `signer plugin ${PLUGIN_NAME}: options.cert: cannot read ${path}: ${code}`, { cause });
    }
    const certificates = parseCertificates(text);
    if (certificates.length !== 1) {
      throw new CertsmithError(ErrorCode.CertificateParseFailed, `signer plugin ${PLUGIN_NAME}: options.cert: ${path} must hold exactly one certificate, found ${certificates.length}`);
    }
    return certificates[0] as Certificate;
  }
  const keyId = key.getAttribute({ id: null }).id as Buffer | null;
  const der = findCertificateDer(session, options, keyId);
  if (der === null) {
    throw new CertsmithError(
      ErrorCode.CertificateReadFailed,
      `signer plugin ${PLUGIN_NAME}: options.cert: not set, and token ${tokenDescription} holds no certificate object ${describeKey(options)} or with the key's CKA_ID; set options.cert or store the certificate with "certsmith hsm initca"`,
    );
  }
  return parseCertificate(new Uint8Array(der));
}

/** Sign a random challenge with the token key and verify it with the certificate's public key. */
async function assertKeyMatchesCertificate(
  lease: ModuleLease,
  session: Session,
  key: PrivateKey,
  certificate: Certificate,
  algorithm: SignatureAlgorithm,
  describe: string,
): Promise<void> {
  const keyType = key.getAttribute({ keyType: null }).keyType as number;
  const expected = certificate.publicKey.algorithm === 'RSA' ? KeyType.RSA : certificate.publicKey.algorithm === 'ECDSA' ? KeyType.EC : -1;
  const mismatch = new KeyMismatchError(`signer plugin ${PLUGIN_NAME}: options.cert: the certificate's public key does not match the private key ${describe}`);
  if (keyType !== expected) throw mismatch;
  const challenge = randomBytes(32);
  const signature = await signOnToken(lease, session, key, algorithm, challenge);
  const publicKey = publicKeyObject(certificate.publicKey);
  const hash = signatureHash(algorithm);
  const verifyKey = algorithm.startsWith('RSA-PSS') ? { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } : publicKey;
  if (!verifySignature(hash, challenge, verifyKey, signature)) throw mismatch;
}

/** Map a failure while creating the signer to a coded error naming the option. */
function creationError(error: unknown, tokenOption: string): Error {
  if (error instanceof TokenLookupError) return optionError(error.option, error.message, error);
  if (isCodedError(error)) return error;
  const name = ckrName(error);
  if (name) return optionError(tokenOption, `token not usable (${name})`, error);
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Create a signer from validated options: resolve the PIN, borrow the module, find the token, log
 * in, find the key, load the certificate, check that key and certificate belong together (one
 * probe signature) and choose the algorithms. Errors: 2000 naming the option (module, token, key,
 * PIN, maxConcurrency…), 2001 (PIN reference unreadable), 1001/1002/1003 (certificate), 2200
 * (key type without a mechanism), 2300 (key and certificate do not match).
 */
export async function createPkcs11Signer(options: Pkcs11SignerOptions, context: SignerContext): Promise<Pkcs11Signer> {
  const pin = await resolvePin(options.pin, context);
  const tokenSelector: TokenSelector = {};
  if (options.tokenLabel !== undefined) tokenSelector.tokenLabel = options.tokenLabel;
  if (options.slot !== undefined) tokenSelector.slot = options.slot;
  if (options.tokenSerial !== undefined) tokenSelector.tokenSerial = options.tokenSerial;
  const keySelector: KeySelector = {};
  if (options.keyLabel !== undefined) keySelector.keyLabel = options.keyLabel;
  if (options.keyId !== undefined) keySelector.keyId = options.keyId;
  const tokenDescription = describeToken(tokenSelector);
  const tokenOption = tokenSelector.tokenLabel !== undefined ? 'tokenLabel' : tokenSelector.tokenSerial !== undefined ? 'tokenSerial' : 'slot';
  const maxConcurrency = options.maxConcurrency ?? 1;

  const lease = acquireModule(context.resolvePath(options.module));
  const parameters: ConnectParameters = { lease, tokenSelector, keySelector, pin, tokenDescription };
  let connection: Connection | null = null;
  try {
    connection = connect(parameters);
    const session = connection.take();
    try {
      const certificate = await loadCertificate(options, context, session, connection.key, tokenDescription);
      const algorithms = algorithmsForKey(publicKeyObject(certificate.publicKey), tokenMechanisms(lease.module, connection.slot));
      if (algorithms.length === 0) {
        throw new UnsupportedKeyAlgorithmError(
          `signer plugin ${PLUGIN_NAME}: the token has no mechanism for the certificate's ${certificate.publicKey.algorithm} key (RSA needs CKM_RSA_PKCS, EC needs CKM_ECDSA)`,
        );
      }
      await assertKeyMatchesCertificate(lease, session, connection.key, certificate, algorithms[0] as SignatureAlgorithm, `${describeKey(keySelector)} on token ${tokenDescription}`);
      if (!certificate.basicConstraints?.ca) context.logger.warn('CA certificate lacks basicConstraints CA:TRUE; issued certificates will not verify');
      context.logger.info('PKCS#11 signer ready', { module: lease.path, token: tokenDescription, key: describeKey(keySelector), algorithms, maxConcurrency });
      const reportEvent = (event: SignerEvent): void => context.reportEvent?.(event);
      return new Pkcs11SignerImpl({ parameters, connection, certificate, algorithms, maxConcurrency, logger: context.logger, reportEvent });
    } finally {
      connection.give(session);
    }
  } catch (error) {
    connection?.retire();
    lease.release();
    throw creationError(error, tokenOption);
  }
}
