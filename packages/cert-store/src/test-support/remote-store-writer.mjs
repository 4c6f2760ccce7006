/**
 * A process that records issued rows into its parent's SQLite store as a process of
 * `serve --processes N` does: committed on its own connection to the same WAL file
 * (`connectStore`'s `commitIssuedRowsTo`), over IPC when that meets a lock or a failing row
 * (`remote/remote-store-process.test.ts`). It runs the built package (`dist/`).
 *
 *   fork(this file, [sqliteFile, certificatePem, firstSerial, rows, label], { serialization: 'advanced' })
 *
 * On `{ fixture: 'go' }` it records `rows` rows (serials `firstSerial`, `firstSerial + 1`, … on the
 * given certificate's other fields) in turns of 1 to 7 records, each turn's records at once, then
 * sends `{ fixture: 'done', serials, failed }` (the serials it was answered for, and the messages of
 * the records that failed) and closes its client.
 */
import { connectStore, ipcChannel, issuedCertificateFields } from '../../dist/index.js';

const [file, pem, firstSerial, rows, label] = process.argv.slice(2);
const store = connectStore(ipcChannel(process), { driver: 'sqlite3', commitIssuedRowsTo: { driver: 'sqlite3', dataSource: file } });
const template = issuedCertificateFields(pem);
process.on('message', async (message) => {
  if (message?.fixture !== 'go') return;
  const serials = [];
  const failed = [];
  let next = 0;
  // Bounded: every turn takes at least one of the `rows`.
  for (let turn = 0; next < Number(rows); turn += 1) {
    const size = Math.min(1 + (turn % 7), Number(rows) - next);
    const batch = Array.from({ length: size }, () => ({ ...template, serial: String(BigInt(firstSerial) + BigInt(next++)) }));
    const outcomes = await Promise.allSettled(batch.map((certificate) => store.recordCertificate({ certificate, label })));
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') serials.push(outcome.value.serial);
      else failed.push(outcome.reason.message);
    }
  }
  await store.close();
  process.send({ fixture: 'done', serials, failed });
});
process.send({ fixture: 'ready' });
