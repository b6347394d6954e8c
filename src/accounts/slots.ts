/**
 * Per-account concurrency slots (SPEC A-4): at most `limit` attempts in flight per account; a request
 * that finds every slot taken waits in a FIFO queue up to the slot timeout (15 s by default), then gives
 * up so the attempt loop moves to another account. O(1) per acquire/release (a timed-out waiter is
 * removed from its queue in O(waiters of that account)); no global lock — each account has its own
 * counter and queue.
 */
import type { Clock } from "../../pipeline/ports.ts";

/** SPEC A-4: how long a request waits for a slot before moving on, ms. */
export const SLOT_WAIT_MS = 15_000;

interface Waiter {
  grant: (release: () => void) => void;
}

interface Account {
  inUse: number;
  waiters: Waiter[];
}

/** A release function; calling it more than once is harmless. */
export type Release = () => void;

/** Concurrency slots of every account, keyed by account id. */
export class Slots {
  private readonly m = new Map<string, Account>();

  private of(id: string): Account {
    let a = this.m.get(id);
    if (!a) {
      a = { inUse: 0, waiters: [] };
      this.m.set(id, a);
    }
    return a;
  }

  /** Slots in use by an account. */
  inUse(id: string): number {
    return this.m.get(id)?.inUse ?? 0;
  }

  /** Requests waiting for a slot of an account. */
  waiting(id: string): number {
    return this.m.get(id)?.waiters.length ?? 0;
  }

  /** Whether every slot is taken (`limit` undefined = unlimited, never full). */
  full(id: string, limit: number | undefined): boolean {
    return limit !== undefined && this.inUse(id) >= limit;
  }

  private releaser(id: string): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const a = this.of(id);
      const next = a.waiters.shift();
      if (next) next.grant(this.releaser(id));
      else a.inUse = Math.max(0, a.inUse - 1);
    };
  }

  /**
   * Takes a slot of account `id` with at most `limit` in flight (undefined = unlimited). Waits up to
   * `waitMs` for one to free (FIFO); resolves undefined when none did or `signal` aborted.
   */
  async acquire(id: string, limit: number | undefined, signal: AbortSignal, waitMs: number, clock: Clock): Promise<Release | undefined> {
    const a = this.of(id);
    if (signal.aborted) return undefined;
    if (limit === undefined || (a.inUse < limit && a.waiters.length === 0)) {
      a.inUse++;
      return this.releaser(id);
    }
    if (waitMs <= 0) return undefined;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    let granted: Release | undefined;
    const waiter: Waiter = {
      grant: (release) => {
        granted = release;
        stop.abort();
      },
    };
    a.waiters.push(waiter);
    try {
      await clock.sleep(waitMs, stop.signal);
    } catch {
      // woken by a grant or by the client going away
    } finally {
      signal.removeEventListener("abort", onAbort);
      const i = a.waiters.indexOf(waiter);
      if (i >= 0) a.waiters.splice(i, 1);
    }
    if (granted && signal.aborted) {
      granted();
      return undefined;
    }
    return granted;
  }
}
