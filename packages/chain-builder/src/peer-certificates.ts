/**
 * Remote mode: fetch the certificate chain a TLS server presents (CFSSL `BundleFromRemote`,
 * behaviour doc 2.10). A strict handshake (trust = the root pool, hostname checked) is tried first;
 * if it fails, an insecure retry fetches the chain anyway and the strict failure is reported as
 * `Failed rigid TLS handshake with <host>:<port>: <err>`. Dial failures are CFSSL's 6000, worded as
 * Go words them (`dial-errors.ts`).
 */
import type { X509Certificate } from 'node:crypto';
import { checkServerIdentity as checkIdentity, connect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { CertsmithError, ErrorCode, isCodedError, parseCertificate, type Certificate } from '@certsmith/x509-core';
import type { CertificatePool } from './certificate-pool.js';
import { describeDialFailure, goJoinHostPort, goSplitHostPort, parseDialTarget, type DialTarget } from './dial-errors.js';
import { GoX509, rfc3339 } from './go-errors.js';
import { verifyHostname } from './verify-hostname.js';

/** Options of {@link fetchPeerCertificates}. */
export interface FetchPeerCertificatesOptions {
  /** Server name: SNI and hostname to verify. May carry a port (`host:port`, `[v6]:port`). */
  domain: string;
  /** Connect to this address instead of resolving `domain`. */
  ip?: string;
  /** Port when `domain` has none. Default 443. */
  port?: number;
  /** Connect + handshake timeout per attempt. Default 5,000 ms (CFSSL's dialer timeout). */
  timeoutMs?: number;
  /** Roots for the strict handshake; default Node's bundled roots (Go's system roots). */
  trust?: CertificatePool;
  /**
   * Try the strict handshake first (CFSSL's bundler). `false`: only the unverified one, so a server
   * is dialled once and `handshakeWarning` is `null` (CFSSL's certinfo, `InsecureSkipVerify`).
   * Default true.
   */
  strict?: boolean;
  /** Clock for expiry texts. Default now. */
  now?: Date;
  /**
   * Asked about every address before connecting (see {@link PeerGuard}); e.g. `createNetworkGuard()`.
   * Default: connect anywhere (CFSSL).
   */
  guard?: PeerGuard;
}

/**
 * Decides whether the dial may go to `address` (`target` is `host:port` as dialled). Called once per
 * DNS answer (or with the literal `ip`/`domain`) before any connection; the checked answers are the
 * ones connected to, so a name cannot rebind between check and connect. Return false or throw to
 * refuse: the fetch fails with {@link DialError} 6000, without a retry, carrying the message of a
 * thrown coded error (e.g. `PrivateNetworkRefusedError`) or a generic `refused by guard` text.
 */
export type PeerGuard = (target: string, address: string) => boolean | Promise<boolean>;

/** What the server presented. */
export interface PeerCertificatesResult {
  /** The certificates as sent, leaf first. */
  certificates: Certificate[];
  /** The strict-handshake failure message (CFSSL appends it to `status.messages`), or `null`. */
  handshakeWarning: string | null;
  /** Host name used for SNI and verification (port removed). */
  serverName: string;
  /** `host:port` dialled. */
  target: string;
}

/** Dialling the server failed on both attempts: CFSSL 6000 with the dial error text. */
export class DialError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.DialFailed, message, options);
  }
}

/**
 * Split `host:port` / `[v6]:port` / bare host with Go's `SplitHostPort` (a value that does not
 * split is a bare host). The port is not checked here; see {@link parseDialTarget}.
 */
export function splitHostPort(value: string, defaultPort: number): { host: string; port: number } {
  const split = goSplitHostPort(value);
  if ('error' in split || !/^\d+$/.test(split.port)) return { host: value, port: defaultPort };
  return { host: split.host, port: Number(split.port) };
}

/** Most certificates taken from a server's chain (Go has no bound; a real chain has 2–4). */
const MAX_PEER_CERTIFICATES = 16;

interface Attempt {
  certificates: Certificate[];
}

class HandshakeFailure extends Error {
  constructor(
    readonly text: string,
    readonly phase: 'dial' | 'tls',
    readonly nodeCode: string | undefined,
  ) {
    super(text);
  }
}

/**
 * The chain as the server sent it, leaf first. `getPeerX509Certificate` links only the certificates
 * the server presented (the legacy `getPeerCertificate(true)` also appends an issuer found in the
 * client's CA store, which made a server that sends its root look as if it did not): CFSSL bundles
 * `PeerCertificates`, and `rebundled` compares the result with them (doc 2.5 step 8, 2.10).
 * @throws CertsmithError when a presented certificate does not parse
 */
function chainFromSocket(socket: TLSSocket): Certificate[] {
  const certs: Certificate[] = [];
  const seen = new Set<string>();
  let current: X509Certificate | undefined = socket.getPeerX509Certificate();
  while (current !== undefined && certs.length < MAX_PEER_CERTIFICATES && !seen.has(current.fingerprint256)) {
    seen.add(current.fingerprint256);
    certs.push(parseCertificate(new Uint8Array(current.raw)));
    current = current.issuerCertificate;
  }
  return certs;
}

