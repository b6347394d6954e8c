/**
 * {@link KeyLimitCounters} across instances (SPEC 9.6, D-2: "per-key limits count across instances"),
 * over the store's coordination role (src/store/shared.ts) when several instances share PostgreSQL:
 *
 * - concurrency: one lease of `key:NAME` per request in flight (`tryLease`), exact across instances; a
 *   dead instance's leases lapse after ~15 s. Retry-After 1 s.
 * - rpm: a counter `key:NAME:rpm` over fixed one-minute windows, +1 per admitted request (taken back
 *   when the request is refused); Retry-After until the window ends.
 * - tpm: a counter `key:NAME:tpm` over fixed one-minute windows, the tokens of each settled request;
 *   refused while the window holds `tpm` tokens.
 * - budgets: counters `key:NAME:budget:WINDOW:UNIT` over fixed windows of the budget's length. Unlike
 *   the embedded counters (aligned to the key's first use), shared windows are aligned to multiples of
 *   their length since the epoch (UTC): every instance must agree on the window without asking.
 *
 * Each check is one database round trip, made only for keys that have that limit, in parallel where
 * they are reads. When the database cannot be reached (`StoreError` `unavailable`) the request is
 * counted by the embedded counters instead (degraded mode, logged once until the database is back).
 */
import { BUDGET_WINDOW_MS } from "../../pipeline/index.ts";
import type { BudgetChange, BudgetUse, KeyBudget, KeyLimitCounters, KeyLimits, LimitRefusal } from "../../pipeline/ports.ts";
import type { CounterWindow, SharedStore } from "../store/shared.ts";
import { StoreError } from "../store/types.ts";
import type { MemoryKeyCounters } from "./counters.ts";

const MINUTE = 60_000;

/** What `admit` hands to `settle`: the lease taken, or that the request was counted locally. */
interface Ticket {
  local: boolean;
  lease?: string;
}

const budgetCounter = (key: string, b: KeyBudget) => `key:${key}:budget:${b.window}:${b.usd !== undefined ? "usd" : "tokens"}`;

/** Counts client key limits through a shared store; see the module comment. */
export class SharedKeyCounters implements KeyLimitCounters {
  private degraded = false;
  private readonly inFlightHere = new Map<string, number>();

  constructor(
    private readonly store: SharedStore,
    private readonly local: MemoryKeyCounters,
    private readonly log: (line: string) => void = () => {},
  ) {}

