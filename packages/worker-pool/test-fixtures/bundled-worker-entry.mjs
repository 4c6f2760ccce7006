/**
 * A worker entry shaped like a bundle's (apps/server/scripts/bundle-worker.mjs): it registers the
 * modules it holds, then runs the thread. Marks its threads so tests can tell them apart.
 */
import { registerBundledModules, runWorkerThread } from '@certsmith/worker-pool/worker-thread';
import { BUNDLED_MODULE } from './bundled-tasks.mjs';

globalThis.__bundledWorkerEntry = true;
registerBundledModules({ [BUNDLED_MODULE]: () => import('./bundled-tasks.mjs') });
await runWorkerThread();
