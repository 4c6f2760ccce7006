/**
 * One client connection: the request parser fed from the socket, the handler called per request,
 * answers written in request order (pipelining), and the connection's timeouts, back-pressure and
 * close. Answers are not written as they settle: the server flushes each connection with pending
 * answers once per event-loop turn, so pipelined answers leave in one write.
 */
import type { Socket } from 'node:net';

import type { Http1Limits, Http1Request } from './request-parser.js';
import { Http1RequestParser } from './request-parser.js';
import type { Http1Response } from './response-encoder.js';
import { CONTINUE_BYTES, encodeRefusal, encodeResponse } from './response-encoder.js';

/** Answers one request; may return a promise. A throw or rejection is answered 500 and closes the connection. */
export type Http1Handler = (request: Http1Request) => Http1Response | Promise<Http1Response>;

/** Timeouts of a connection, in milliseconds. */
export interface Http1Timeouts {
  /** From the first byte of a request (or the connection's start) to the end of its head; 408 after. */
  headersTimeoutMs: number;
  /** From the end of a head to the end of its body; 408 after. */
  bodyTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** After the server's last answer, how long a client may keep sending before the socket is destroyed. */
  lingerMs: number;
}

/** What a connection needs from its server. */
export interface ConnectionContext {
  readonly handler: Http1Handler;
  readonly limits: Http1Limits;
  readonly timeouts: Http1Timeouts;
  /** Requests parsed ahead of their answers at most; reading pauses at this depth. */
  readonly maxPipelinedRequests: number;
  now(): number;
  /** A handler failure (answered 500). */
  onHandlerError(error: unknown): void;
  /** Call {@link Http1Connection.flush} of this connection later in this event-loop turn. */
  scheduleFlush(connection: Http1Connection): void;
  /** The socket has closed. */
  closed(connection: Http1Connection): void;
}

interface Slot {
  /** The encoded answer once known. */
  bytes: Buffer | null;
  head: boolean;
  close: boolean;
  keepAliveForHttp10: boolean;
}

type TimerPhase = 'fresh' | 'head' | 'body' | 'idle' | 'busy' | 'linger';

const NEVER = Number.POSITIVE_INFINITY;

/** A server-side HTTP/1.1 connection. */
export class Http1Connection {
  /** When {@link onDeadline} is due (milliseconds of the context's clock). */
  deadline: number;
  private timerPhase: TimerPhase = 'fresh';
  private readonly parser: Http1RequestParser;
  private readonly queue: Slot[] = [];
  /** No more requests are read (a refusal, a `Connection: close`, a failure). */
  private stopParsing = false;
  /** The server is closing: the connection ends once idle. */
  private draining = false;
  /** `end()` was called; bytes still arriving are discarded. */
  private ended = false;
  private destroyed = false;
  private pausedForDrain = false;
  private paused = false;
  /** Slots of the queue still waiting for their answer. */
  private unsettled = 0;
  /** Inside {@link pump}: answers settled meanwhile are written when it ends, together. */
  private pumping = false;