  private unavailable(err: unknown): boolean {
    if (!(err instanceof StoreError && err.code === "unavailable")) return false;
    if (!this.degraded) {
      this.degraded = true;
      this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: "shared store unreachable: client key limits are counted by this instance alone until it is back" }));
    }
    return true;
  }

  private track(key: string, d: number): void {
    const n = (this.inFlightHere.get(key) ?? 0) + d;
    if (n <= 0) this.inFlightHere.delete(key);
    else this.inFlightHere.set(key, n);
  }

  async admit(key: string, limits: KeyLimits, now: number): Promise<{ ok: true; ticket: Ticket } | { ok: false; refusal: LimitRefusal }> {
    let tookRpm = false;
    let lease: string | undefined;
    try {
      let refusal: LimitRefusal | undefined;
      const refuse = (r: LimitRefusal) => {
        if (!refusal || r.retryAfterMs > refusal.retryAfterMs) refusal = r;
      };
      const budgets = limits.budgets ?? [];
      const [windows, tpm] = await Promise.all([
        Promise.all(budgets.map((b) => this.store.addToCounter(budgetCounter(key, b), BUDGET_WINDOW_MS[b.window], 0))),
        limits.tpm !== undefined ? this.store.addToCounter(`key:${key}:tpm`, MINUTE, 0) : undefined,
      ]);
      budgets.forEach((b, i) => {
        const w = windows[i];
        const max = b.usd ?? b.tokens!;
        if (w.total >= max) refuse({ limit: "budget", budget: b, used: w.total, max, retryAfterMs: Math.max(1, w.resetAt - now) });
      });
      if (tpm && limits.tpm !== undefined && tpm.total >= limits.tpm) refuse({ limit: "tpm", used: tpm.total, max: limits.tpm, retryAfterMs: Math.max(1, tpm.resetAt - now) });
      if (refusal) return { ok: false, refusal };

      if (limits.rpm !== undefined) {
        const w = await this.store.addToCounter(`key:${key}:rpm`, MINUTE, 1);
        tookRpm = true;
        if (w.total > limits.rpm) {
          await this.store.addToCounter(`key:${key}:rpm`, MINUTE, -1);
          tookRpm = false;
          return { ok: false, refusal: { limit: "rpm", used: limits.rpm, max: limits.rpm, retryAfterMs: Math.max(1, w.resetAt - now) } };
        }
      }
      if (limits.concurrency !== undefined) {
        lease = await this.store.tryLease(`key:${key}`, limits.concurrency);
        if (lease === undefined) {
          if (tookRpm) await this.store.addToCounter(`key:${key}:rpm`, MINUTE, -1);
          return { ok: false, refusal: { limit: "concurrency", used: limits.concurrency, max: limits.concurrency, retryAfterMs: 1000 } };
        }
      }
      this.degraded = false;
      this.track(key, 1);
      return { ok: true, ticket: { local: false, lease } };
    } catch (err) {
      if (!this.unavailable(err)) throw err;
      if (lease !== undefined) void this.store.releaseLease(lease);
      const v = this.local.admit(key, limits, now);
      return v.ok ? { ok: true, ticket: { local: true } } : v;
    }
  }

  async settle(key: string, limits: KeyLimits, spent: { tokens: number; usd: number }, now: number, ticket?: unknown): Promise<BudgetChange[]> {
    const t = ticket as Ticket | undefined;
    if (!t || t.local) return this.local.settle(key, limits, spent, now);
    this.track(key, -1);
    const tokens = Number.isFinite(spent.tokens) && spent.tokens > 0 ? spent.tokens : 0;
    const usd = Number.isFinite(spent.usd) && spent.usd > 0 ? spent.usd : 0;
    try {
      const budgets = limits.budgets ?? [];
      const [, , windows] = await Promise.all([
        t.lease !== undefined ? this.store.releaseLease(t.lease) : undefined,
        limits.tpm !== undefined && tokens > 0 ? this.store.addToCounter(`key:${key}:tpm`, MINUTE, tokens) : undefined,
        Promise.all(
          budgets.map((b): Promise<CounterWindow> | CounterWindow =>
            this.store.addToCounter(budgetCounter(key, b), BUDGET_WINDOW_MS[b.window], b.usd !== undefined ? usd : tokens),
          ),
        ),
      ]);
      return budgets.map((b, i) => {
        const added = b.usd !== undefined ? usd : tokens;
        return { budget: b, before: windows[i].total - added, after: windows[i].total, resetsAt: windows[i].resetAt };
      });
    } catch (err) {
      if (!this.unavailable(err)) this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: "settling a key's limits failed", error: err instanceof Error ? err.message : String(err) }));
      return [];
    }
  }

  async budgetUse(key: string, limits: KeyLimits, now: number): Promise<BudgetUse[]> {
    try {
      return await Promise.all(
        (limits.budgets ?? []).map(async (b) => {
          const ms = BUDGET_WINDOW_MS[b.window];
          const w = await this.store.addToCounter(budgetCounter(key, b), ms, 0);
          return { budget: b, used: w.total, startedAt: w.resetAt - ms, resetsAt: w.resetAt };
        }),
      );
    } catch (err) {
      if (!this.unavailable(err)) throw err;
      return this.local.budgetUse(key, limits, now);
    }
  }

  inFlight(key: string): number {
    return (this.inFlightHere.get(key) ?? 0) + this.local.inFlight(key);
  }
}
