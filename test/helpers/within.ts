/** Poll `check` every 100 ms until it holds; resolves with the elapsed ms, rejects past `timeoutMs`. */
export async function within(timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}
