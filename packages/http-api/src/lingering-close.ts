/**
 * Closing a connection after answering a request whose body was not read (413 over the limit, 408
 * body timeout) without losing the answer.
 *
 * Node answers a `Connection: close` response with `socket.destroySoon()`: the socket is destroyed
 * as soon as our FIN is flushed. Bytes the client is still sending then arrive at a closed socket,
 * the kernel answers them with a TCP RST, and a client that has not read the response yet loses it
 * (`ECONNRESET` instead of the 413). RFC 9112 §9.6 prescribes the remedy, a *lingering close*: close
 * the writing side, keep reading and discarding until the client closes its side, then close.
 * Bounded here by time, so a client that neither stops sending nor closes cannot hold the
 * connection: after {@link LINGER_MS} it is cut.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Longest a connection lingers after its closing response (nginx's `lingering_timeout` is 5 s too). */
export const LINGER_MS = 5_000;

/**
 * After `response` (which must carry `Connection: close`) is sent, discard the rest of `request`'s
 * body and close the connection once the client closes its side, or after `lingerMs`. Does nothing
 * special when the whole request was already received: then nothing can arrive to provoke a reset.
 */
export function closeAfterResponse(request: IncomingMessage, response: ServerResponse, lingerMs = LINGER_MS): void {
  if (request.complete) return;
  response.once('finish', () => {
    const socket = request.socket;
    // Node's `finish` handler ran first and called `socket.destroySoon()`, which ends our side and
    // then destroys the socket on its `finish`; keep the end, replace the destroy with the linger.
    socket.removeListener('finish', socket.destroy);
    if (socket.destroyed) return;
    const close = (): void => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, lingerMs);
    timer.unref();
    socket.once('end', close);
    socket.once('close', () => clearTimeout(timer));
    if (socket.readableEnded) close();
    // The parser still owns the socket: the rest of the body flows into the request; drop it.
    request.resume();
  });
}
