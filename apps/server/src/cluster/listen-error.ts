/**
 * A listen failure of a worker process in one process's words. Under node:cluster the primary binds
 * the port for its workers, and a worker's `listen` fails with the primary's `bind` error (`bind
 * EADDRINUSE 127.0.0.1:8888`); one process says `listen EADDRINUSE: address already in use
 * 127.0.0.1:8888`. `serve --processes` prints what one process would.
 */
import { getSystemErrorMap } from 'node:util';

/** `error` reworded as one process's listen error when it is node:cluster's bind error; otherwise `error` itself. */
export function asListenError(error: unknown): unknown {
  const failure = error as (NodeJS.ErrnoException & { address?: string; port?: number }) | null;
  if (!(failure instanceof Error) || failure.syscall !== 'bind' || typeof failure.errno !== 'number' || typeof failure.code !== 'string') return error;
  const description = getSystemErrorMap().get(failure.errno)?.[1];
  const where = failure.address === undefined ? '' : ` ${failure.address}${failure.port === undefined ? '' : `:${failure.port}`}`;
  const message = `listen ${failure.code}${description === undefined ? '' : `: ${description}`}${where}`;
  return Object.assign(new Error(message, { cause: error }), { code: failure.code, errno: failure.errno, syscall: 'listen', address: failure.address, port: failure.port });
}
