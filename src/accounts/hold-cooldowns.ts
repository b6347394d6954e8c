/**
 * Account cooldowns (SPEC 6.3): until when an account rests, per (account, model), model `*` for the
 * whole account: after a rate limit (until its reset, or for a time) or, for "other 429 / overloaded /
 * 529", a backoff of 2 s doubling up to 5 min. The registry's memory of them: held here, written through
 * to the store, published (`cooldown_start`, `cooldown_end`) and timed through the registry's hooks
 * ({@link CooldownHooks}), replaced by each re-read of the account state ({@link Cooldowns.load}).
 */
import type { AccountStateEvent } from "../events/bus.ts";
import { ALL_MODELS, type AccountState, type Store } from "../store/types.ts";

/** Backoff for "other 429 / overloaded / 529" (SPEC 6.3): 2 s doubling, ceiling 5 min. */
export const BACKOFF_BASE_MS = 2000;
/** The ceiling of that backoff (SPEC 6.3): 5 min, ms. */
export const BACKOFF_MAX_MS = 5 * 60_000;

/** One cooldown: its end (ms since the epoch), why, and its backoff level (0 for one of a fixed length). */
export interface Cool {
  until: number;
  reason: string;
  level: number;
}

/** What the cooldowns need from the registry that holds them. */
export interface CooldownHooks {
  /** The registry's clock, ms since the epoch. */
  now(): number;
  /**
   * Writes through to the store. `key` names the row (`lock␀ACCOUNT`, …) and `apply` what the write did
   * to memory: a write the embedded store refuses (a full disk) is written again later and `apply` done
   * again after each re-read meanwhile (retry-writes.ts). Never throws.
   */
  persist(write: (store: Store) => unknown, key?: string, apply?: () => void): void;
  /** Arms the registry's end timer for a state ending at `until` (ms since the epoch). */
  arm(until: number): void;
  /** Publishes an account state change (SPEC 9.4) when somebody listens. */
  publish(account: string, provider: string | undefined, change: string, extra?: Omit<Partial<AccountStateEvent>, "type" | "account" | "change">): void;
  /** The provider of an account the registry knows, else undefined. */
  providerOf(accountId: string): string | undefined;
  /** Whether somebody listens (events are built only then). */
  listening(): boolean;
}

/** The cooldowns of every account of one registry. */
export class Cooldowns {
  /** `${accountId}\u0000${model}` → cooldown; model "*" = whole account. */
  private readonly map = new Map<string, Cool>();
  /** When a change of its provider's upstream last lifted each account's cooldowns (ms since the epoch): a re-read of the state keeps out older ones, whose delete the store may not have applied yet. */
  private readonly liftedAt = new Map<string, number>();

  constructor(private readonly hooks: CooldownHooks) {}

  /** How many cooldowns are held (ended ones included until the next re-read drops them). */
  get size(): number {
    return this.map.size;
  }

  /** Every cooldown held, keyed `${accountId}\u0000${model}` (cleared-elsewhere.ts compares them). */
  get all(): ReadonlyMap<string, Cool> {
    return this.map;
  }

  /** Whether a cooldown of (account, model) is held, ended or not. */
  has(accountId: string, model: string): boolean {
    return this.map.has(key(accountId, model));
  }

  /** Replaces every cooldown with the store's rows (a re-read), leaving out those older than a lift of their account. */
  load(rows: AccountState["cooldowns"]): void {
    this.map.clear();
    for (const c of rows) if (!(c.since <= (this.liftedAt.get(c.accountId) ?? -Infinity))) this.map.set(key(c.accountId, c.model), { until: c.until, reason: c.reason, level: c.level });
  }

  /** Sets the cooldown of (account, model) until `until` in memory and the store, and publishes `cooldown_start`. */
  set(accountId: string, model: string, until: number, reason: string, level: number): void {
    const k = key(accountId, model);
    const cool: Cool = { until, reason, level };
    this.map.set(k, cool);
    this.hooks.persist((st) => st.setCooldown({ accountId, model, until, reason, level, since: this.hooks.now() }), "cooldown\u0000" + k, () => this.map.set(k, cool));
    this.hooks.arm(until);
    if (this.hooks.listening()) this.hooks.publish(accountId, this.hooks.providerOf(accountId), "cooldown_start", { model, reason, until });
  }

