/**
 * The owning side of a remote store: the process that opened the store (in `serve --processes N`,
 * the primary, which alone holds the SQLite writer or the PostgreSQL pool) answers the calls one
 * peer sends over a {@link StoreChannel}. The calls of one incoming message are started together,
 * so the `recordCertificate` calls a worker process made in one turn join the store's batch of this
 * turn (one transaction); the answers that are ready in one turn go back as one message.
 */
import type { ChangeSubscription, RecordCertificateInput, WatchChangesOptions } from '../model.js';
import type { Store } from '../store.js';
import { StoreError, StoreUnavailableError } from '../errors.js';
import { SqliteStore } from '../sqlite/sqlite-store.js';
import type { StoreChannel } from './store-channel.js';
import { STORE_CALL_METHODS, STORE_PROTOCOL_VERSION, isStoreMessage } from './store-protocol.js';
import type { RepliesMessage, StoppedMessage, WireCall, WireReply } from './store-protocol.js';
import { errorToWire } from './wire-errors.js';
import { fromWire, toWire } from './wire-values.js';

/** A store being served over one channel ({@link serveStore}). */
export interface StoreServer {
  /**
   * Stop serving: calls arriving from now on fail with 503, the answers of calls already started
   * are still sent, then every client is told the owner stopped (their calls fail at once instead
   * of waiting for their timeout) and the subscriptions are closed. Never closes the store itself:
   * its owner does that, after this. Resolves when all of that is done.
   */
  close(): Promise<void>;
}

/** What the owner keeps per client. */
interface Session {
  /** The client's change subscriptions, by the id the client gave them. */
  watches: Map<number, ChangeSubscription>;
}

/**
 * Answer the {@link Store} calls a {@link connectStore} client makes over `channel`, with `store`.
 * One server per peer; several may serve the same store. A client that goes away (the channel
 * closes, or the client sends `release` from its `close()`) has its subscriptions closed; a
 * client's `close()` never closes `store`.
 */
