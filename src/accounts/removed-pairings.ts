/**
 * Removed account/model pairings (SPEC 6.3: a model-scoped 403 or a 404 model not found removes the
 * pairing of that model with that account): the registry's memory of them. A removal lasts 24 h
 * ({@link REMOVED_PAIRING_MS}), is kept across restarts by the store, ends on its own at its end (the
 * registry's end timer publishes `model_restored`) and can be restored by hand (`switchyard accounts
 * restore`, `POST /admin/api/accounts/{id}/restore`), and is lifted when a configuration re-read changes
 * its provider's `base_url` or `kind` ({@link RemovedPairings.lift}). This module holds the state and its rules only;
 * the registry writes through to the store and publishes the events.
 */
import type { RemovedModel } from "../store/types.ts";

/** How long a removed account/model pairing (SPEC 6.3: model-scoped 403, 404 model not found) lasts, ms (24 h):
 * a model missing during a provider's rollout is tried again then; `switchyard accounts restore` restores it now. */
export const REMOVED_PAIRING_MS = 24 * 60 * 60_000;

/** One removal held in memory: its end (ms since the epoch; null only for a row of unknown start) and why. */
export interface Removal {
  until: number | null;
  reason: string;
}

/** A removal as {@link RemovedPairings.live} lists it (for `accounts status` and the dashboard). */
export interface LiveRemoval extends Removal {
  accountId: string;
  model: string;
}

/** The removed pairings of every account, keyed by (account id, model). Every method is O(removals) at most. */
export class RemovedPairings {
  private readonly map = new Map<string, Removal>();
  /** Pairs a restore is under way for (key → restores in flight): a re-read that drops one leaves it to the restore to announce. */
  private readonly restoring = new Map<string, number>();
  /** Pairs a re-read dropped while a restore of theirs was under way, for that restore to announce. */
  private readonly dropped = new Set<string>();
  /** When {@link lift} last lifted each account's removals (ms since the epoch), by account id. */
  private readonly liftedAt = new Map<string, number>();

  /** How many removals are held (ended ones included until {@link expire} drops them). */
  get size(): number {
    return this.map.size;
  }

  /**
   * Replaces every removal with the store's rows (at start and on each periodic re-read). A row stored
   * without an end (before 2026-12-04 they had none) ends 24 h after it began, as a new one does.
   * `waiting(pair)` (pair: `ACCOUNT␀MODEL`) says that a write of the pair's row the store refused waits
   * to be written again (src/accounts/retry-writes.ts): memory is the truth for that pair, kept as it is.
   */
  load(rows: readonly Required<RemovedModel>[], waiting?: (pair: string) => boolean): void {
    const kept = waiting ? [...this.map].filter(([k]) => waiting(k)) : [];
    this.map.clear();
    const lifted = this.liftedAt;
    for (const r of rows) {
      if (lifted.size > 0 && r.since <= (lifted.get(r.accountId) ?? -Infinity)) continue;
      const k = pairKey(r.accountId, r.model);
      if (!waiting?.(k)) this.map.set(k, { until: r.until ?? r.since + REMOVED_PAIRING_MS, reason: r.reason });
    }
    for (const [k, r] of kept) this.map.set(k, r);
  }

  /**
   * {@link load}, answering the removals that held at `now` (ms since the epoch) before and are not among
   * `rows`: restored elsewhere (another instance sharing the store, SPEC D-2; the store lays this
   * instance's own writes still on their way over what it read, so a removal made here is not missed).
   * `waiting` as {@link load} takes it (a pair whose write waits is never announced).
   */
  loadGone(rows: readonly Required<RemovedModel>[], now: number, waiting?: (pair: string) => boolean): LiveRemoval[] {
    const before = this.map.size > 0 ? this.live(now) : [];
    this.load(rows, waiting);
    const gone = before.filter((r) => !this.map.has(pairKey(r.accountId, r.model)));
    if (this.restoring.size === 0) return gone;
    // One this instance is restoring is not restored elsewhere: its restore announces it.
    return gone.filter((r) => {
      const k = pairKey(r.accountId, r.model);
      if (!this.restoring.has(k)) return true;
      this.dropped.add(k);
      return false;
    });
  }

