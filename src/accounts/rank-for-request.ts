/**
 * The order of a provider's accounts for one request (SPEC A-2…A-4): the account strategy
 * (selection.ts) drawn once per request and memoised on the request's hints object, the round-robin
 * turn per (provider, model), and conversation affinity (the bound account first, unless the strategy
 * is round-robin or the combo turned affinity off). Only the order: the registry's `candidates`
 * re-checks each account's eligibility and free slots on every call.
 */
import type { PickHints } from "../../pipeline/index.ts";
import type { Account, Clock } from "../../pipeline/ports.ts";
import { bindingKey, type Bindings } from "./bindings.ts";
import type { QuotaBook } from "./quota.ts";
import { rankAccounts, type AccountStrategy, type Ranked } from "./selection.ts";
import type { AccountStats } from "./stats.ts";

/** What the ranking reads, all owned by the registry. */
export interface RankingDeps {
  clock: Clock;
  /** The registry's options: `strategy` (default `scored`) and `rng` (default Math.random) are read per request. */
  opts: { strategy?: () => AccountStrategy; rng?: () => number };
  stats: AccountStats;
  quota: QuotaBook;
  bindings: Bindings;
}

/**
 * How many (provider, model) pairs keep a round-robin turn: client-chosen model names (a provider that
 * serves any name) would otherwise add an entry per name for the life of the process. Past it the least
 * recently used pair is forgotten, and its next request starts again at the first account.
 */
export const MAX_ROUND_ROBIN_TURNS = 1000;

/** Each request's order of a provider's accounts, with the round-robin turns. */
export class RequestRanking {
  private readonly rr = new Map<string, number>();
  /** Per-request account order, keyed by the request's hints object (one strategy draw per request). */
  private readonly ranked = new WeakMap<PickHints, Map<string, Ranked[]>>();
  /** The ranking of a provider's only account (always itself), made once per account object. */
  private readonly onlyAccount = new WeakMap<Account, Ranked[]>();

  constructor(private readonly deps: RankingDeps) {}

  /**
   * `accounts` (the provider's, as the registry serves them) best first for this request, made at its
   * first call and the same array on the next ones for the same (provider, model); `hints.dryRun` leaves
   * round-robin turns alone. O(accounts) at the first call, O(1) after.
   */
  of(accounts: readonly Account[], providerId: string, model: string, hints: PickHints): Ranked[] {
    let ranked: Ranked[] | undefined;
    if (accounts.length === 1) {
      // One account: its ranking never changes (no memo per request: no map entry keyed by the hints).
      ranked = this.onlyAccount.get(accounts[0]);
      if (!ranked) this.onlyAccount.set(accounts[0], (ranked = this.rank(accounts, providerId, model, hints)));
    } else {
      let memo = this.ranked.get(hints);
      if (!memo) this.ranked.set(hints, (memo = new Map()));
      const mk = providerId + "\u0000" + model;
      ranked = memo.get(mk);
      if (!ranked) memo.set(mk, (ranked = this.rank(accounts, providerId, model, hints)));
    }
    return ranked;
  }

  /** Forgets the round-robin turns (the registry's `resetCounters`). */
  clearTurns(): void {
    this.rr.clear();
  }

  private rank(accounts: readonly Account[], providerId: string, model: string, hints: PickHints): Ranked[] {
    // One account: nothing to rank, no conversation to steer (the common single-key setup).
    if (accounts.length === 1) return [{ account: accounts[0], note: "the provider's only account" }];
    const { clock, opts, stats, quota, bindings } = this.deps;
    const now = clock.now();
    const strategy = opts.strategy?.() ?? "scored";
    let turn = 0;
    if (strategy === "round-robin") {
      const k = providerId + "\u0000" + model;
      turn = this.rr.get(k) ?? 0;
      if (!hints.dryRun) {
        // re-inserted last: the map's order is least recently used first ({@link MAX_ROUND_ROBIN_TURNS})
        if (turn > 0) this.rr.delete(k);
        else if (this.rr.size >= MAX_ROUND_ROBIN_TURNS) this.rr.delete(this.rr.keys().next().value!);
        this.rr.set(k, turn + 1);
      }
    }
    const facts = accounts.map((account) => ({
      account,
      successRate: stats.successRate(account.id, now),
      latencyMs: stats.latency(account.id),
      quota: quota.tightest(account.id, model, now)?.fraction,
    }));
    const ranked = rankAccounts(strategy, facts, opts.rng ?? Math.random, turn);
    if (strategy === "round-robin" || hints.affinity === false || !hints.affinityKey) return ranked;
    const bound = bindings.get(hints.keyAt?.(providerId, bindingKey) ?? bindingKey(providerId, hints.affinityKey), now);
    const i = bound ? ranked.findIndex((r) => r.account.id === bound.accountId) : -1;
    if (i < 0) return ranked;
    const [r] = ranked.splice(i, 1);
    ranked.unshift({ ...r, note: `conversation affinity: answered this conversation last (bound until ${new Date(bound!.expiresAt).toISOString()}); ${r.note}` });
    return ranked;
  }
}
