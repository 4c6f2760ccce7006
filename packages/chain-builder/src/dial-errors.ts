/**
 * Go's words for a failed dial, for the remote paths (bundle and certinfo by `domain`). CFSSL
 * clients see Go's `net` and `crypto/tls` error texts there (behaviour doc 2.10, 7.5), so every
 * failure Node, libuv or OpenSSL reports is translated into the text Go gives for the same
 * situation — never passed on (a Node message such as `Port should be >= 0 and < 65536…` or an
 * OpenSSL `error:0A00010B:SSL routines:…` line would reach the client otherwise).
 *
 * The texts were taken from `cfssl certinfo -domain` (Debian cfssl 1.2.0, go1.19.8) against
 * loopback servers that refuse, reset, close, answer HTTP, send a TLS alert or stay silent, and
 * from Go's `net/ipsock.go` (`SplitHostPort`), `net/port.go` (`parsePort`), `net/lookup.go`
 * (`services`) and `crypto/tls/alert.go`.
 */
import { getSystemErrorMap } from 'node:util';

/** A `host` and a numeric `port` to dial. */
export interface DialTarget {
  host: string;
  port: number;
}

/**
 * Go's `net.SplitHostPort`: `host:port`, `[v6]:port`; the error texts are Go's (`missing port in
 * address`, `too many colons in address`, `missing ']' in address`, `unexpected '[' in address`,
 * `unexpected ']' in address`).
 */
export function goSplitHostPort(hostport: string): { host: string; port: string } | { error: string } {
  const colon = hostport.lastIndexOf(':');
  if (colon < 0) return { error: 'missing port in address' };
  let host: string;
  let afterOpen = 0;
  let afterClose = 0;
  if (hostport.startsWith('[')) {
    const end = hostport.indexOf(']');
    if (end < 0) return { error: "missing ']' in address" };
    if (end + 1 === hostport.length) return { error: 'missing port in address' };
    if (end + 1 !== colon) return { error: hostport[end + 1] === ':' ? 'too many colons in address' : 'missing port in address' };
    host = hostport.slice(1, end);
    afterOpen = 1;
    afterClose = end + 1;
  } else {
    host = hostport.slice(0, colon);
    if (host.includes(':')) return { error: 'too many colons in address' };
  }
  if (hostport.indexOf('[', afterOpen) >= 0) return { error: "unexpected '[' in address" };
  if (hostport.indexOf(']', afterClose) >= 0) return { error: "unexpected ']' in address" };
  return { host, port: hostport.slice(colon + 1) };
}

/** Go's `net.JoinHostPort`: brackets a host that contains a colon. */
export function goJoinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Go's built-in TCP service names (`net/lookup.go` `services`), what Go uses for a non-numeric
 * port without `/etc/services`: certsmith does not read the file, so every machine agrees.
 */
const TCP_SERVICES: Readonly<Record<string, number>> = {
  ftp: 21,
  ftps: 990,
  gopher: 70,
  http: 80,
  https: 443,
  imap2: 143,
  imap3: 220,
  imaps: 993,
  pop3: 110,
  pop3s: 995,
  smtp: 25,
  submissions: 465,
  ssh: 22,
  telnet: 23,
};

/**
 * Go's `LookupPort` for a port string: `""` is 0, digits (with an optional sign) must end in
 * 0…65535 (`address <port>: invalid port`), a name is looked up (`address tcp/<name>: unknown port`).
 */
function goPort(text: string): number | { error: string } {
  if (text === '') return 0;
  const match = /^([+-]?)(\d+)$/.exec(text);
  if (match === null) {
    const known = TCP_SERVICES[text.toLowerCase()];
    return known ?? { error: `address tcp/${text}: unknown port` };
  }
  // Go saturates long digit strings instead of failing to parse them; any of them is out of range.
  const value = (match[1] === '-' ? -1 : 1) * Number(match[2]!.length > 10 ? Number.MAX_SAFE_INTEGER : match[2]);
  return value >= 0 && value <= 65_535 ? value : { error: `address ${text}: invalid port` };
}

/**
 * What to dial for a `domain` field: `host:port` when it splits as Go's `SplitHostPort`, otherwise
 * the whole value is the host and `defaultPort` the port (CFSSL `ParseCertificateDomain`). `ip`,
 * when given, replaces the host (brackets allowed). Returns Go's dial error text instead when Go's
 * dialer would refuse the address before connecting (a port out of range, an unknown service name,
 * a stray bracket): `dial tcp: address 99999: invalid port`.
 */
