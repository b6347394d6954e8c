/**
 * A concurrency slot across instances (SPEC A-4, D-2): with a shared store a limited account's slot is
 * also a lease in the database, asked for until the slot wait ends. Split from registry.ts (2026-12-05).
 */
import type { Store } from "../store/types.ts";
import { answerWithin } from "../store/shared.ts";

/** How often a request waiting for a slot held by another instance asks again (SPEC D-2), ms. */
export const SHARED_SLOT_POLL_MS = 50;

/**
 * A lease on one of the account's `limit` slots across instances, polling every
 * {@link SHARED_SLOT_POLL_MS} until `deadline` (ms since the epoch, wall clock): the lease id, null when
 * none freed in time (or the client went away), or undefined when the shared database cannot be reached
 * or does not answer within `answerMs` (local counting only).
 */
export async function sharedSlot(store: Store, accountId: string, limit: number, signal: AbortSignal, deadline: number, answerMs: number): Promise<string | null | undefined> {
  for (;;) {
    let id: string | undefined;
    try {
      // A database that does not answer in time counts as away: this request uses the local slot
      // alone, and a lease granted after all is given back at once (it would otherwise be renewed).
      const got = await answerWithin(Promise.resolve(store.tryLease(`account:${accountId}`, limit)), answerMs, (late) => {
        if (late !== undefined) void Promise.resolve(store.releaseLease(late)).catch(() => {});
      });
      if (!got) return undefined;
      id = got.value;
    } catch {
      return undefined;
    }
    if (id !== undefined) {
      if (!signal.aborted) return id;
      void Promise.resolve(store.releaseLease(id)).catch(() => {});
      return null;
    }
    if (signal.aborted || Date.now() >= deadline) return null;
    await Bun.sleep(Math.min(SHARED_SLOT_POLL_MS, Math.max(1, deadline - Date.now())));
  }
}
