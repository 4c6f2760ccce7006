import { EventEmitter } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ipcChannel, messagePortChannel } from './store-channel.js';

/** An IPC endpoint as a cluster Worker has it (`isConnected()`, no `connected`), sending into `sent`. */
function fakeWorker(options: { connected: boolean; sendThrows?: Error }) {
  const emitter = new EventEmitter();
  const sent: unknown[] = [];
  let connected = options.connected;
  return Object.assign(emitter, {
    sent,
    isConnected: () => connected,
    disconnect() {
      connected = false;
      emitter.emit('disconnect');
    },
    send(message: unknown, callback?: (error: Error | null) => void) {
      if (options.sendThrows !== undefined) throw options.sendThrows;
      sent.push(message);
      callback?.(null);
      return true;
    },
  });
}

describe('ipcChannel', () => {
  it('sends and listens while connected, and reports the disconnect once', async () => {
    const worker = fakeWorker({ connected: true });
    const channel = ipcChannel(worker);
    const received: unknown[] = [];
    const stop = channel.onMessage((message) => received.push(message));
    let closes = 0;
    channel.onClose!(() => (closes += 1));
    channel.send({ a: 1 });
    worker.emit('message', { b: 2 });
    stop();
    worker.emit('message', { c: 3 });
    worker.disconnect();
    worker.emit('disconnect');
    channel.send({ dropped: true });
    expect(worker.sent).toEqual([{ a: 1 }]);
    expect(received).toEqual([{ b: 2 }]);
    expect(closes).toBe(1);
  });

  it('reports a channel that was closed before it listened', async () => {
    const channel = ipcChannel(fakeWorker({ connected: false }));
    await expect(new Promise<void>((resolve) => channel.onClose!(resolve))).resolves.toBeUndefined();
  });

  it("names node's IPC clone failure DataCloneError, as a MessagePort does", () => {
    const channel = ipcChannel(fakeWorker({ connected: true, sendThrows: new Error('() => 1 could not be cloned.') }));
    expect(() => channel.send({ f: () => 1 })).toThrow(expect.objectContaining({ name: 'DataCloneError' }));
  });
});

describe('messagePortChannel', () => {
  it('reports the other side closing, and a port closed already', async () => {
    const { port1, port2 } = new MessageChannel();
    const channel = messagePortChannel(port1);
    const closed = new Promise<void>((resolve) => channel.onClose!(resolve));
    port2.close();
    await closed;
    await expect(new Promise<void>((resolve) => channel.onClose!(resolve))).resolves.toBeUndefined();
    port1.close();
  });
});
