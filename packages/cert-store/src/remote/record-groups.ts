/**
 * Group commit across the channel, on the client's side. A message over node IPC costs ≈250–300 µs
 * of CPU per round trip (both processes) against ≈10 µs per row it carries (docs/performance.md,
 * "The store over IPC"), so the cost of a recorded certificate is mostly the number of messages.
 * Sending each turn's records at once gives 1–4 rows a message under HTTP load (one turn's
 * finished requests); holding them while a group is unanswered gives everything that finished
 * during one round trip. Idle, nothing is in flight and a record goes in its turn's message: no
 * waiting is added where there is nothing to gather.
 *
 * Only `recordCertificate` is held: it is the call of every issued certificate (the owner's store
 * batches it into one transaction per group anyway), and a caller awaits its answer before anything
 * reads the row. Reads, revocations and the rest are rare or must not wait behind a commit; they go
 * in their turn's message as before.
 */
import type { WireCall } from './store-protocol.js';

/** Default {@link RecordGroups} in flight: one answered round trip gathers the next group. */
export const DEFAULT_RECORD_GROUPS_IN_FLIGHT = 1;

/** The record calls of one client: waiting, or sent in a group whose answers are not all in. */
export class RecordGroups {
  readonly #maxInFlight: number;
  readonly #onSlotFree: () => void;
  #waiting: WireCall[] = [];
  #inFlight = 0;
  /** Call id → its group's count of unanswered calls (shared by the calls of one group). */
  readonly #groupOf = new Map<number, { unanswered: number }>();

  /**
   * @param maxInFlight groups sent and not fully answered at most (≥ 1).
   * @param onSlotFree a group's last call settled while calls wait: the client should send them.
   */
  constructor(maxInFlight: number, onSlotFree: () => void) {
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`maxRecordGroupsInFlight must be an integer ≥ 1, got ${maxInFlight}`);
    this.#maxInFlight = maxInFlight;
    this.#onSlotFree = onSlotFree;
  }

  /** Calls waiting for a group. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Whether a group may be sent now. */
  get canSend(): boolean {
    return this.#inFlight < this.#maxInFlight;
  }

  hold(call: WireCall): void {
    this.#waiting.push(call);
  }

  /**
   * The waiting calls still wanted (`stillPending`: one that timed out while waiting is not), as one
   * group in flight; none while the groups in flight are at the limit.
   */
  take(stillPending: (id: number) => boolean): WireCall[] {
    if (!this.canSend || this.#waiting.length === 0) return [];
    const calls = this.#waiting.filter((call) => stillPending(call.id));
    this.#waiting = [];
    if (calls.length === 0) return calls;
    const group = { unanswered: calls.length };
    for (const call of calls) this.#groupOf.set(call.id, group);
    this.#inFlight += 1;
    return calls;
  }

  /**
   * A call settled (answered, failed, timed out). The group's last one frees its slot, whatever the
   * outcomes: an error fails only the calls of its group, and the next group goes.
   */
  settled(id: number): void {
    const group = this.#groupOf.get(id);
    if (group === undefined) return;
    this.#groupOf.delete(id);
    group.unanswered -= 1;
    if (group.unanswered > 0) return;
    this.#inFlight -= 1;
    if (this.#waiting.length > 0) this.#onSlotFree();
  }

  /** Forget the waiting calls (the client failed for good; their callers are told by the client). */
  clear(): void {
    this.#waiting = [];
  }
}
