/**
 * Takes a concurrency slot of an account (SPEC A-4) for one attempt: a local slot (slots.ts), waiting up
 * to the slot timeout for one to free, and with a shared store (SPEC D-2) for a limited account also a
 * lease in the database (shared-slot.ts), so that the limit holds across every instance; while the
 * database cannot be reached the local slot alone counts.
 */
import type { Clock } from "../../pipeline/ports.ts";
import type { Store } from "../store/types.ts";
import { sharedSlot } from "./shared-slot.ts";
import type { Slots } from "./slots.ts";

/**
 * The release of a slot of `accountId` (`limit` slots; undefined = unlimited), or undefined when none
 * freed within `waitMs` (or `signal` aborted). `answerMs`: how long a lease waits for the shared store's
 * answer. The release gives back the local slot and the lease (its failure ignored); never throws.
 */
export async function takeSlot(slots: Slots, store: Store | undefined, clock: Clock, accountId: string, limit: number | undefined, signal: AbortSignal, waitMs: number, answerMs: number): Promise<(() => void) | undefined> {
  const deadline = Date.now() + waitMs;
  const release = await slots.acquire(accountId, limit, signal, waitMs, clock);
  if (!release || limit === undefined || store?.shared !== true) return release;
  const lease = await sharedSlot(store, accountId, limit, signal, deadline, answerMs);
  if (lease === null) {
    release();
    return undefined;
  }
  return () => {
    release();
    if (lease !== undefined) void Promise.resolve(store.releaseLease(lease)).catch(() => {});
  };
}