/** The addresses of one dial, for Go-style texts. */
interface DialAddresses {
  /** `host:port` with the resolved address Go would print (the first answer), else the host. */
  target: string;
  host: string;
}

function attempt(
  dial: DialTarget,
  serverName: string,
  strict: boolean,
  timeoutMs: number,
  trust: CertificatePool | undefined,
  addresses: readonly { address: string; family: number }[] | null,
  where: DialAddresses,
): Promise<Attempt> {
  return new Promise((resolve, reject) => {
    let connected = false;
    let ends: { local: string; remote: string } | null = null;
    const failureText = (error: unknown): string => describeDialFailure(error, { ...where, ...(ends ?? {}) });
    const tlsOptions: ConnectionOptions = { host: dial.host, port: dial.port, rejectUnauthorized: strict, ALPNProtocols: ['http/1.1'] };
    // SNI carries names only (RFC 6066 3); Go's strict handshake still verifies an IP "domain".
    if (isIP(serverName) === 0 && serverName !== '') tlsOptions.servername = serverName;
    if (strict && trust) tlsOptions.ca = trust.pemList();
    if (strict) tlsOptions.checkServerIdentity = (_name, cert) => checkIdentity(serverName, cert);
    else tlsOptions.checkServerIdentity = () => undefined;
    // Connect only to the answers resolved (and, with a guard, checked) before: no second lookup.
    if (addresses !== null) tlsOptions.lookup = pinnedLookup(addresses);
    let socket: TLSSocket;
    try {
      socket = connect(tlsOptions);
    } catch (error) {
      reject(new HandshakeFailure(failureText(error), 'dial', undefined));
      return;
    }
    const timer = setTimeout(() => {
      socket.destroy();
      // Go's DialWithDialer: a connect that times out is `i/o timeout`; a handshake that does is
      // the context's deadline (go1.19, as CFSSL is built).
      reject(new HandshakeFailure(connected ? 'context deadline exceeded' : `dial tcp ${where.target}: i/o timeout`, connected ? 'tls' : 'dial', 'ETIMEDOUT'));
    }, timeoutMs);
    socket.once('connect', () => {
      connected = true;
      if (socket.localAddress !== undefined && socket.remoteAddress !== undefined) {
        ends = { local: goJoinHostPort(socket.localAddress, socket.localPort ?? 0), remote: goJoinHostPort(socket.remoteAddress, socket.remotePort ?? 0) };
      }
    });
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      try {
        resolve({ certificates: chainFromSocket(socket) });
      } catch {
        // Go: `tls: failed to parse certificate from server: x509: …`.
        reject(new HandshakeFailure('tls: failed to parse certificate from server: x509: malformed certificate', 'tls', undefined));
      } finally {
        socket.end();
        socket.destroy();
      }
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new HandshakeFailure(failureText(error), connected ? 'tls' : 'dial', error.code));
    });
  });
}

const UNKNOWN_AUTHORITY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REJECTED',
]);

/** Go's texts for the other verification failures OpenSSL reports by name. */
const VERIFY_FAILURE_TEXTS: Readonly<Record<string, string>> = {
  INVALID_CA: GoX509.notAuthorizedToSign().message,
  PATH_LENGTH_EXCEEDED: GoX509.tooManyIntermediates().message,
  INVALID_PURPOSE: 'x509: certificate specifies an incompatible key usage',
};

/**
 * Translate a strict-handshake failure into Go's words, using the chain fetched by the retry.
 * OpenSSL's verification codes become Go's `x509:` texts; anything else is already Go-worded.
 */
function strictFailureText(failure: HandshakeFailure, certs: readonly Certificate[], serverName: string, now: Date): string {
  const code = failure.nodeCode ?? '';
  if (UNKNOWN_AUTHORITY_CODES.has(code)) return GoX509.unknownAuthority(null).message;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    const bad = certs.find((c) => now > c.notAfter || now < c.notBefore);
    if (bad) return (now > bad.notAfter ? GoX509.expired(now, bad.notAfter) : GoX509.notYetValid(now, bad.notBefore)).message;
    return `x509: certificate has expired or is not yet valid: current time ${rfc3339(now)}`;
  }
  if ((code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') && certs[0]) {
    return verifyHostname(certs[0], serverName)?.message ?? GoX509.unknownAuthority(null).message;
  }
  const known = VERIFY_FAILURE_TEXTS[code];
  if (known !== undefined) return known;
  // Another OpenSSL verification code (upper-case name, no `ERR_` prefix): Go reports failing
  // chains as an unknown authority. Dial and TLS failures were worded when they happened.
  if (/^[A-Z0-9_]+$/.test(code) && !code.startsWith('E')) return GoX509.unknownAuthority(null).message;
  return failure.text;
}

