#!/usr/bin/env node
/**
 * The server side of `http1-vs-node-http.bench.mjs`: `@certsmith/revocation`'s `OcspResponder` on a
 * responses file, behind node:http (`createOcspRequestListener`, what `ocspserve` used before) or
 * behind `@certsmith/http1-server` (what `ocspserve` uses now), with the same limits. One process,
 * one thread. Prints `listening <port>` when ready; SIGTERM stops it.
 *
 *   node tools/bench/ocsp-http/responder-server.mjs node-http|http1 RESPONSES_FILE
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createHttp1Server } from '@certsmith/http1-server';
import { OcspResponder, createOcspFileSource, createOcspRequestListener } from '@certsmith/revocation';

const [kind, responsesFile] = process.argv.slice(2);
const responder = new OcspResponder({ source: createOcspFileSource(readFileSync(responsesFile, 'utf8')) });
let close;
if (kind === 'node-http') {
  const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 10_000, requestTimeout: 20_000 }, createOcspRequestListener(responder));
  server.maxConnections = 1024;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  console.log(`listening ${server.address().port}`);
  close = () => new Promise((resolve) => server.close(resolve));
} else if (kind === 'http1') {
  // As ocspserve does: `respond` answers without a promise when the source is synchronous.
  const server = createHttp1Server((request) => responder.respond({ method: request.method, path: request.target, headers: request.headers, body: request.body }), { maxBodyBytes: 64 * 1024 });
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  console.log(`listening ${port}`);
  close = () => server.close(1_000);
} else {
  console.error('usage: responder-server.mjs node-http|http1 RESPONSES_FILE');
  process.exit(1);
}
process.once('SIGTERM', () => void close().then(() => process.exit(0)));
