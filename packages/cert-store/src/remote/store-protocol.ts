/**
 * The messages of the remote store. Every message carries `certsmithStore: 1`, because the channel
 * is shared: over cluster IPC, prom-client's `AggregatorRegistry` and the server's own messages
 * travel on the same `worker.send`/`process.send`, and each side ignores what is not tagged as
 * its own (and a store message is ignored by everyone else's listeners, which look for their own
 * tags). A client names itself with a random `session` in every message, so that a new client on
 * the same channel (after the old one was dropped) never takes the answers meant for the old one,
 * and the owner can drop one client's subscriptions without touching another's.
 */
import type { Store } from '../store.js';
import type { WireError } from './wire-errors.js';

/** The tag and protocol version every message of the remote store carries. */
export const STORE_MESSAGE_TAG = 'certsmithStore';
export const STORE_PROTOCOL_VERSION = 1;

/** The {@link Store} methods that travel as calls (`watchChanges` and `close` have protocol calls of their own). */
export type StoreCallMethod = Exclude<keyof Store, 'driver' | 'watchChanges' | 'close'>;

/**
 * Every {@link StoreCallMethod}: the owner answers nothing else (a message is data, not code to
 * run). A record of every method rather than a list, so that a method added to `Store` does not
 * compile until it is listed here.
 */
const CALL_METHODS: Record<StoreCallMethod, true> = {
  recordCertificate: true,
  insertCertificate: true,
  getCertificate: true,
  findCertificate: true,
  listCertificates: true,
  listCertificateSummaries: true,
  listCertificatesJson: true,
  revokeCertificate: true,
  tidy: true,
  countCertificates: true,
  countExpiring: true,
  upsertOcspResponse: true,
  getOcspResponse: true,
  listOcspResponses: true,
  nextCrlNumber: true,
  ping: true,
};
export const STORE_CALL_METHODS: ReadonlySet<string> = new Set(Object.keys(CALL_METHODS));

/**
 * Calls of the protocol itself: `watch` starts a change subscription held by the owner (its id is
 * the call's id; args: the options that can be cloned), `unwatch` ends one (args: its id; answered
 * once the owner's subscription is closed), `release` drops everything of the session (the client
 * closed; not answered), `alive` is answered by the owner's server at once, without the store (the
 * client's probe of an owner that has been silent while calls wait), `checkpoint` tells the owner
 * that the client committed enough issued rows to the owner's SQLite WAL itself that the owner's
 * store should checkpoint it (not answered; `direct-records.ts`).
 */
export type ProtocolMethod = 'watch' | 'unwatch' | 'release' | 'alive' | 'checkpoint';

/** One call: `args` are encoded with `toWire`. `recordCertificate` is answered with the record's `issuedAt` only. */
export interface WireCall {
  id: number;
  method: StoreCallMethod | ProtocolMethod;
  args: unknown[];
}

/** What the owner sends back: an answer to a call, or a change / an error of a subscription. */
export type WireReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError }
  | { watch: number; change: unknown }
  | { watch: number; error: WireError };

/** Client → owner: the calls of one event-loop turn. */
export interface CallsMessage {
  certsmithStore: typeof STORE_PROTOCOL_VERSION;
  session: string;
  calls: WireCall[];
}

/** Owner → client: the replies to one session that were ready in one turn, in order. */
export interface RepliesMessage {
  certsmithStore: typeof STORE_PROTOCOL_VERSION;
  session: string;
  replies: WireReply[];
}

/** Owner → every client: the owner stopped serving (its `close()`); calls fail at once from now on. */
export interface StoppedMessage {
  certsmithStore: typeof STORE_PROTOCOL_VERSION;
  stopped: true;
}

/** True for a message of this protocol (any other user's message on the channel is not). */
export function isStoreMessage(message: unknown): message is Record<string, unknown> {
  return typeof message === 'object' && message !== null && (message as Record<string, unknown>)[STORE_MESSAGE_TAG] === STORE_PROTOCOL_VERSION;
}