/** A `net.connect` lookup that answers with fixed, already-checked addresses. */
function pinnedLookup(addresses: readonly { address: string; family: number }[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const first = addresses[0] as { address: string; family: number };
    if (options.all) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })));
    else callback(null, first.address, first.family);
  }) as unknown as LookupFunction;
}

/**
 * Resolve `host` once (bounded by the dial timeout, as Go's dialer bounds its lookup) and ask the
 * guard, when there is one, about every answer (or about the literal address). Returns the answers
 * to connect to, `null` for a literal address (no lookup happens).
 * @throws {DialError} 6000: the guard's refusal, or Go's lookup text (`no such host`)
 */
async function resolveAddresses(host: string, target: string, timeoutMs: number, guard: PeerGuard | undefined): Promise<{ address: string; family: number }[] | null> {
  const ask = async (address: string): Promise<void> => {
    if (guard === undefined) return;
    let verdict: boolean;
    try {
      verdict = await guard(target, address);
    } catch (error) {
      if (isCodedError(error)) throw new DialError(error.message, { cause: error });
      throw new DialError(`dial tcp ${goJoinHostPort(address, target.slice(target.lastIndexOf(':') + 1))}: connection refused by guard`, { cause: error });
    }
    if (!verdict) throw new DialError(`dial tcp ${target}: connection to ${address} refused by guard`);
  };
  if (isIP(host) !== 0) {
    await ask(host);
    return null;
  }
  let answers: { address: string; family: number }[];
  let timer: NodeJS.Timeout | undefined;
  try {
    answers = await Promise.race([
      // An empty host dials this machine (Node's `net.connect` defaults to localhost, as Go's dialer).
      dnsLookup(host === '' ? 'localhost' : host, { all: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('lookup timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
      }),
    ]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
      throw new DialError(`dial tcp: lookup ${host}: i/o timeout`, { cause: error });
    }
    throw new DialError(describeDialFailure(error, { target, host }), { cause: error });
  } finally {
    clearTimeout(timer);
  }
  if (answers.length === 0) throw new DialError(`dial tcp: lookup ${host}: no such host`);
  // Every answer must pass: a name that mixes public and private answers is refused outright.
  for (const answer of answers) await ask(answer.address);
  return answers;
}

/**
 * Fetch the server's certificate chain, as sent. SNI is the host of `domain`; the connection goes
 * to `ip` when given, else to that host. `domain` is `host`, `host:port` or `[v6]:port` (Go's
 * `SplitHostPort`; a value that does not split is a host); the port may be a number or one of Go's
 * built-in service names (`https`).
 * @throws {DialError} 6000 with Go's text when even the insecure attempt fails, when the address is
 * one Go's dialer refuses (`dial tcp: address 99999: invalid port`), or when `guard` refuses an
 * address (its message; no connection is made)
 */
export async function fetchPeerCertificates(options: FetchPeerCertificatesOptions): Promise<PeerCertificatesResult> {
  const parsed = parseDialTarget(options.domain, options.port ?? 443, options.ip || undefined);
  if ('error' in parsed) throw new DialError(parsed.error);
  const { target: dial, serverName } = parsed;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const target = goJoinHostPort(dial.host, dial.port);
  const now = options.now ?? new Date();
  const addresses = await resolveAddresses(dial.host, target, timeoutMs, options.guard);
  // Go's dial errors name the address dialled (`dial tcp 127.0.0.1:443: …`), not the name.
  const where: DialAddresses = { target: addresses?.[0] ? goJoinHostPort(addresses[0].address, dial.port) : target, host: dial.host };
  if (options.strict === false) {
    try {
      const insecure = await attempt(dial, serverName, false, timeoutMs, undefined, addresses, where);
      return { certificates: insecure.certificates, handshakeWarning: null, serverName, target };
    } catch (error) {
      throw new DialError(error instanceof HandshakeFailure ? error.text : describeDialFailure(error, where), { cause: error });
    }
  }
  try {
    const strict = await attempt(dial, serverName, true, timeoutMs, options.trust, addresses, where);
    return { certificates: strict.certificates, handshakeWarning: null, serverName, target };
  } catch (strictError) {
    let insecure: Attempt;
    try {
      insecure = await attempt(dial, serverName, false, timeoutMs, options.trust, addresses, where);
    } catch (retryError) {
      const text = retryError instanceof HandshakeFailure ? retryError.text : describeDialFailure(retryError, where);
      throw new DialError(text, { cause: retryError });
    }
    const failure = strictError instanceof HandshakeFailure ? strictError : new HandshakeFailure(describeDialFailure(strictError, where), 'tls', undefined);
    const reason = strictFailureText(failure, insecure.certificates, serverName, now);
    return {
      certificates: insecure.certificates,
      handshakeWarning: `Failed rigid TLS handshake with ${target}: ${reason}`,
      serverName,
      target,
    };
  }
}
