import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SharedListener } from './shared-listener.js';
import type { ConnectionTarget } from './shared-listener.js';

/** A target that keeps the sockets it takes (or refuses them all). */
function collecting(accepts = true): ConnectionTarget & { sockets: Socket[] } {
  const sockets: Socket[] = [];
  return { sockets, take: (socket) => (accepts ? (sockets.push(socket), true) : false) };
}

/** Open `count` connections, one after the other, and wait until each is accepted (or closed by the listener). */
async function open(port: number, count: number): Promise<Socket[]> {
  const clients: Socket[] = [];
  for (let index = 0; index < count; index++) {
    const client = connect(port, '127.0.0.1');
    client.on('error', () => undefined);
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    clients.push(client);
  }
  return clients;
}

const until = async (check: () => boolean): Promise<void> => {
  for (let tries = 0; tries < 200 && !check(); tries++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
};

let listener: SharedListener | null = null;
const clients: Socket[] = [];
afterEach(() => {
  listener?.close();
  for (const client of clients.splice(0)) client.destroy();
});

describe('SharedListener', () => {
  it('hands connections to its targets in turn, paused', async () => {
    listener = new SharedListener({ maxConnections: 0 });
    const [first, second] = [collecting(), collecting()];
    listener.add(first);
    listener.add(second);
    const { port } = await listener.listen(0, '127.0.0.1');
    clients.push(...(await open(port, 4)));
    await until(() => first.sockets.length + second.sockets.length === 4);
    expect([first.sockets.length, second.sockets.length]).toEqual([2, 2]);
    expect(first.sockets[0]!.isPaused()).toBe(true);
    expect(listener.connections).toBe(4);
  });

  it('skips a target that cannot take a connection', async () => {
    listener = new SharedListener({ maxConnections: 0 });
    const [gone, alive] = [collecting(false), collecting()];
    listener.add(gone);
    listener.add(alive);
    const { port } = await listener.listen(0, '127.0.0.1');
    clients.push(...(await open(port, 3)));
    await until(() => alive.sockets.length === 3);
    expect(listener.connections).toBe(3);
  });

  it('refuses connections over maxConnections across targets, and takes them again once some are released', async () => {
    let drops = 0;
    listener = new SharedListener({ maxConnections: 2, onDrop: () => drops++ });
    const [first, second] = [collecting(), collecting()];
    listener.add(first);
    listener.add(second);
    const { port } = await listener.listen(0, '127.0.0.1');
    clients.push(...(await open(port, 3)));
    await until(() => drops === 1);
    expect(first.sockets.length + second.sockets.length).toBe(2);
    first.sockets[0]!.destroy();
    listener.released(first);
    clients.push(...(await open(port, 1)));
    await until(() => first.sockets.length + second.sockets.length === 3);
    expect(drops).toBe(1);
  });

  it('forgets the connections of a target whose process is gone', async () => {
    listener = new SharedListener({ maxConnections: 0 });
    const [first, second] = [collecting(), collecting()];
    listener.add(first);
    listener.add(second);
    const { port } = await listener.listen(0, '127.0.0.1');
    clients.push(...(await open(port, 4)));
    await until(() => listener!.connections === 4);
    listener.remove(second, { gone: true });
    expect(listener.connections).toBe(2);
    clients.push(...(await open(port, 2)));
    await until(() => first.sockets.length === 4);
    expect(second.sockets).toHaveLength(2);
  });

  it('rejects with the listen error of a port in use, in node\'s words', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      listener = new SharedListener({ maxConnections: 0 });
      const { port } = taken.address() as AddressInfo;
      await expect(listener.listen(port, '127.0.0.1')).rejects.toThrow(`listen EADDRINUSE: address already in use 127.0.0.1:${port}`);
    } finally {
      taken.close();
    }
  });

  it('refuses a negative connection limit', () => {
    expect(() => new SharedListener({ maxConnections: -1 })).toThrow(RangeError);
  });
});
