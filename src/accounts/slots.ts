/**
 * Per-account concurrency slots (SPEC A-4): at most `limit` attempts in flight per account; a request
 * that finds every slot taken waits (FIFO) up to the slot timeout (15 s by default), then gives up so
 * the attempt loop moves to another account. Each limited account has its own Effect semaphore
 * (`Effect.makeSemaphore`, FIFO takes) and the wait is `Effect.timeoutOption`; a client that goes away
 * interrupts its wait through the AbortSignal. Unlimited accounts only count. No global lock. Effect
 * is loaded by the first acquire on a limited account (src/memory/lazy-effect.ts).
 */
import type * as Effect from "effect/Effect";
import type * as Option from "effect/Option";
import type { Clock } from "../../pipeline/ports.ts";
import { effectIfLoaded, loadEffect, type EffectModules } from "../memory/lazy-effect.ts";

/** SPEC A-4: how long a request waits for a slot before moving on, ms. */
export const SLOT_WAIT_MS = 15_000;

interface Account {
  inUse: number;
  waiting: number;
  /** Present for limited accounts; sized to `limit`. */
  sem?: Effect.Semaphore;
  limit?: number;
  /** {@link Slots.takeUnlimited}'s release of this account, made by its first take. */
  free?: Release;
}

/**
 * Gives back one slot taken. Call it exactly once per take: {@link Slots.acquire}'s own releases ignore
 * a second call, but {@link Slots.takeUnlimited}'s is one shared function per account, unguarded, so a
 * second call would free another take's slot (the count only: nothing waits on an unlimited account).
 */
export type Release = () => void;

/** Concurrency slots of every account, keyed by account id. */
export class Slots {
  private readonly m = new Map<string, Account>();

  private of(id: string, limit: number | undefined, E: EffectModules | undefined): Account {
    let a = this.m.get(id);
    if (!a) {
      a = { inUse: 0, waiting: 0 };
      this.m.set(id, a);
    }
    if (limit !== undefined && a.limit !== limit && E) {
      // A config reload changed the limit: permits already taken stay taken.
      const { Effect } = E;
      if (!a.sem) a.sem = Effect.runSync(Effect.makeSemaphore(Math.max(0, limit - a.inUse)));
      else Effect.runSync(a.sem.resize(Math.max(0, limit - a.inUse)));
      a.limit = limit;
    } else if (limit === undefined && a.sem) {
      a.sem = undefined;
      a.limit = undefined;
    }
    return a;
  }

  /** Slots in use by an account. */
  inUse(id: string): number {
    return this.m.get(id)?.inUse ?? 0;
  }

  /** Requests waiting for a slot of an account. */
  waiting(id: string): number {
    return this.m.get(id)?.waiting ?? 0;
  }

  /** Whether every slot is taken (`limit` undefined = unlimited, never full). */
  full(id: string, limit: number | undefined): boolean {
    return limit !== undefined && this.inUse(id) >= limit;
  }

  private releaser(a: Account, sem: Effect.Semaphore | undefined): Release {
    // `var`, not `let`: the callback's variables then share one scope with the parameters (a captured
    // top-level `let` gets a second scope object per call: docs/performance.md item 260).
    var done = false;
    return () => {
      if (done) return;
      done = true;
      a.inUse = Math.max(0, a.inUse - 1);
      // A permit goes back to the semaphore it came from (a resize may have replaced nothing); a
      // semaphore exists only once Effect is loaded.
      if (sem && sem === a.sem) effectIfLoaded()!.Effect.runSync(sem.release(1));
    };
  }

  /**
   * Takes a slot of an account without a limit (it only counts, nothing waits): what {@link acquire}
   * does for one, without its promise. The release is one function per account (no closure per take:
   * docs/performance.md item 268), so, unlike {@link acquire}'s, the caller calls it once per take.
   */
  takeUnlimited(id: string): Release {
    const a = this.of(id, undefined, undefined);
    a.inUse++;
    return (a.free ??= freeOne(a));
  }

  /**
   * Takes a slot of account `id` with at most `limit` in flight (undefined = unlimited). Waits up to
   * `waitMs` for one to free (FIFO); resolves undefined when none did or `signal` aborted.
   * `_clock` is accepted for interface symmetry; the wait runs on Effect's clock.
   */
  async acquire(id: string, limit: number | undefined, signal: AbortSignal, waitMs: number, _clock?: Clock): Promise<Release | undefined> {
    // Unlimited accounts never need Effect; a limited one loads it once (no wait once it is loaded).
    const E = limit === undefined ? undefined : (effectIfLoaded() ?? (await loadEffect()));
    const a = this.of(id, limit, E);
    if (signal.aborted) return undefined;
    const sem = a.sem;
    if (!sem) {
      a.inUse++;
      return this.releaser(a, undefined);
    }
    const { Duration, Effect, Option } = E!;
    if (waitMs <= 0) {
      const got = Effect.runSync(sem.withPermitsIfAvailable(1)(Effect.void));
      if (Option.isNone(got)) return undefined;
      Effect.runSync(sem.take(1));
      a.inUse++;
      return this.releaser(a, sem);
    }
    a.waiting++;
    let taken: Option.Option<number>;
    try {
      taken = await Effect.runPromise(sem.take(1).pipe(Effect.timeoutOption(Duration.millis(waitMs))), { signal });
    } catch {
      taken = Option.none(); // interrupted: the client went away
    } finally {
      a.waiting--;
    }
    if (Option.isNone(taken)) return undefined;
    a.inUse++;
    const release = this.releaser(a, sem);
    if (signal.aborted) {
      release();
      return undefined;
    }
    return release;
  }
}

/** The release of an account's slots taken without a limit: one fewer in use (never below 0). */
function freeOne(a: Account): Release {
  return () => {
    a.inUse = Math.max(0, a.inUse - 1);
  };
}
