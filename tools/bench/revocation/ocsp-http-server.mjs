#!/usr/bin/env node
/**
 * The responder side of ocsp-http.bench.mjs: `@certsmith/revocation`'s OCSP responder on node:http,
 * serving a `-responses` file like `cfssl ocspserve -responses FILE` (one process, one thread, as
 * cfssl's). Prints `listening <port>` when ready. Not a product command: `certsmith ocspserve` is.
 *
 *   node tools/bench/revocation/ocsp-http-server.mjs RESPONSES_FILE
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const { OcspResponder, createOcspFileSource, createOcspRequestListener } = await import(join(here, '../../../packages/revocation/dist/index.js'));

const source = createOcspFileSource(readFileSync(process.argv[2], 'utf8'));
const server = createServer({ keepAliveTimeout: 60_000 }, createOcspRequestListener(new OcspResponder({ source })));
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
