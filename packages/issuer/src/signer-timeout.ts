/**
 * The bound on signer calls: a signer that never answers (a hung HSM, a remote CA that accepts the
 * connection and goes quiet) fails its request with 2500 after the issuer's signer timeout instead
 * of holding it forever, and the other labels keep working.
 */
import { SignerTimeoutError } from './errors.js';

/** Default signer timeout: 30 s. */
export const DEFAULT_SIGNER_TIMEOUT_MS = 30_000;

/**
 * Run `call` (the signer calls of one request) but give up after `timeoutMs` (default
 * {@link DEFAULT_SIGNER_TIMEOUT_MS}): reject with {@link SignerTimeoutError} (2500) naming `label`.
 * The call cannot be cancelled; a late answer or failure is dropped.
 */
export async function withSignerTimeout<T>(label: string, timeoutMs: number | undefined, call: () => Promise<T>): Promise<T> {
  const limit = timeoutMs ?? DEFAULT_SIGNER_TIMEOUT_MS;
  const pending = call();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SignerTimeoutError(label, limit)), limit);
  });
  try {
    return await Promise.race([pending, expired]);
  } finally {
    clearTimeout(timer);
    // After a timeout nobody awaits `pending` any more; its rejection must not go unhandled.
    pending.catch(() => undefined);
  }
}
