/**
 * A node:http server on 127.0.0.1 around an {@link OcspResponder}, so `openssl ocsp -url` can query it
 * as it would a real responder. Test-only: the real mounting is the server's.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { OcspResponder } from '../ocsp-responder.js';

/** A started loopback server. */
export interface LoopbackResponder {
  url: string;
  close(): Promise<void>;
}

/** Serve `responder` on a free loopback port. */
export async function serveOnLoopback(responder: OcspResponder): Promise<LoopbackResponder> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void responder
        .handle({ method: request.method ?? 'GET', path: request.url ?? '/', headers: request.headers, body: new Uint8Array(Buffer.concat(chunks)) })
        .then((answer) => {
          response.writeHead(answer.status, answer.headers);
          response.end(answer.body);
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
