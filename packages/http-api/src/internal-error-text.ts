/**
 * Recognising error texts that come from Node, V8, undici or OpenSSL rather than from certsmith: the
 * last line of defence of the error mapping, so that such a text never reaches a client even when
 * domain code wrapped it into a coded error by mistake (`new DialError(error.message)`). Clients get
 * CFSSL's code with CFSSL's fixed wording instead; the original goes to the log.
 *
 * Two ways to tell:
 * - by cause (on the thread where the error was made): the coded error's message contains the text
 *   of an uncoded error in its `cause` chain that Node, undici or OpenSSL raised (it has a string
 *   `code` such as `ERR_SOCKET_BAD_PORT`, `ERR_OSSL_…`, `UND_ERR_…`, `ECONNREFUSED`) or that is one of
 *   JavaScript's own (`TypeError`, `RangeError`…);
 * - by shape (errors rebuilt from a worker thread carry only `{code, name, message}`): the texts
 *   those libraries produce, listed below. certsmith's own messages, and the Go texts it reproduces
 *   on purpose (`dial tcp 127.0.0.1:443: connect: connection refused`, `x509: …`, `json: …`), match
 *   none of them. A bare error code named as a reason (`… (ECONNREFUSED)`) is not a message and is
 *   left alone.
 */

/** Message shapes of Node's, V8's, undici's and OpenSSL's errors (never certsmith's or Go's). */
const INTERNAL_TEXT_PATTERNS: readonly RegExp[] = [
  // OpenSSL, as node:crypto reports it: `error:1E08010C:DECODER routines::unsupported`.
  /\berror:[0-9A-F]{8}:/i,
  /\broutines::?\w/,
  // Node's argument validation: `The "port" argument must be …. Received type number (99999)`.
  /\bReceived (?:type |an instance of |function |undefined\b|null\b)/,
  /\bThe "[^"]+" (?:argument|property|option)s? (?:must|is)\b/,
  /\bPort should be >= 0 and < 65536\b/,
  // Node's system errors before certsmith words them as Go does: `connect ECONNREFUSED 127.0.0.1:443`.
  /\b(?:connect|getaddrinfo|getnameinfo|read|write|open|socket|spawn|listen|bind) E[A-Z]{3,}\b/,
  // V8.
  /\bMaximum call stack size exceeded\b/,
  /\bCannot (?:read|set) propert(?:y|ies) of (?:undefined|null)\b/,
  /\bis not (?:a function|iterable|a constructor|defined)\b/,
  /\bInvalid (?:array|string|typed array) length\b/,
  // V8's JSON.parse (capitalised; Go's `unexpected end of JSON input`, which certsmith sends on
  // purpose, is not).
  /\bUnexpected (?:token|end of JSON input|non-whitespace character|string in JSON|number in JSON)\b/,
  /\bin JSON at position \d+/,
  // undici (fetch).
  /^fetch failed$/,
  /\b(?:other side closed|Headers Timeout Error|Body Timeout Error|Connect Timeout Error|SocketError)\b/,
];

/** True when `message` has the shape of a Node, V8, undici or OpenSSL error text. */
export function looksLikeInternalErrorText(message: string): boolean {
  return INTERNAL_TEXT_PATTERNS.some((pattern) => pattern.test(message));
}

/** Built-in JavaScript error classes: their texts are V8's. */
const BUILT_IN_ERRORS: readonly (abstract new (...args: never[]) => Error)[] = [TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError];

/** An uncoded error raised by Node, undici, OpenSSL or V8 (not by certsmith). */
function isInternalError(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'number') return false;
  if (typeof code === 'string') return /^(?:ERR_|UND_ERR|E[A-Z]{3,}$)/.test(code);
  return BUILT_IN_ERRORS.some((type) => error.constructor === type);
}

/**
 * True when `message` (of a coded error) repeats the text of an internal error in `error`'s `cause`
 * chain (followed at most 8 deep), or has the shape of one.
 */
export function leaksInternalErrorText(error: Error, message: string): boolean {
  if (looksLikeInternalErrorText(message)) return true;
  let cause: unknown = error.cause;
  for (let depth = 0; depth < 8 && cause instanceof Error; depth++) {
    if (isInternalError(cause) && cause.message.length >= 8 && message.includes(cause.message)) return true;
    cause = cause.cause;
  }
  return false;
}