  /**
   * Restores the account's removals — `model`'s, else all — around `write` (the store's delete, awaited
   * first so that the next re-read does not bring them back): `restored`, the models of those that held
   * when it was asked (sorted; empty when none), and `announce`, those this call ends in memory, to be
   * published once (a re-read that dropped one while `write` ran, which sees the store's delete, leaves it
   * to this call: it answered `restored: []` and announced the operator's restore as "restored
   * elsewhere"). `now` reads the clock (ms since the epoch). @throws what `write` throws (memory is then
   * left as the store left it).
   */
  async restoreAround(accountId: string, model: string | undefined, now: () => number, write: () => Promise<void>): Promise<{ restored: string[]; announce: string[] }> {
    const asked: string[] = [];
    for (const r of this.live(now())) {
      if (r.accountId !== accountId || (model !== undefined && r.model !== model)) continue;
      asked.push(r.model);
      const k = pairKey(accountId, r.model);
      this.restoring.set(k, (this.restoring.get(k) ?? 0) + 1);
    }
    const announce: string[] = [];
    try {
      await write();
    } finally {
      for (const m of asked) {
        const k = pairKey(accountId, m);
        const n = (this.restoring.get(k) ?? 1) - 1;
        if (n > 0) this.restoring.set(k, n);
        else this.restoring.delete(k);
        if (this.dropped.delete(k)) announce.push(m);
      }
    }
    announce.push(...this.restore(accountId, model, now()));
    return { restored: [...new Set([...asked, ...announce])].sort(), announce };
  }

  /** Removes `model` from the account from `now` (ms) for 24 h, replacing any removal of the pair: its end (ms since the epoch). */
  remove(accountId: string, model: string, reason: string, now: number): number {
    const until = now + REMOVED_PAIRING_MS;
    this.map.set(pairKey(accountId, model), { until, reason });
    return until;
  }

  /** The pair's removal when it still holds at `now` (ms since the epoch), else undefined. O(1). */
  active(accountId: string, model: string, now: number): Removal | undefined {
    // Empty while nothing was removed: no key string built then.
    const r = this.map.size > 0 ? this.map.get(pairKey(accountId, model)) : undefined;
    return r && (r.until === null || r.until > now) ? r : undefined;
  }

  /** The ends (ms since the epoch) of every removal that has one, for the registry's end timer. */
  ends(): number[] {
    const out: number[] = [];
    for (const r of this.map.values()) if (r.until !== null) out.push(r.until);
    return out;
  }

  /**
   * Drops every removal over at `now` (ms since the epoch); calls `ended` for each that ended after
   * `from` (those before were announced already), and `pending` with the end of each that still holds.
   * A removal without an end stays.
   */
  expire(from: number, now: number, ended: (accountId: string, model: string, reason: string) => void, pending: (until: number) => void): void {
    for (const [k, r] of this.map) {
      const until = r.until ?? Infinity;
      if (until > now) {
        pending(until);
        continue;
      }
      this.map.delete(k); // the model is tried on this account again
      const [accountId, model] = splitKey(k);
      if (until > from) ended(accountId, model, r.reason);
    }
  }

  /**
   * Drops the account's removals — `model`'s, else all — from memory: the models of those that still held
   * at `now` (ms since the epoch), in the order they were removed (one already over was announced by the
   * end timer).
   */
  restore(accountId: string, model: string | undefined, now: number): string[] {
    const out: string[] = [];
    for (const [k, r] of this.map) {
      const [id, m] = splitKey(k);
      if (id !== accountId || (model !== undefined && m !== model)) continue;
      this.map.delete(k);
      if (r.until === null || r.until > now) out.push(m);
    }
    return out;
  }

  /**
   * Lifts every removal of the accounts `accountIds` at `now` (ms since the epoch): their provider's
   * `base_url` or `kind` changed, so the 404s that removed them came from the upstream it had before
   * (try19 D7: a wrong base_url's 404 page). Drops them from memory and keeps a later re-read from
   * bringing back one that began before `now` (the store's delete may still be on its way): those that
   * held at `now`, as copies. O(removals + accountIds).
   */
  lift(accountIds: ReadonlySet<string>, now: number): LiveRemoval[] {
    for (const id of accountIds) this.liftedAt.set(id, now);
    const out: LiveRemoval[] = [];
    for (const [k, r] of this.map) {
      const [accountId, model] = splitKey(k);
      if (!accountIds.has(accountId)) continue;
      this.map.delete(k);
      if (r.until === null || r.until > now) out.push({ accountId, model, ...r });
    }
    return out;
  }

  /** Every removal that holds at `now` (ms since the epoch), as copies. */
  live(now: number): LiveRemoval[] {
    const out: LiveRemoval[] = [];
    for (const [k, r] of this.map) {
      if (r.until !== null && r.until <= now) continue;
      const [accountId, model] = splitKey(k);
      out.push({ accountId, model, ...r });
    }
    return out;
  }
}

function pairKey(accountId: string, model: string): string {
  return accountId + "\u0000" + model;
}

function splitKey(k: string): [string, string] {
  return k.split("\u0000") as [string, string];
}
