/**
 * A process that uses its parent's store over IPC, as a worker process of `serve --processes N`
 * uses the primary's (`remote/remote-store-process.test.ts`). It runs the built package (`dist/`).
 *
 *   fork(this file, [certificatePem], { serialization: 'advanced' })
 *
 * It records the certificate, reads the row and its OCSP response back, asks for a CRL number and
 * records the certificate again (a duplicate), then reports what it got — the types as this process
 * sees them — in an untagged `{ fixture: 'report', … }` message. It then holds a change subscription
 * (`{ fixture: 'watching' }` once the owner has it) and, on `{ fixture: 'exit' }`, exits without
 * closing anything, as a crashing worker would.
 */
import { StoreError, connectStore, ipcChannel } from '../../dist/index.js';

const store = connectStore(ipcChannel(process), { driver: 'sqlite3' });
const pem = process.argv[2];
const body = Buffer.from([0x30, 0x00, 0xff]);
const record = await store.recordCertificate({ certificate: pem, label: 'child', ocspResponse: { body, expiry: new Date(Date.now() + 86_400_000) } });
const row = await store.getCertificate(record.serial, record.authorityKeyId);
const response = await store.getOcspResponse(record.serial, record.authorityKeyId);
const crlNumber = await store.nextCrlNumber('child-issuer');
const duplicate = await store.recordCertificate({ certificate: pem }).catch((error) => error);
process.send({
  fixture: 'report',
  serial: record.serial,
  expiryIsDate: record.expiry instanceof Date && row.expiry instanceof Date,
  issuedAtMatches: record.issuedAt.getTime() === row.issuedAt.getTime(),
  bodyIsUint8Array: Object.getPrototypeOf(response.body) === Uint8Array.prototype,
  bodyBytes: [...response.body],
  crlNumberType: typeof crlNumber,
  duplicateIsStoreError: duplicate instanceof StoreError,
  duplicateCode: duplicate.code,
});
store.watchChanges(() => undefined, { pollIntervalMs: 50 });
// The owner answers a call only after the subscription before it: once this resolves, it holds it.
await store.ping();
process.send({ fixture: 'watching' });
process.on('message', (message) => {
  if (message?.fixture === 'exit') process.exit(0);
});
