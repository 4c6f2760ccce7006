import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { RequestTimeoutError } from './errors.js';
import { readRequestBody } from './request-body.js';

/** A request whose body arrives when the test writes it. */
function pendingRequest(): PassThrough & IncomingMessage {
  return Object.assign(new PassThrough(), { headers: {}, complete: false }) as unknown as PassThrough & IncomingMessage;
}

/** When a read settled, in ms after `started`, and how. */
async function settle(read: Promise<Buffer>, started: number): Promise<{ afterMs: number; body?: string; error?: unknown }> {
  try {
    const body = await read;
    return { afterMs: performance.now() - started, body: body.toString() };
  } catch (error) {
    return { afterMs: performance.now() - started, error };
  }
}

describe('readRequestBody', () => {
  it('fails each stalled read once its own timeout has passed, and no read that completes in time', async () => {
    const timeoutMs = 60;
    const first = pendingRequest();
    const firstStarted = performance.now();
    const firstRead = settle(readRequestBody(first, 1024, timeoutMs), firstStarted);
    const quick = pendingRequest();
    const quickRead = settle(readRequestBody(quick, 1024, timeoutMs), performance.now());
    quick.end('{"a":1}');
    // A second stalled read, started while the first one waits: its deadline is later.
    await new Promise((resolve) => setTimeout(resolve, 25));
    const second = pendingRequest();
    const secondStarted = performance.now();
    const secondRead = settle(readRequestBody(second, 1024, timeoutMs), secondStarted);
    const late = pendingRequest();
    const lateRead = settle(readRequestBody(late, 1024, timeoutMs), performance.now());

    const quickOutcome = await quickRead;
    expect(quickOutcome.body).toBe('{"a":1}');
    const firstOutcome = await firstRead;
    expect(firstOutcome.error).toBeInstanceOf(RequestTimeoutError);
    expect(firstOutcome.afterMs).toBeGreaterThanOrEqual(timeoutMs - 1);
    // Not cut with the first one: it completes after the first read's deadline, within its own.
    late.end('{"b":2}');
    expect((await lateRead).body).toBe('{"b":2}');
    const secondOutcome = await secondRead;
    expect(secondOutcome.error).toBeInstanceOf(RequestTimeoutError);
    expect(secondOutcome.afterMs).toBeGreaterThanOrEqual(timeoutMs - 1);
    expect(performance.now() - firstStarted).toBeGreaterThanOrEqual(25 + timeoutMs - 1);
  });

  it('answers the bytes sent, whether they come in one chunk or in several', async () => {
    const whole = pendingRequest();
    const wholeRead = readRequestBody(whole, 1024);
    whole.end(Buffer.from('{"certificate":"one chunk"}'));
    expect((await wholeRead).toString()).toBe('{"certificate":"one chunk"}');
    const split = pendingRequest();
    const splitRead = readRequestBody(split, 1024);
    split.write('{"certificate":');
    await new Promise((resolve) => setImmediate(resolve));
    split.end('"two chunks"}');
    expect((await splitRead).toString()).toBe('{"certificate":"two chunks"}');
  });

  it('keeps working after every earlier read has settled', async () => {
    for (let round = 0; round < 2; round += 1) {
      const stalled = pendingRequest();
      const outcome = await settle(readRequestBody(stalled, 1024, 30), performance.now());
      expect(outcome.error).toBeInstanceOf(RequestTimeoutError);
      expect(outcome.afterMs).toBeGreaterThanOrEqual(29);
    }
  });
});
