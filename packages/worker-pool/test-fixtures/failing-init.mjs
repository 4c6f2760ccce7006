/** An init hook that fails, for the pool's start-up failure test. */
export function initWorker() {
  throw new Error('cannot open the key store');
}
