/**
 * A process that owns a SQLite store and serves it to its parent over IPC, as the primary of
 * `serve --processes N` serves its worker processes (`remote/remote-store-process.test.ts`). It runs
 * the built package (`dist/`): Node cannot load the TypeScript sources.
 *
 *   fork(this file, [sqliteFile], { serialization: 'advanced' })
 *
 * Besides the store's messages it sends `{ fixture: 'ready' }` once serving and answers
 * `{ fixture: 'hold', ms }` by blocking its event loop for `ms` — both untagged, as another IPC user
 * of the same channel would be.
 */
import { ipcChannel, openStore, serveStore } from '../../dist/index.js';

const store = await openStore({ driver: 'sqlite3', dataSource: process.argv[2] });
const server = serveStore(store, ipcChannel(process));
process.on('message', (message) => {
  if (message?.fixture === 'hold') {
    const until = Date.now() + message.ms;
    while (Date.now() < until);
  }
});
process.once('disconnect', async () => {
  await server.close();
  await store.close();
});
process.send({ fixture: 'ready' });
