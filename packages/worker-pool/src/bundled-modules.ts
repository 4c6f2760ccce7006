/**
 * Modules a thread already holds in a bundle, found by the URL they would otherwise be imported
 * from. Worker threads import their task modules and init hooks by URL (a task's `module`, a
 * `WorkerInit`'s `module`); a thread started on a bundle of those modules (one file instead of
 * a hundred: docs/performance.md, start-up pass 4) registers each bundled module under its original
 * URL first, and {@link importWorkerModule} then answers from the bundle instead of loading the
 * file a second time — a second copy would also have its own module state (an init hook's signers
 * that the bundled task would not see). Without a bundle nothing is registered and every import is
 * an ordinary `import()`.
 *
 * The registry lives on `globalThis` under a `Symbol.for` key, per thread: every copy of this
 * package in a thread (the bundled one and a separately loaded one) sees the same entries.
 */
/** Evaluates a bundled module (bundled modules run on first use, as imports would) and gives its namespace. */
export type BundledModuleLoader = () => object | Promise<object>;

const REGISTRY = Symbol.for('certsmith.worker-pool.bundled-modules');

function registry(): Map<string, BundledModuleLoader> {
  const holder = globalThis as { [REGISTRY]?: Map<string, BundledModuleLoader> };
  return (holder[REGISTRY] ??= new Map());
}

/**
 * Register modules this thread holds in a bundle: module URL (as the pool, a task definition or an
 * init hook names it: `file:` URLs of the built `.js` files) → loader of its namespace. A URL
 * registered twice keeps its first loader: one instance per module, as with `import()`.
 */
export function registerBundledModules(modules: Readonly<Record<string, BundledModuleLoader>>): void {
  const entries = registry();
  for (const [url, loader] of Object.entries(modules)) {
    if (typeof loader !== 'function') throw new TypeError(`bundled module ${url} must be registered with a loader function, got ${typeof loader}`);
    if (!entries.has(url)) entries.set(url, loader);
  }
}

/**
 * Import `module` (a URL or specifier) in this thread: the bundled module registered under exactly
 * that string when there is one, else `import(module)`. Used for everything a worker imports by
 * URL; plugins loaded by package name are never registered and load as their own modules.
 */
export async function importWorkerModule(module: string): Promise<Record<string, unknown>> {
  const loader = registry().get(module);
  if (loader !== undefined) return (await loader()) as Record<string, unknown>;
  return (await import(module)) as Record<string, unknown>;
}

