/**
 * Reading and decoding JSON request bodies with a size limit. CFSSL reads the whole body with no limit
 * and answers decode failures inconsistently (HTTP 500 code 0 for `/bundle`, 400 for `/newcert`,
 * behaviour doc 1.4); certsmith always answers 400 code 400 for a body that is not a JSON object, and
 * 413 when the body is over the limit.
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { JsonNumberLiteral, parseGoJson } from '@certsmith/issuer';
import { BadRequestError } from '@certsmith/x509-core';
import { PayloadTooLargeError, RequestTimeoutError } from './errors.js';

/** Default request body limit: 1 MiB (a PEM bundle of a few dozen certificates fits easily). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Default time a request body may take to arrive once its headers are in: 20 s. */
export const DEFAULT_BODY_TIMEOUT_MS = 20_000;

/**
 * Read the whole body of `request`, failing with {@link PayloadTooLargeError} as soon as more than
 * `limitBytes` arrive (or a larger `Content-Length` is announced, before reading anything), and
 * with {@link RequestTimeoutError} when the body is not complete `timeoutMs` after this call (a
 * total deadline, not a gap between chunks: a client dripping one byte now and then is cut too).
 * On either failure the rest of the body is left unread; the caller answers with `Connection:
 * close` (the server then closes the connection with a lingering close, see `lingering-close.ts`).
 */
export function readRequestBody(request: IncomingMessage, limitBytes: number, timeoutMs = 0): Promise<Buffer> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) {
    return Promise.reject(new PayloadTooLargeError(limitBytes));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let deadline: BodyDeadline | undefined;
    const cleanup = (): void => {
      if (deadline !== undefined) deadline.cancel();
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    // Stop reading without destroying: breaking off would destroy the socket before we can answer.
    const stop = (error: Error): void => {
      cleanup();
      request.pause();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        stop(new PayloadTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      // A body in one chunk (most: a bundle or newcert body is a few KB) is that chunk, not a copy:
      // node:http hands each chunk over in a Buffer of its own.
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(new BadRequestError('request body could not be read', { cause: error }));
    };
    const onClose = (): void => {
      cleanup();
      reject(new BadRequestError('request body was not received completely'));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
    if (timeoutMs > 0 && !request.complete) deadline = bodyDeadlines(timeoutMs).add(() => stop(new RequestTimeoutError(timeoutMs)));
  });
}

/** The deadline of one body read; {@link BodyDeadline.cancel} once the read is over. */
class BodyDeadline {
  previous: BodyDeadline | undefined = undefined;
  next: BodyDeadline | undefined = undefined;
  cancelled = false;

  constructor(
    readonly list: BodyDeadlineList,
    readonly at: number,
    readonly onExpiry: () => void,
  ) {}

  cancel(): void {
    this.list.remove(this);
  }
}

/**
 * The deadlines of body reads that all wait the same time, in the order they were set — which is
 * their expiry order — under one Node timer set for the first. Every request with a body had a
 * `setTimeout` and a `clearTimeout` of its own, ≈1 µs of the event loop's CPU per request (see
 * docs/performance.md#the-request-path-outside-the-operation); here a read links and unlinks an
 * entry, and the timer, `unref`'d (an open request's socket keeps the process alive), is re-armed
 * only when it fires.
 */
class BodyDeadlineList {
  private first: BodyDeadline | undefined = undefined;
  private last: BodyDeadline | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(private readonly timeoutMs: number) {}

  add(onExpiry: () => void): BodyDeadline {
    const deadline = new BodyDeadline(this, performance.now() + this.timeoutMs, onExpiry);
    if (this.last === undefined) this.first = deadline;
    else {
      this.last.next = deadline;
      deadline.previous = this.last;
    }
    this.last = deadline;
    if (this.timer === undefined) this.arm(this.timeoutMs);
    return deadline;
  }

  remove(deadline: BodyDeadline): void {
    if (deadline.cancelled) return;
    deadline.cancelled = true;
    if (deadline.previous === undefined) this.first = deadline.next;
    else deadline.previous.next = deadline.next;
    if (deadline.next === undefined) this.last = deadline.previous;
    else deadline.next.previous = deadline.previous;
    deadline.previous = undefined;
    deadline.next = undefined;
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => this.expire(), delayMs);
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.first !== undefined && this.first.at <= now) {
      const expired = this.first;
      this.remove(expired);
      expired.onExpiry();
    }
    // Node's timers count whole milliseconds from the start of the event-loop turn: one may fire a
    // little before `at`, and is armed again for the rest.
    if (this.first !== undefined) this.arm(Math.max(1, Math.ceil(this.first.at - now)));
  }
}

/** One list per body timeout (a server has one or two). */
const deadlineLists = new Map<number, BodyDeadlineList>();

function bodyDeadlines(timeoutMs: number): BodyDeadlineList {
  let list = deadlineLists.get(timeoutMs);
  if (list === undefined) {
    list = new BodyDeadlineList(timeoutMs);
    deadlineLists.set(timeoutMs, list);
  }
  return list;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decode a body as a JSON object. `null` counts as `{}`, as Go decodes `null` into a map or struct as a
 * no-op (so CFSSL answers "no valid parameter sets found" / "missing request section" for it).
 * Numbers are read as Go reads them and a key repeated in one object is refused (issuer's
 * `parseGoJson`: an integer beyond 2^53 arrives as a `bigint`, `2048.0` or `1e3` as a
 * `JsonNumberLiteral`, so that an integer field refuses them as CFSSL does).
 * Messages never quote the body: it may hold a private key, and error messages reach the logs.
 */
export function parseJsonObject(body: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch (error) {
    throw new BadRequestError('request body is not valid UTF-8', { cause: error });
  }
  if (text.trim() === '') {
    // Go's encoding/json text for an empty or truncated document, which CFSSL clients see today.
    throw new BadRequestError('unexpected end of JSON input');
  }
  let value: unknown;
  try {
    value = parseGoJson(text);
  } catch (error) {
    if (error instanceof BadRequestError) throw error;
    throw new BadRequestError(describeJsonSyntaxError(error), { cause: error });
  }
  if (value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new BadRequestError(`request body must be a JSON object, got ${jsonTypeName(value)}`);
  }
  return value as Record<string, unknown>;
}

/** V8's `SyntaxError` messages can quote the input; keep only the kind of failure and its position. */
function describeJsonSyntaxError(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/end of JSON input/i.test(message)) return 'unexpected end of JSON input';
  const position = /at position (\d+)/.exec(message);
  return position ? `request body is not valid JSON (syntax error at position ${position[1]})` : 'request body is not valid JSON';
}

/** JSON type of a decoded value, for messages: `null`, `array`, `object`, `string`, `number`, `boolean`. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'bigint' || value instanceof JsonNumberLiteral) return 'number';
  return typeof value;
}
