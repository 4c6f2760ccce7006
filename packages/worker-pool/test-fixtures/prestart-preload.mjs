/** Preloaded by prestarted workers in `prestarted-workers.test.ts`: marks the thread that imported it. */
globalThis.__prestartPreloaded = true;
