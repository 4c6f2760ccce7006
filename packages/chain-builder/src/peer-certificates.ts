/**
 * Remote mode: fetch the certificate chain a TLS server presents (CFSSL `BundleFromRemote`,
 * behaviour doc 2.10). A strict handshake (trust = the root pool, hostname checked) is tried first;
 * if it fails, an insecure retry fetches the chain anyway and the strict failure is reported as
 * `Failed rigid TLS handshake with <host>:<port>: <err>`. Dial failures are CFSSL's 6000.
 */
import { checkServerIdentity as checkIdentity, connect, type ConnectionOptions, type PeerCertificate, type TLSSocket } from 'node:tls';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { CertsmithError, ErrorCode, parseCertificate, type Certificate } from '@certsmith/x509-core';
import type { CertificatePool } from './certificate-pool.js';
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
 * refuse: the fetch fails with {@link DialError} 6000 carrying the thrown message, without a retry.
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

/** Split `host:port` / `[v6]:port` / bare host. */
export function splitHostPort(value: string, defaultPort: number): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return { host: bracketed[1] as string, port: bracketed[2] ? Number(bracketed[2]) : defaultPort };
  const colon = value.lastIndexOf(':');
  if (colon > 0 && value.indexOf(':') === colon && /^\d+$/.test(value.slice(colon + 1))) {
    return { host: value.slice(0, colon), port: Number(value.slice(colon + 1)) };
  }
  return { host: value, port: defaultPort };
}

