#!/usr/bin/env node
/**
 * The Node servers of the OCSP ceiling benchmark (`ceiling.bench.mjs`): they answer every request
 * with one fixed OCSP answer (a real stored response and the headers `ocspserve` sends with it) and
 * do no OCSP work at all, so they show what the transport alone costs.
 *
 * - `http1`: `@certsmith/http1-server` with the limits `ocspserve` uses — every request parsed and
 *   checked — with a handler that returns the same frozen answer each time (encoded once per
 *   second of its `Date`, as `ocspserve`'s answers are).
 * - `net-floor`: node:net with no HTTP at all: each `\r\n\r\n` received is one request (the DER
 *   bodies of the benchmark never contain it), answered with the pre-encoded bytes, one write per
 *   `data` event. Not a server anyone should run: the floor of the runtime and the kernel.
 *
 * `--processes N` (N > 1) answers in N node:cluster workers sharing the port, as `ocspserve
 * --workers N` does. Prints `listening <port>` once every process listens; SIGTERM stops it.
 *
 *   node static-server.mjs http1|net-floor BODY_FILE HEADERS_JSON [--processes N]
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createHttp1Server } from '@certsmith/http1-server';

const [kind, bodyFile, headersJson] = process.argv.slice(2);
const processesIndex = process.argv.indexOf('--processes');
const processes = processesIndex === -1 ? 1 : Number(process.argv[processesIndex + 1]);
if ((kind !== 'http1' && kind !== 'net-floor') || !bodyFile || !headersJson || !(processes >= 1)) {
  console.error('usage: static-server.mjs http1|net-floor BODY_FILE HEADERS_JSON [--processes N]');
  process.exit(1);
}

if (processes > 1 && cluster.isPrimary) {
  // The primary only accepts and hands connections out (node:cluster round-robin), as ocspserve's.
  let port = 0;
  let listening = 0;
  const primary = createServer();
  await new Promise((resolve) => primary.listen(0, '127.0.0.1', resolve));
  port = primary.address().port;
  await new Promise((resolve) => primary.close(resolve));
  for (let i = 0; i < processes; i++) {
    cluster.fork({ STATIC_PORT: String(port) }).on('message', (message) => {
      if (message === 'listening' && ++listening === processes) console.log(`listening ${port}`);
    });
  }
  process.once('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    process.exit(0);
  });
} else {
  const body = readFileSync(bodyFile);
  const headers = JSON.parse(headersJson);
  const port = Number(process.env.STATIC_PORT ?? 0);
  let close;
  if (kind === 'http1') {
    // Frozen, as the responder's answers are: encoded once per second of its Date.
    const answer = Object.freeze({ status: 200, headers: Object.freeze(headers), body });
    const server = createHttp1Server(() => answer, { maxBodyBytes: 64 * 1024 });
    const bound = await server.listen({ port, host: '127.0.0.1' });
    close = () => server.close(1_000);
    report(bound.port);
  } else {
    let head = `HTTP/1.1 200 OK\r\nDate: ${new Date().toUTCString()}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    const answerBytes = Buffer.concat([Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`, 'latin1'), body]);
    const server = createServer({ noDelay: true }, (socket) => {
      let tail = '';
      socket.on('data', (chunk) => {
        const text = tail + chunk.toString('latin1');
        let count = 0;
        let at = text.indexOf('\r\n\r\n');
        let last = 0;
        while (at !== -1) {
          count++;
          last = at + 4;
          at = text.indexOf('\r\n\r\n', last);
        }
        tail = text.slice(Math.max(last, text.length - 3));
        if (count > 0) socket.write(count === 1 ? answerBytes : Buffer.concat(Array(count).fill(answerBytes)));
      });
      socket.on('error', () => {});
    });
    await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
    close = () => new Promise((resolve) => server.close(resolve));
    report(server.address().port);
  }
  process.once('SIGTERM', () => void close().then(() => process.exit(0)));
  if (cluster.isWorker) process.on('disconnect', () => process.exit(0));
}

function report(port) {
  if (cluster.isWorker) process.send('listening');
  else console.log(`listening ${port}`);
}
