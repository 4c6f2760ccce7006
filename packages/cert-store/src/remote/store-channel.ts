/**
 * The transport a remote store travels over: one end of a message channel whose messages are
 * structured-cloned — node:cluster / child_process IPC with `serialization: 'advanced'`, or a
 * `MessagePort`. {@link serveStore} and {@link connectStore} only need these three operations, so
 * the same code is tested over a `MessageChannel` and used over cluster IPC.
 */
import type { MessagePort } from 'node:worker_threads';

/** One end of a message channel: cluster's `worker.send`/`process.send`, a `MessagePort`, … */
export interface StoreChannel {
  /**
   * Send one message to the peer. Must not throw when the peer is gone (the message is dropped;
   * calls waiting for an answer then fail by `onClose` or by their timeout). May throw for a
   * message that cannot be cloned (`DataCloneError`).
   */
  send(message: unknown): void;
  /** Listen to every message from the peer (also those of other users of the channel); returns "stop listening". */
  onMessage(listener: (message: unknown) => void): () => void;
  /** Called once when the peer is gone (a worker's `disconnect`, a port's `close`); returns "stop listening". */
  onClose?(listener: () => void): () => void;
}

/**
 * What node:cluster's `Worker`, a forked `ChildProcess` and a forked process's own `process` have
 * in common: `send` with a completion callback, `connected`, and `message`/`disconnect` events.
 */
export interface IpcEndpoint {
  /** `ChildProcess` and `process` say whether the channel is open with `connected`… */
  readonly connected?: boolean;
  /** …and a cluster `Worker` with `isConnected()`. */
  isConnected?(): boolean;
  send?(message: unknown, callback?: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'disconnect', listener: () => void): unknown;
}

/**
 * A {@link StoreChannel} over process IPC: `cluster.workers[id]` or a `ChildProcess` in the parent,
 * `process` in the child. Fork with `serialization: 'advanced'` (`cluster.setupPrimary({
 * serialization: 'advanced' })`): the store's values hold `Date`s, `bigint`s and bytes, which JSON
 * serialisation would not keep.
 */
export function ipcChannel(endpoint: IpcEndpoint): StoreChannel {
  const disconnected = () => endpoint.connected === false || endpoint.isConnected?.() === false;
  return {
    send(message) {
      if (disconnected() || endpoint.send === undefined) return;
      try {
        // With a callback, a channel that closes meanwhile reports to it instead of emitting 'error'
        // on the process object, which would end the process when nothing listens for it.
        endpoint.send(message, ignoreSendError);
      } catch (error) {
        // node's IPC serializer throws a plain Error for a value it cannot clone, where a
        // MessagePort throws a DataCloneError: one name for both, so callers can tell it apart.
        if (error instanceof Error && error.name !== 'DataCloneError' && /could not be cloned/.test(error.message)) {
          throw new DOMException(error.message, 'DataCloneError');
        }
        throw error;
      }
    },
    onMessage(listener) {
      endpoint.on('message', listener);
      return () => void endpoint.off('message', listener);
    },
    onClose(listener) {
      let called = false;
      const once = () => {
        if (called) return;
        called = true;
        listener();
      };
      endpoint.on('disconnect', once);
      // Already disconnected: no event will come, so say so at once (asynchronously, as an event would).
      if (disconnected()) queueMicrotask(once);
      return () => {
        called = true;
        endpoint.off('disconnect', once);
      };
    },
  };
}

/** The peer went away while a message was in flight: the caller learns it from `onClose` or its timeout. */
function ignoreSendError(): void {}

/**
 * A {@link StoreChannel} over one port of a `MessageChannel` (tests, or a store served to a worker
 * thread). Listening starts the port; it keeps the event loop alive until closed or `unref()`ed.
 */
export function messagePortChannel(port: MessagePort): StoreChannel {
  let closed = false;
  port.once('close', () => {
    closed = true;
  });
  return {
    send(message) {
      // postMessage on a closed port drops the message silently, as the interface asks.
      port.postMessage(message);
    },
    onMessage(listener) {
      port.on('message', listener);
      return () => void port.off('message', listener);
    },
    onClose(listener) {
      if (closed) {
        let active = true;
        queueMicrotask(() => active && listener());
        return () => {
          active = false;
        };
      }
      port.once('close', listener);
      return () => void port.off('close', listener);
    },
  };
}