export function serveStore(store: Store, channel: StoreChannel): StoreServer {
  const sessions = new Map<string, Session>();
  const outgoing = new Map<string, WireReply[]>();
  let flushScheduled = false;
  let inFlight = 0;
  let onIdle: (() => void) | null = null;
  let stopping = false;
  let peerGone = false;
  let closing: Promise<void> | null = null;

  const sessionOf = (id: string): Session => {
    let session = sessions.get(id);
    if (session === undefined) {
      session = { watches: new Map() };
      sessions.set(id, session);
    }
    return session;
  };

  const flush = () => {
    flushScheduled = false;
    for (const [session, replies] of outgoing) sendReplies(session, replies);
    outgoing.clear();
  };

  const sendReplies = (session: string, replies: WireReply[]) => {
    if (peerGone) return;
    try {
      channel.send({ certsmithStore: STORE_PROTOCOL_VERSION, session, replies } satisfies RepliesMessage);
    } catch (error) {
      // A value that cannot be cloned fails its own reply, not the others sent with it.
      if (replies.length > 1) {
        for (const reply of replies) sendReplies(session, [reply]);
      } else if (replies[0] !== undefined && 'id' in replies[0] && replies[0].ok) {
        sendReplies(session, [{ id: replies[0].id, ok: false, error: errorToWire(new StoreError(`the store's answer cannot be sent to its client: ${(error as Error).message}`)) }]);
      }
    }
  };

  const reply = (session: string, answer: WireReply) => {
    let replies = outgoing.get(session);
    if (replies === undefined) {
      replies = [];
      outgoing.set(session, replies);
    }
    replies.push(answer);
    if (!flushScheduled) {
      flushScheduled = true;
      // The answers of one turn (a committed batch resolves all its calls in one turn) go together.
      setImmediate(flush);
    }
  };

  const answer = (session: string, id: number, work: () => Promise<unknown> | unknown) => {
    inFlight += 1;
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(work());
    } catch (error) {
      result = Promise.reject(error);
    }
    result
      .then(
        (value) => reply(session, { id, ok: true, value: toWire(value) }),
        (error: unknown) => reply(session, { id, ok: false, error: errorToWire(error) }),
      )
      .finally(() => {
        inFlight -= 1;
        if (inFlight === 0) onIdle?.();
      });
  };

  const watch = (sessionId: string, call: WireCall) => {
    const [watchId, given] = call.args as [number, WatchChangesOptions | undefined];
    const session = sessionOf(sessionId);
    // A client subscribes again under the same id when its first request timed out; the
    // subscription may exist already (the owner was only slow), and must not deliver twice.
    if (session.watches.has(watchId)) {
      answer(sessionId, call.id, () => undefined);
      return;
    }
    answer(sessionId, call.id, () => {
      const options: WatchChangesOptions = {
        ...(given?.pollIntervalMs === undefined ? {} : { pollIntervalMs: given.pollIntervalMs }),
        ...(given?.afterId === undefined ? {} : { afterId: given.afterId }),
        onError: (error) => reply(sessionId, { watch: watchId, error: errorToWire(error) }),
      };
      session.watches.set(
        watchId,
        store.watchChanges((change) => reply(sessionId, { watch: watchId, change: toWire(change) }), options),
      );
    });
  };

  const unwatch = (sessionId: string, call: WireCall) => {
    const [watchId] = call.args as [number];
    const session = sessions.get(sessionId);
    const subscription = session?.watches.get(watchId);
    session?.watches.delete(watchId);
    // Answered once closed: the changes it delivered before are already queued ahead of this answer.
    answer(sessionId, call.id, async () => await subscription?.close());
  };

  const release = (sessionId: string) => {
    const session = sessions.get(sessionId);
    sessions.delete(sessionId);
    if (session !== undefined) void closeWatches(session);
  };

  const handle = (sessionId: string, call: WireCall) => {
    if (call.method === 'release') {
      release(sessionId);
    } else if (call.method === 'checkpoint') {
      // A notice, not answered: the client committed rows to this store's WAL file on a connection
      // of its own (`direct-records.ts`); this store's thread checkpoints them with its own rows.
      if (store instanceof SqliteStore) store.checkpointForOthers();
    } else if (call.method === 'alive') {
      // Liveness of this process, not of the store: answered even while store calls are slow.
      reply(sessionId, { id: call.id, ok: true, value: undefined });
    } else if (stopping) {
      reply(sessionId, { id: call.id, ok: false, error: errorToWire(new StoreUnavailableError('the certificate store is shutting down')) });
    } else if (call.method === 'watch') {
      watch(sessionId, call);
    } else if (call.method === 'unwatch') {
      unwatch(sessionId, call);
    } else if (call.method === 'recordCertificate') {
      const input = fromWire(call.args[0]) as RecordCertificateInput;
      // A recorded row's record is the row as given plus the time the owner wrote it (both drivers
      // answer rowToRecord(issuedCertificateRow(input, now))), and the client has the row: only the
      // time goes back, which halves the bytes per row on the channel (the PEM does not return).
      answer(sessionId, call.id, async () => (await store.recordCertificate(input)).issuedAt);
    } else if (STORE_CALL_METHODS.has(call.method)) {
      const method = store[call.method] as (...args: unknown[]) => Promise<unknown>;
      const args = call.args.map(fromWire);
      answer(sessionId, call.id, () => method.apply(store, args));
    } else {
      reply(sessionId, { id: call.id, ok: false, error: errorToWire(new StoreError(`unknown certificate store call ${JSON.stringify(call.method)}`)) });
    }
  };

  const receive = (message: unknown) => {
    if (!isStoreMessage(message) || peerGone) return;
    const { session, calls } = message;
    if (typeof session !== 'string' || !Array.isArray(calls)) return;
    for (const call of calls as WireCall[]) {
      if (typeof call === 'object' && call !== null && typeof call.id === 'number' && Array.isArray(call.args)) handle(session, call);
    }
  };

  const closeAllWatches = async () => {
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.all(all.map(closeWatches));
  };

  const stopListening = channel.onMessage(receive);
  const stopWatchingClose = channel.onClose?.(() => {
    // The client is gone: nothing more can reach it, so its subscriptions stop; calls in progress
    // still finish in the store (a started commit is not abandoned), their answers are dropped.
    peerGone = true;
    outgoing.clear();
    void closeAllWatches();
  });

  return {
    close() {
      closing ??= (async () => {
        stopping = true;
        // Their answers are still owed to a client that is there; to one that is gone, nothing is.
        if (inFlight > 0 && !peerGone) await new Promise<void>((resolve) => (onIdle = resolve));
        flush();
        if (!peerGone) {
          try {
            channel.send({ certsmithStore: STORE_PROTOCOL_VERSION, stopped: true } satisfies StoppedMessage);
          } catch {
            // The peer is gone: nobody to tell.
          }
        }
        await closeAllWatches();
        stopListening();
        stopWatchingClose?.();
      })();
      return closing;
    },
  };
}

/** Close a session's subscriptions; a subscription that fails to close is gone anyway. */
async function closeWatches(session: Session): Promise<void> {
  const watches = [...session.watches.values()];
  session.watches.clear();
  await Promise.all(watches.map(async (watch) => await watch.close().catch(() => undefined)));
}