const formatTarget = (host: string, port: number): string => (isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`);

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

/** Go-style dial error text for a connect-phase failure. */
function dialText(target: string, host: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${target}: connect: connection refused`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${host}: no such host`;
    case 'ECONNRESET':
      return `read tcp ${target}: read: connection reset by peer`;
    case 'EHOSTUNREACH':
      return `dial tcp ${target}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${target}: connect: network is unreachable`;
    default:
      return `dial tcp ${target}: ${error.message}`;
  }
}

function chainFromSocket(socket: TLSSocket): Certificate[] {
  const certs: Certificate[] = [];
  const seen = new Set<PeerCertificate>();
  let current: PeerCertificate | undefined = socket.getPeerCertificate(true);
  // Node links the presented chain through `issuerCertificate`; the self-issued end points to itself.
  while (current && current.raw && !seen.has(current)) {
    seen.add(current);
    certs.push(parseCertificate(new Uint8Array(current.raw)));
    const next: PeerCertificate | undefined = (current as PeerCertificate & { issuerCertificate?: PeerCertificate }).issuerCertificate;
    if (!next || next === current || next.fingerprint256 === current.fingerprint256) break;
    current = next;
  }
  // Node also links issuers it finds in its own CA store, which the server did not send. Servers
  // rarely send their root, so a self-issued tail is treated as added and dropped: the result is
  // the chain "as sent" that CFSSL bundles (doc 2.10).
  const last = certs[certs.length - 1];
  if (certs.length > 1 && last && Buffer.compare(Buffer.from(last.subject.der), Buffer.from(last.issuer.der)) === 0) {
    certs.pop();
  }
  return certs;
}

function attempt(
  host: string,
  port: number,
  serverName: string,
  strict: boolean,
  timeoutMs: number,
  trust: CertificatePool | undefined,
  addresses: readonly { address: string; family: number }[] | null,
): Promise<Attempt> {
  return new Promise((resolve, reject) => {
    const target = formatTarget(host, port);
    let connected = false;
    const tlsOptions: ConnectionOptions = { host, port, rejectUnauthorized: strict, ALPNProtocols: ['http/1.1'] };
    // SNI carries names only (RFC 6066 3); Go's strict handshake still verifies an IP "domain".
    if (isIP(serverName) === 0 && serverName !== '') tlsOptions.servername = serverName;
    if (strict && trust) tlsOptions.ca = trust.pemList();
    if (strict) tlsOptions.checkServerIdentity = (_name, cert) => checkIdentity(serverName, cert);
    else tlsOptions.checkServerIdentity = () => undefined;
    // Guarded dials connect only to the answers the guard accepted (no second DNS lookup).
    if (addresses !== null) tlsOptions.lookup = pinnedLookup(addresses);
    let socket: TLSSocket;
    try {
      socket = connect(tlsOptions);
    } catch (error) {
      reject(new HandshakeFailure(`dial tcp ${target}: ${(error as Error).message}`, 'dial', undefined));
      return;
    }
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new HandshakeFailure(connected ? 'tls: DialWithDialer timed out' : `dial tcp ${target}: i/o timeout`, connected ? 'tls' : 'dial', 'ETIMEDOUT'));
    }, timeoutMs);
    socket.once('connect', () => {
      connected = true;
    });
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      try {
        const certificates = chainFromSocket(socket);
        resolve({ certificates });
      } catch (error) {
        reject(new HandshakeFailure(`x509: ${(error as Error).message}`, 'tls', undefined));
      } finally {
        socket.end();
        socket.destroy();
      }
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      const phase = connected ? 'tls' : 'dial';
      reject(new HandshakeFailure(phase === 'dial' ? dialText(target, host, error) : error.message, phase, error.code));
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
]);

/** Translate a strict-handshake failure into Go's words, using the chain fetched by the retry. */
function strictFailureText(failure: HandshakeFailure, certs: readonly Certificate[], serverName: string, now: Date): string {
  const code = failure.nodeCode ?? '';
  if (UNKNOWN_AUTHORITY_CODES.has(code)) return GoX509.unknownAuthority(null).message;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    const bad = certs.find((c) => now > c.notAfter || now < c.notBefore);
    if (bad) return (now > bad.notAfter ? GoX509.expired(now, bad.notAfter) : GoX509.notYetValid(now, bad.notBefore)).message;
    return `x509: certificate has expired or is not yet valid: current time ${rfc3339(now)}`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' && certs[0]) {
    return verifyHostname(certs[0], serverName)?.message ?? failure.text;
  }
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
 * Resolve `host` once and ask the guard about every answer (or about the literal address). Returns
 * the answers to connect to, `null` for a literal address (no lookup happens).
 * @throws {DialError} 6000: the guard's refusal, or Go's `no such host` text
 */
async function resolveGuarded(host: string, target: string, timeoutMs: number, guard: PeerGuard): Promise<{ address: string; family: number }[] | null> {
  const ask = async (address: string): Promise<void> => {
    let verdict: boolean;
    try {
      verdict = await guard(target, address);
    } catch (error) {
      throw new DialError(error instanceof Error ? error.message : String(error), { cause: error });
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
    // Bounded like the unguarded dial, whose lookup runs under the attempt's timer.
    answers = await Promise.race([
      // An empty host dials this machine (Node's `net.connect` defaults to localhost, as Go's dialer).
      dnsLookup(host === '' ? 'localhost' : host, { all: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' })), timeoutMs);
      }),
    ]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
      throw new DialError(`dial tcp: lookup ${host}: i/o timeout`, { cause: error });
    }
    throw new DialError(dialText(target, host, error as NodeJS.ErrnoException), { cause: error });
  } finally {
    clearTimeout(timer);
  }
  if (answers.length === 0) throw new DialError(`dial tcp: lookup ${host}: no such host`);
  // Every answer must pass: a name that mixes public and private answers is refused outright.
  for (const answer of answers) await ask(answer.address);
  return answers;
}

/**
 * Fetch the server's certificate chain. SNI is `domain` (without port); the connection goes to
 * `ip` when given, else to `domain`.
 * @throws {DialError} 6000 when even the insecure attempt fails (Go-style dial text), or when
 * `guard` refuses an address (its message; no connection is made)
 */
export async function fetchPeerCertificates(options: FetchPeerCertificatesOptions): Promise<PeerCertificatesResult> {
  const { host: domainHost, port } = splitHostPort(options.domain, options.port ?? 443);
  const host = options.ip ? options.ip.replace(/^\[|\]$/g, '') : domainHost;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const target = formatTarget(host, port);
  const now = options.now ?? new Date();
  const addresses = options.guard ? await resolveGuarded(host, target, timeoutMs, options.guard) : null;
  try {
    const strict = await attempt(host, port, domainHost, true, timeoutMs, options.trust, addresses);
    return { certificates: strict.certificates, handshakeWarning: null, serverName: domainHost, target };
  } catch (strictError) {
    let insecure: Attempt;
    try {
      insecure = await attempt(host, port, domainHost, false, timeoutMs, options.trust, addresses);
    } catch (retryError) {
      const text = retryError instanceof HandshakeFailure ? retryError.text : String(retryError);
      throw new DialError(text, { cause: retryError });
    }
    const failure =
      strictError instanceof HandshakeFailure ? strictError : new HandshakeFailure(String(strictError), 'tls', undefined);
    const reason = strictFailureText(failure, insecure.certificates, domainHost, now);
    return {
      certificates: insecure.certificates,
      handshakeWarning: `Failed rigid TLS handshake with ${target}: ${reason}`,
      serverName: domainHost,
      target,
    };
  }
}
