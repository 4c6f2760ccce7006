/**
 * Worker tasks used only by the http-api tests (the pool's own are in `@certsmith/worker-pool`'s
 * `test-fixtures/`). Plain JavaScript on purpose: worker threads import
 * task modules with Node itself (no TypeScript), just as they import the built `dist/` of real tasks.
 */
import { CertificateDecodeError } from '@certsmith/x509-core';
import { defineTask } from '@certsmith/worker-pool';

/** Throws a coded error (1002), which must reach the client with its code. */
export const codedFailureTask = defineTask({
  name: 'test.coded-failure',
  module: import.meta.url,
  run: () => {
    throw new CertificateDecodeError();
  },
});

/** Throws an uncoded error whose text must stay out of responses. */
export const plainFailureTask = defineTask({
  name: 'test.plain-failure',
  module: import.meta.url,
  run: () => {
    throw new Error('database password is hunter2');
  },
});

/**
 * Blocks its worker until the main thread opens the gate: `Int32Array(gate)[0]` set to 1 and notified.
 * Bounded by `timeoutMs` so a broken test cannot hang a worker forever.
 */
export const gateTask = defineTask({
  name: 'test.gate',
  module: import.meta.url,
  run: ({ gate, timeoutMs }) => {
    Atomics.wait(new Int32Array(gate), 0, 0, timeoutMs);
    return { opened: Atomics.load(new Int32Array(gate), 0) === 1 };
  },
});
