/**
 * A node:http server on 127.0.0.1 around an {@link OcspResponder} (through the package's own request
 * listener), so `openssl ocsp -url` can query it as it would a real responder.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { OcspRequestListenerOptions } from '../ocsp-request-listener.js';
import { createOcspRequestListener } from '../ocsp-request-listener.js';
import type { OcspResponder } from '../ocsp-responder.js';

/** A started loopback server. */
export interface LoopbackResponder {
  url: string;
  close(): Promise<void>;
}

/** Serve `responder` on a free loopback port. */
export async function serveOnLoopback(responder: OcspResponder, options: OcspRequestListenerOptions = {}): Promise<LoopbackResponder> {
  const server = createServer(createOcspRequestListener(responder, options));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