  /** The backoff (SPEC 6.3) of (account, model) from `now`: one level longer than the one it holds, else 2 s; at least until `atLeastUntil` (ms since the epoch) when given (a wait the provider named). */
  backoff(accountId: string, model: string, reason: string, now: number, atLeastUntil?: number): void {
    const prev = this.map.get(key(accountId, model));
    const level = prev ? Math.min(prev.level + 1, 20) : 0;
    const ms = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** level);
    this.set(accountId, model, atLeastUntil !== undefined && atLeastUntil > now + ms ? atLeastUntil : now + ms, reason, level);
  }

  /** The cooldown that keeps the account from `model` at `now`: the model's, else the whole account's; undefined when none. */
  active(accountId: string, model: string, now: number): Cool | undefined {
    for (const m of [model, ALL_MODELS]) {
      const c = this.map.get(key(accountId, m));
      if (c && c.until > now) return c;
    }
    return undefined;
  }

  /** A request of the account for `model` succeeded: its cooldowns for that model and the whole account end, in the store too. */
  succeeded(accountId: string, providerId: string, model: string, now: number): void {
    for (const m of [model, ALL_MODELS]) {
      const k = key(accountId, m);
      const c = this.map.get(k);
      if (c) {
        this.map.delete(k);
        this.hooks.persist((st) => st.clearCooldown(accountId, m), "cooldown\u0000" + k, () => this.map.delete(k));
        // A cooldown that had already run out was announced by the end timer.
        if (c.until > now) this.hooks.publish(accountId, providerId, "cooldown_end", { model: m, reason: "a request succeeded" });
      }
    }
  }

  /** Lifts every cooldown of the accounts `ids` (their provider's base_url or kind changed), in the store too, publishing `cooldown_end`. */
  lift(ids: ReadonlySet<string>, now: number): void {
    for (const id of ids) this.liftedAt.set(id, now);
    for (const id of ids) this.hooks.persist((st) => st.clearCooldown(id), "cooldowns\u0000" + id, () => this.dropAll(id));
    for (const [k, c] of this.map) {
      const [accountId, model] = k.split("\u0000") as [string, string];
      if (ids.has(accountId) && this.map.delete(k) && c.until > now) this.hooks.publish(accountId, this.hooks.providerOf(accountId), "cooldown_end", { model, reason: `cooldown (${c.reason}) lifted: the provider's base_url or kind changed` });
    }
  }

  /** Forgets every cooldown of the account in memory (a lift's write done again after a re-read: retry-writes.ts). */
  private dropAll(accountId: string): void {
    for (const k of [...this.map.keys()]) if (k.startsWith(accountId + "\u0000")) this.map.delete(k);
  }

  /** The end timer's scan: publishes `cooldown_end` for each cooldown that ended in (from, now] and arms for those still to end. */
  expire(from: number, now: number): void {
    for (const [k, c] of this.map) {
      const [accountId, model] = k.split("\u0000") as [string, string];
      if (c.until > from && c.until <= now) this.hooks.publish(accountId, this.hooks.providerOf(accountId), "cooldown_end", { model, reason: `cooldown (${c.reason}) ended` });
      else if (c.until > now) this.hooks.arm(c.until);
    }
  }

  /** The cooldowns that hold at `now`, for `accounts status` (copies). */
  live(now: number): Array<Cool & { accountId: string; model: string }> {
    const split = (k: string) => k.split("\u0000") as [string, string];
    return [...this.map].filter(([, c]) => c.until > now).map(([k, c]) => ({ accountId: split(k)[0], model: split(k)[1], ...c }));
  }
}

function key(accountId: string, model: string): string {
  return accountId + "\u0000" + model;
}
