/**
 * The server of request-path.bench.mjs: the HTTP API of one checkout (its built
 * `packages/http-api`) with one operation whose work is nothing, so that what is measured is the
 * path every request takes outside its operation — Koa and the middleware, the request id, reading
 * and validating the body, the envelope, the access log line (`createLogger`'s stdout destination),
 * metrics' `observeRequest`. Usage: `node request-path.server.mjs CHECKOUT`; prints its port on stderr.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const checkout = process.argv[2];
const httpApi = await import(pathToFileURL(join(checkout, 'packages/http-api/dist/index.js')).href);
const { z } = createRequire(join(checkout, 'packages/http-api/package.json'))('zod');
const { createApp, createHttpServer, createLogger, createServerMetrics, defineOperation, JsonText, listen } = httpApi;

// A result the size of a bundle answer (≈6 KB of JSON with PEM text), spliced into the envelope as
// the bundle operation's is.
const pem = `-----BEGIN CERTIFICATE-----\n${'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVmZ2hpamts\n'.repeat(30)}-----END CERTIFICATE-----\n`;
const resultText = JSON.stringify({ bundle: pem + pem, crt: pem, key: '', status: { code: 0, messages: [] } });
const echo = defineOperation({
  name: 'echo',
  method: 'POST',
  body: z.object({ certificate: z.string(), flavor: z.enum(['ubiquitous', 'optimal', 'force']).optional() }),
  handle: () => new JsonText(resultText),
});
const metrics = createServerMetrics({ defaultMetrics: false });
const app = createApp({ operations: [echo], logger: createLogger({ base: { pid: process.pid } }), metrics });
const server = createHttpServer(app, {});
const address = await listen(server, 0, '127.0.0.1');
process.stderr.write(`LISTENING ${address.port}\n`);
// A normal exit on Ctrl-C or SIGINT, so that `node --cpu-prof` writes its profile.
process.once('SIGINT', () => process.exit(0));