  constructor(
    readonly socket: Socket,
    private readonly context: ConnectionContext,
  ) {
    this.parser = new Http1RequestParser(context.limits);
    this.deadline = context.now() + context.timeouts.headersTimeoutMs;
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', () => {
      // 'close' follows; a reset by the client is not the server's error.
    });
    socket.once('close', () => {
      this.destroyed = true;
      this.queue.length = 0;
      this.unsettled = 0;
      context.closed(this);
    });
  }

  /** No request in progress and nothing owed: closing now loses nothing. */
  get idle(): boolean {
    return this.queue.length === 0 && this.parser.phase === 'idle';
  }

  private received(chunk: Buffer): void {
    if (this.ended || this.stopParsing) return;
    this.parser.push(chunk);
    this.pump();
  }

  /** Parse and dispatch what the buffer holds, up to the pipelining depth. */
  private pump(): void {
    this.pumping = true;
    while (!this.stopParsing && this.queue.length < this.context.maxPipelinedRequests) {
      const event = this.parser.next();
      if (event === null) break;
      if (event.type === 'continue') {
        this.queue.push({ bytes: CONTINUE_BYTES, head: false, close: false, keepAliveForHttp10: false });
        continue;
      }
      if (event.type === 'refused') {
        this.stopParsing = true;
        this.queue.push({ bytes: encodeRefusal(event.status, this.context.now()), head: false, close: true, keepAliveForHttp10: false });
        break;
      }
      const request = event.request;
      const keepAlive = request.keepAlive && !this.draining;
      const slot: Slot = { bytes: null, head: request.method === 'HEAD', close: !keepAlive, keepAliveForHttp10: keepAlive && request.httpVersion === '1.0' };
      this.queue.push(slot);
      this.unsettled++;
      if (!keepAlive) this.stopParsing = true;
      this.dispatch(slot, request);
    }
    this.pumping = false;
    if (this.queue.length > 0 && this.queue[0]!.bytes !== null) this.ready();
    this.updateTimer();
    this.updateReading();
  }

  private dispatch(slot: Slot, request: Http1Request): void {
    let result: Http1Response | Promise<Http1Response>;
    try {
      result = this.context.handler(request);
    } catch (error) {
      this.fail(slot, error);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (response) => this.settle(slot, response),
        (error: unknown) => this.fail(slot, error),
      );
    } else this.settle(slot, result);
  }

  private settle(slot: Slot, response: Http1Response): void {
    if (this.destroyed || this.ended) return;
    this.unsettled--;
    // Closing: the last answer owed says so, and the connection ends after it.
    if (this.draining && slot === this.queue[this.queue.length - 1] && this.parser.phase === 'idle') slot.close = true;
    try {
      slot.bytes = encodeResponse(response, slot, this.context.now());
    } catch (error) {
      this.failSettled(slot, error);
      return;
    }
    this.ready();
  }

  /**
   * An answer became ready: it is written at the end of this event-loop turn, with every other
   * answer that became ready meanwhile, on this connection and on the others. Writing each answer at
   * once measured worse (≈ 31,000 against ≈ 41,000 answers/s on one thread, and more CPU per answer
   * on both sides): the client is woken per answer instead of once per burst, and so is this thread
   * for the next requests.
   */
  private ready(): void {
    if (!this.pumping) this.context.scheduleFlush(this);
  }

  private fail(slot: Slot, error: unknown): void {
    if (this.destroyed || this.ended) return;
    this.unsettled--;
    this.failSettled(slot, error);
  }

  private failSettled(slot: Slot, error: unknown): void {
    this.context.onHandlerError(error);
    this.stopParsing = true;
    slot.close = true;
    slot.bytes = encodeRefusal(500, this.context.now());
    this.ready();
  }

  /** Write every answer ready at the head of the queue, in one write. */
  flush(): void {
    if (this.destroyed || this.ended) return;
    let single: Buffer | null = null;
    let several: Buffer[] | null = null;
    let close = false;
    while (this.queue.length > 0) {
      const slot = this.queue[0]!;
      if (slot.bytes === null) break;
      this.queue.shift();
      if (single === null) single = slot.bytes;
      else (several ??= [single]).push(slot.bytes);
      if (slot.close) {
        // Requests read after this one are not answered: the connection ends here.
        close = true;
        this.queue.length = 0;
        this.unsettled = 0;
        break;
      }
    }
    if (single !== null) {
      const written = this.socket.write(several === null ? single : Buffer.concat(several));
      if (!written && !close) {
        this.pausedForDrain = true;
        this.socket.once('drain', () => {
          this.pausedForDrain = false;
          this.updateReading();
        });
      }
    }
    if (close) {
      this.end();
      return;
    }
    if (this.draining && this.idle) {
      this.end();
      return;
    }
    if (single !== null && !this.stopParsing && this.parser.bufferedBytes > 0) this.pump();
    else {
      this.updateTimer();
      this.updateReading();
    }
  }

  /** The server is closing: end now when idle, else after the answers owed. */
  shutdown(): void {
    this.draining = true;
    if (this.idle && !this.ended) this.end();
  }

  /** Destroy the socket at once. */
  destroy(): void {
    this.socket.destroy();
  }

  /** Called by the server when {@link deadline} has passed. */
  onDeadline(): void {
    const phase = this.timerPhase;
    this.deadline = NEVER;
    if (phase === 'linger') {
      this.socket.destroy();
      return;
    }
    if (phase === 'head' || phase === 'body') {
      // The client is too slow with this request: 408, then close (RFC 9110 15.5.9).
      this.stopParsing = true;
      this.queue.push({ bytes: encodeRefusal(408, this.context.now()), head: false, close: true, keepAliveForHttp10: false });
      this.timerPhase = 'busy';
      this.ready();
      return;
    }
    // Idle keep-alive, or a connection that never sent a byte: close without an answer.
    if (phase === 'idle' || phase === 'fresh') this.end();
  }

  /**
   * Half-close after the last answer and discard what still arrives, so a client still sending
   * (a refused body) reads the answer instead of a reset; destroyed after the linger time.
   */
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    this.unsettled = 0;
    this.socket.end();
    this.timerPhase = 'linger';
    this.deadline = this.context.now() + this.context.timeouts.lingerMs;
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private updateTimer(): void {
    if (this.ended) return;
    const phase = this.parser.phase;
    let next: TimerPhase;
    if (phase === 'head' || phase === 'body') next = phase;
    else if (this.queue.length > 0 || phase === 'refused') next = 'busy';
    else next = this.timerPhase === 'fresh' ? 'fresh' : 'idle';
    if (next === this.timerPhase) return;
    this.timerPhase = next;
    const timeouts = this.context.timeouts;
    if (next === 'busy') this.deadline = NEVER;
    else this.deadline = this.context.now() + (next === 'head' ? timeouts.headersTimeoutMs : next === 'body' ? timeouts.bodyTimeoutMs : timeouts.keepAliveTimeoutMs);
  }

  private updateReading(): void {
    if (this.ended || this.destroyed) return;
    const pause = this.pausedForDrain || this.queue.length >= this.context.maxPipelinedRequests;
    if (pause === this.paused) return;
    this.paused = pause;
    if (pause) this.socket.pause();
    else this.socket.resume();
  }
}