export function parseDialTarget(domain: string, defaultPort: number, ip?: string): { target: DialTarget; serverName: string } | { error: string } {
  const split = goSplitHostPort(domain);
  const serverName = 'error' in split ? domain : split.host;
  let port: number;
  if ('error' in split) port = defaultPort;
  else {
    const parsed = goPort(split.port);
    if (typeof parsed !== 'number') return { error: `dial tcp: ${parsed.error}` };
    port = parsed;
  }
  const host = ip === undefined ? serverName : ip.replace(/^\[(.*)\]$/, '$1');
  // What Go then dials is JoinHostPort(host, port); a host Go cannot split back is refused.
  const joined = goJoinHostPort(host, port);
  const again = goSplitHostPort(joined);
  if ('error' in again) return { error: `dial tcp: address ${joined}: ${again.error}` };
  return { target: { host, port }, serverName };
}

/**
 * strerror texts Go prints for connect/read/write failures, where libuv's wording differs
 * (`host is unreachable`, `address not available`) or is missing.
 */
const STRERROR: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by peer',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network is unreachable',
  ETIMEDOUT: 'connection timed out',
  EADDRNOTAVAIL: 'cannot assign requested address',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EPIPE: 'broken pipe',
  ECONNABORTED: 'software caused connection abort',
  EADDRINUSE: 'address already in use',
  ENETDOWN: 'network is down',
  EHOSTDOWN: 'host is down',
};

/** Go's `crypto/tls` alert texts by alert number (RFC 8446 6). */
const TLS_ALERTS: Readonly<Record<number, string>> = {
  0: 'close notify',
  10: 'unexpected message',
  20: 'bad record MAC',
  21: 'decryption failed',
  22: 'record overflow',
  30: 'decompression failure',
  40: 'handshake failure',
  42: 'bad certificate',
  43: 'unsupported certificate',
  44: 'revoked certificate',
  45: 'expired certificate',
  46: 'unknown certificate',
  47: 'illegal parameter',
  48: 'unknown certificate authority',
  49: 'access denied',
  50: 'error decoding message',
  51: 'error decrypting message',
  60: 'export restriction',
  70: 'protocol version not supported',
  71: 'insufficient security level',
  80: 'internal error',
  86: 'inappropriate fallback',
  90: 'user canceled',
  100: 'no renegotiation',
  109: 'missing extension',
  110: 'unsupported extension',
  111: 'certificate unobtainable',
  112: 'unrecognized name',
  113: 'bad certificate status response',
  114: 'bad certificate hash value',
  115: 'unknown PSK identity',
  116: 'certificate required',
  120: 'no application protocol',
};

/** OpenSSL's reason for a received alert (`ERR_SSL_SSLV3_ALERT_…`, `ERR_SSL_TLSV1_ALERT_…`) → alert number. */
const OPENSSL_ALERTS: Readonly<Record<string, number>> = {
  CLOSE_NOTIFY: 0,
  UNEXPECTED_MESSAGE: 10,
  BAD_RECORD_MAC: 20,
  DECRYPTION_FAILED: 21,
  RECORD_OVERFLOW: 22,
  DECOMPRESSION_FAILURE: 30,
  HANDSHAKE_FAILURE: 40,
  NO_CERTIFICATE: 41,
  BAD_CERTIFICATE: 42,
  UNSUPPORTED_CERTIFICATE: 43,
  CERTIFICATE_REVOKED: 44,
  CERTIFICATE_EXPIRED: 45,
  CERTIFICATE_UNKNOWN: 46,
  ILLEGAL_PARAMETER: 47,
  UNKNOWN_CA: 48,
  ACCESS_DENIED: 49,
  DECODE_ERROR: 50,
  DECRYPT_ERROR: 51,
  EXPORT_RESTRICTION: 60,
  PROTOCOL_VERSION: 70,
  INSUFFICIENT_SECURITY: 71,
  INTERNAL_ERROR: 80,
  INAPPROPRIATE_FALLBACK: 86,
  USER_CANCELLED: 90,
  NO_RENEGOTIATION: 100,
  MISSING_EXTENSION: 109,
  UNSUPPORTED_EXTENSION: 110,
  CERTIFICATE_UNOBTAINABLE: 111,
  UNRECOGNIZED_NAME: 112,
  BAD_CERTIFICATE_STATUS_RESPONSE: 113,
  BAD_CERTIFICATE_HASH_VALUE: 114,
  UNKNOWN_PSK_IDENTITY: 115,
  CERTIFICATE_REQUIRED: 116,
  NO_APPLICATION_PROTOCOL: 120,
};

