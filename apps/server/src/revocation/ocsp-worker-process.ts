/**
 * The entry of an `ocspserve` worker process (`--workers N`, node:cluster): it waits for its plan
 * from the command's process, answers with `startOcspResponder` on the shared listening socket, and
 * reports back over the IPC channel — listening, a start-up failure (code and message), warnings.
 * It stops when the command's process says so, after its in-flight answers; a terminal's Ctrl-C
 * reaches the whole process group, so SIGINT and SIGTERM are left to the command's process, which
 * stops its workers in order. If that process dies, node:cluster ends this one (IPC disconnect).
 */
import type { RunningOcspResponder } from './ocsp-responder-runtime.js';
import { startOcspResponder } from './ocsp-responder-runtime.js';
import type { OcspPrimaryMessage, OcspWorkerMessage } from './ocsp-worker-messages.js';

function send(message: OcspWorkerMessage): void {
  process.send?.(message);
}

let running: RunningOcspResponder | null = null;

process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
process.on('message', (message: OcspPrimaryMessage) => {
  if (message.type === 'start') {
    startOcspResponder(message.plan, (text) => send({ type: 'warn', message: text })).then(
      (responder) => {
        running = responder;
        send({ type: 'listening', url: responder.server.url });
      },
      (error: unknown) => {
        const code = (error as { code?: unknown }).code;
        send({ type: 'failed', code: typeof code === 'number' ? code : null, errno: typeof code === 'string' ? code : null, message: (error as Error).message });
        process.disconnect();
      },
    );
  } else if (message.type === 'stop') {
    void (running?.close(message.timeoutMs) ?? Promise.resolve()).finally(() => process.exit(0));
  }
});
send({ type: 'ready' });