/** OpenSSL record-layer reasons for bytes that are not TLS at all (an HTTP server, garbage). */
const NOT_TLS = new Set([
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_HTTP_REQUEST',
  'ERR_SSL_HTTPS_PROXY_REQUEST',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'ERR_SSL_RECORD_LENGTH_MISMATCH',
  'ERR_SSL_UNKNOWN_PROTOCOL',
  'ERR_SSL_RECORD_LAYER_FAILURE',
]);

/** The socket addresses of a failure, as Go prints them (`127.0.0.1:52110->127.0.0.1:443`). */
export interface DialFailureContext {
  /** The address dialled: `host:port` with the resolved address when known (Go prints it). */
  target: string;
  /** The host name looked up (Go's `lookup <host>` texts). */
  host: string;
  /** Local and remote `addr:port` once connected (read/write failures name both). */
  local?: string;
  remote?: string;
}

const systemErrors = getSystemErrorMap();

/**
 * Go's text for a Node connection failure (an `error` event of `tls.connect`, a DNS lookup
 * rejection): connect and lookup errors (`dial tcp 127.0.0.1:443: connect: connection refused`,
 * `dial tcp: lookup x.invalid: no such host`), read/write errors (`read tcp a->b: read: connection
 * reset by peer`), a close before the handshake ends (`EOF`), TLS alerts (`remote error: tls:
 * handshake failure`), a peer that does not speak TLS (`tls: first record does not look like a TLS
 * handshake`), and a generic `dial tcp <target>: connection failed` for anything unforeseen — never
 * the Node or OpenSSL message.
 */
export function describeDialFailure(error: unknown, context: DialFailureContext): string {
  // Several addresses tried (Node's happy eyeballs): Go's serial dial reports the first one's error.
  if (error instanceof AggregateError && error.errors.length > 0) return describeDialFailure(error.errors[0], context);
  const failure = (typeof error === 'object' && error !== null ? error : {}) as NodeJS.ErrnoException & {
    address?: string;
    port?: number;
    hostname?: string;
  };
  const code = typeof failure.code === 'string' ? failure.code : '';
  const syscall = typeof failure.syscall === 'string' ? failure.syscall : '';

  if (syscall === 'getaddrinfo' || syscall === 'queryA' || syscall === 'queryAaaa' || code === 'ENOTFOUND' || code.startsWith('EAI_')) {
    // Go's cgo resolver words these; `no such host` needs no resolver address (Go's pure resolver
    // adds `on <server>:53`, which would tell clients where the server's DNS is).
    const lookup = `dial tcp: lookup ${context.host}`;
    if (code === 'EAI_AGAIN') return `${lookup}: Temporary failure in name resolution`;
    return `${lookup}: no such host`;
  }
  // parseDialTarget refuses these before Node sees them; kept so a bad port can never leak Node's text.
  if (code === 'ERR_SOCKET_BAD_PORT') return `dial tcp: address ${context.target.slice(context.target.lastIndexOf(':') + 1)}: invalid port`;
  if (code.startsWith('ERR_SSL_')) {
    const alert = /^ERR_SSL_(?:SSLV3|TLSV1|TLSV13)_ALERT_(.+)$/.exec(code);
    if (alert) {
      const number = OPENSSL_ALERTS[alert[1]!];
      const name = number === undefined ? undefined : TLS_ALERTS[number];
      return `remote error: tls: ${name ?? 'handshake failure'}`;
    }
    if (NOT_TLS.has(code)) return 'tls: first record does not look like a TLS handshake';
    return 'local error: tls: handshake failure';
  }
  // A peer that closes (or resets) before the handshake ends: Node's "socket disconnected" error,
  // which carries no syscall; Go reads EOF.
  if (code === 'ECONNRESET' && syscall === '') return 'EOF';
  if (syscall === 'connect' || syscall === 'read' || syscall === 'write') {
    const text = STRERROR[code] ?? (typeof failure.errno === 'number' ? systemErrors.get(failure.errno)?.[1] : undefined) ?? 'connection failed';
    if (syscall === 'connect') {
      const target = failure.address !== undefined ? goJoinHostPort(failure.address, failure.port ?? '') : context.target;
      return `dial tcp ${target}: connect: ${text}`;
    }
    const ends = context.local !== undefined && context.remote !== undefined ? `${context.local}->${context.remote}` : context.target;
    return `${syscall} tcp ${ends}: ${syscall}: ${text}`;
  }
  return `dial tcp ${context.target}: connection failed`;
}
