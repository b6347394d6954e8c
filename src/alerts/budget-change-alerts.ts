/**
 * Budget alerts at an operator's change of a key's budgets (SPEC 2.3, 9.6, 9.7): a budget lowered under
 * what its window already used is past thresholds no request crossed. Until 2026-12-06 those raised
 * nothing (a threshold was crossed only by the window's use growing), not even the share 1, though the
 * key's requests were refused from the change on (try19's tryout). Now the change itself is a step:
 * for each budget whose amount went down (or that the key did not have in that window and unit), the
 * window's use now is read ({@link KeyLimitCounters.budgetUse}) and {@link Alerts.budgetAmountChanged}
 * raises the highest threshold that use is past under the new amount and was not under the old one (the
 * share 1 when it is used up), the others as its `passed` (one alert per change since 2026-12-07). The window's use only grows, so a threshold raised at the change is not
 * crossed again in that window, and one raised before the change is not raised again; a raised budget
 * raises nothing. On a shared store the thresholds the window was past under both amounts are claimed
 * as delivered ({@link BudgetChangeAlertsDeps.claimPassed}), for the instances that learn the use late.
 *
 * The changes come from `PATCH /admin/api/keys/{name}` (which `switchyard keys set` and the dashboard's
 * Edit limits call: {@link BudgetChangeAlerts.changed}), from a config reload that changes a file key's
 * `limits.budgets` (every instance reading the file raises) and, on a shared store, from the other
 * instances' re-read of the changed key ({@link BudgetChangeAlerts.learned}, within about a second:
 * `KeyStore.onKeyLimitsChanged`; they raise {@link LEARNED_AFTER_MS} later, so that the changing
 * instance, which read the freshest use, claims first). So every instance raises the change's alerts, lists them
 * (`GET /admin/api/alerts`, the dashboard's Recent alerts) and offers them to its webhook; the alert's
 * claim, which names the key, window, unit, amount, threshold and window end (the same on every
 * instance), has the webhook deliver it once, and another instance that raised it delivers it when the
 * first stops before its POST succeeded (src/alerts/alert-claim.ts). Until 2026-12-06 (later) only the
 * instance that took a PATCH raised its alerts: the others never listed them, and they were lost when it
 * stopped while the webhook was down (try22's tryout, P6). A key new to the file raises nothing at its
 * reload, nor a key another instance created. A request admitted before the change and settled after it
 * is judged against the new budget ({@link BudgetChangeAlerts.settled}), on the instances that learn
 * the change too.
 */
import type { BudgetChange, ClientKey, KeyBudget, KeyLimitCounters, KeyLimits } from "../../pipeline/ports.ts";
import type { AlertEvent } from "../events/bus.ts";
import type { Alerts, BudgetAmountChange } from "./alerts.ts";

/** What {@link BudgetChangeAlerts} needs. */
export interface BudgetChangeAlertsDeps {
  counters: KeyLimitCounters;
  alerts: Pick<Alerts, "budgetChanged" | "budgetAmountChanged" | "budgetAlertsPassedBefore">;
  /**
   * On a shared store: claims an alert as delivered (src/alerts/alert-claim.ts, a full claim), so that
   * no instance's webhook delivers it. Given the alerts of thresholds a changed budget's window was past
   * under its previous amount too ({@link Alerts.budgetAlertsPassedBefore}): another instance that
   * learns the window's use only after the change (within about a second) sees it cross them under the
   * new amount and raises them; they were delivered as the previous amount's. Rejects when the store cannot answer.
   */
  claimPassed?: (alert: AlertEvent) => Promise<void>;
  /** ms since the epoch. */
  now: () => number;
  /** Where a warning goes (one JSON line). */
  log?: (line: string) => void;
  /** How long {@link BudgetChangeAlerts.learned} waits, the window's use read, before it raises, ms. Default {@link LEARNED_AFTER_MS} (3 000). */
  learnedAfterMs?: number;
}

const unitOf = (b: KeyBudget) => (b.usd !== undefined ? "usd" : "tokens");
const amountOf = (b: KeyBudget) => b.usd ?? b.tokens!;

/**
 * The budgets of `after` whose amount differs from that of the budget of their window and unit in
 * `before` (that amount as `previous`), and those `before` has none of (no `previous`). An unchanged
 * budget is left out: it is past no threshold that it was not past before.
 */
export function changedBudgets(before: KeyLimits | undefined, after: KeyLimits | undefined): Array<{ budget: KeyBudget; previous?: number }> {
  const out: Array<{ budget: KeyBudget; previous?: number }> = [];
  for (const b of after?.budgets ?? []) {
    const was = before?.budgets?.find((p) => p.window === b.window && unitOf(p) === unitOf(b));
    if (was === undefined) out.push({ budget: b });
    else if (amountOf(b) !== amountOf(was)) out.push({ budget: b, previous: amountOf(was) });
  }
  return out;
}

/**
 * How long after a change a request settled against the budget it replaced is judged against the new
 * one ({@link BudgetChangeAlerts.settled}), ms: an hour, longer than a request stays in flight.
 */
const REPLACED_FOR_MS = 3_600_000;

/**
 * How long an instance that learned another's change of a key's budgets waits, once it has read the
 * window's use, before it raises the change's alerts ({@link BudgetChangeAlerts.learned}), ms. The instance that
 * took the change raises them before its PATCH answers (after at most one read of the use, ≤ 2 s) and its
 * webhook claims them at once: it then holds them, with the use it read (the freshest: the use of its
 * last requests reaches the others within about a second). The others' copies wait for its lease: they
 * deliver only what it does not (it stopped first). Without the wait the other instance, which learns
 * the change within ms, could claim first and post the use it knew, up to a second old (850 where the
 * changing instance read 860).
 */
export const LEARNED_AFTER_MS = 3_000;

/** Raises the budget alerts of an operator's change of a key's budgets; see the module comment. */
export class BudgetChangeAlerts {
  /**
   * Per `id\0window\0unit`, a budget changed here: the amounts it replaced (`from`), the budget now
   * (`to`; absent: removed) and when (ms since the epoch). Kept for {@link REPLACED_FOR_MS}.
   */
  private readonly replaced = new Map<string, { from: Set<number>; to?: KeyBudget; at: number }>();

  /**
   * The changes {@link learned} here whose alerts wait ({@link LEARNED_AFTER_MS}): the key's id, its
   * limits after (JSON), and what ends the wait without raising (`drop`). Read by
   * {@link changed}: the re-read a PATCH here makes does not report its own change, but one started
   * between the PATCH's write and that re-read (another instance's change announced, the periodic
   * re-read) does, a few ms before the PATCH's own call, which then raises it.
   */
  private readonly waiting = new Set<{ id: string; after: string; dropped: boolean; drop: () => void }>();

  constructor(private readonly deps: BudgetChangeAlertsDeps) {}

  /**
   * A key's request was settled (src/limits/accounting.ts), or the other instances' use learned
   * (src/limits/shared-counters.ts): hands its budget steps to {@link Alerts.budgetChanged}. A step of a
   * budget that a change here replaced (a request admitted before the change, judged against the
   * budget it was admitted under) is judged against the budget in force instead, or dropped when the
   * budget was removed: a request in flight over a lowering otherwise raised a threshold of the old
   * amount after the new one's, and not the share 1 of the new one it used up. One map read per step
   * while some change is less than an hour old; none otherwise.
   */
  settled(key: string, changes: BudgetChange[], now: number): void {
    if (this.replaced.size > 0) changes = changes.flatMap((c) => this.inForce(key, c, now));
    if (changes.length > 0) this.deps.alerts.budgetChanged(key, changes, now);
  }

  /** `c` against the budget in force when a change here replaced its budget; see {@link settled}. */
  private inForce(key: string, c: BudgetChange, now: number): BudgetChange[] {
    const name = `${key}\0${c.budget.window}\0${unitOf(c.budget)}`;
    const r = this.replaced.get(name);
    if (r === undefined) return [c];
    if (now - r.at > REPLACED_FOR_MS) {
      this.replaced.delete(name);
      return [c];
    }
    if (!r.from.has(amountOf(c.budget))) return [c];
    return r.to === undefined ? [] : [{ ...c, budget: r.to }];
  }

  /** Notes the budgets of `id` that `after` replaced or removed (for {@link settled}). */
  private noteReplaced(id: string, before: KeyLimits | undefined, after: KeyLimits | undefined): void {
    const now = this.deps.now();
    for (const b of before?.budgets ?? []) {
      const to = after?.budgets?.find((a) => a.window === b.window && unitOf(a) === unitOf(b));
      if (to !== undefined && amountOf(to) === amountOf(b)) continue;
      const name = `${id}\0${b.window}\0${unitOf(b)}`;
      const was = this.replaced.get(name);
      // a chain of changes (1,000 → 880 → 800): a request admitted under any of them is judged against the last
      const from = was !== undefined && was.to !== undefined && amountOf(was.to) === amountOf(b) ? was.from : new Set<number>();
      from.add(amountOf(b));
      if (to !== undefined) from.delete(amountOf(to));
      this.replaced.set(name, { from, to, at: now });
    }
  }

  /**
   * Key `id` (pipeline/key-id.ts) had the limits `before` and has `after` now, changed through this
   * instance (its admin API, its config file): raises the thresholds a lowered (or added) budget is past
   * at its window's use now, and with `claimPassed` claims those the use was past under both amounts.
   * Resolves once they are on the bus and claimed (after at most one read of the shared store, ≤ 2 s,
   * and a claim per threshold); never rejects (a failure is logged; a claim that fails is logged and
   * does not keep the change's own alerts from being raised). The same change reported by a re-read of
   * the store a moment before ({@link learned}, still waiting) is raised here only.
   */
  changed(id: string, before: KeyLimits | undefined, after: KeyLimits | undefined): Promise<void> {
    // this change, reported by a re-read of the store a moment before: raised here, with its claims
    const text = JSON.stringify(after ?? null);
    for (const w of this.waiting) if (w.id === id && w.after === text) w.drop();
    this.noteReplaced(id, before, after);
    return this.raise(id, before, after, true);
  }

  /**
   * As {@link changed}, for a change another instance of a shared store took, learned here from the
   * store's re-read of the key (`KeyStore.onKeyLimitsChanged`, within about a second): a request
   * settled here from now on is judged against the new budget, the window's use is read at once, and
   * {@link LEARNED_AFTER_MS} later the same alerts are raised (their claims are the same, so the webhook
   * delivers each once across instances), without claiming the thresholds passed under both amounts:
   * the instance that took the change claims those, knowing the amount the key had just before it
   * (this instance may have missed a change in between). Resolves once raised (or dropped: {@link close},
   * or this instance's own call of the change); never rejects.
   */
  learned(id: string, before: KeyLimits | undefined, after: KeyLimits | undefined): Promise<void> {
    this.noteReplaced(id, before, after);
    let wake!: () => void;
    const waited = new Promise<void>((resolve) => (wake = resolve));
    const timer = setTimeout(wake, this.deps.learnedAfterMs ?? LEARNED_AFTER_MS);
    timer.unref?.();
    const w = { id, after: JSON.stringify(after ?? null), dropped: false, drop: () => {} };
    w.drop = () => {
      w.dropped = true;
      clearTimeout(timer);
      wake();
    };
    this.waiting.add(w);
    // the use is read now (at the change, as the changing instance read it); the alerts wait
    return this.raise(id, before, after, false, async () => {
      await waited;
      return !w.dropped;
    }).finally(() => {
      clearTimeout(timer);
      this.waiting.delete(w);
    });
  }

  /** Drops the alerts of the changes {@link learned} and still waiting (the instance stops). */
  close(): void {
    for (const w of [...this.waiting]) w.drop();
  }

  /**
   * The alerts of one change, and with `claim` and `claimPassed` its passed thresholds' claims; see
   * {@link changed}. `until`, when given, is awaited after the use is read and before anything is raised
   * or claimed: false drops the change's alerts.
   */
  private async raise(id: string, before: KeyLimits | undefined, after: KeyLimits | undefined, claim: boolean, until?: () => Promise<boolean>): Promise<void> {
    const claimPassed = claim ? this.deps.claimPassed : undefined;
    // a raised budget raises nothing: without claims to make, its use is not even read
    const look = changedBudgets(before, after).filter((c) => claimPassed || c.previous === undefined || amountOf(c.budget) < c.previous);
    if (look.length === 0) return;
    try {
      const use = await this.deps.counters.budgetUse(id, { budgets: look.map((l) => l.budget) }, this.deps.now());
      const changes: BudgetAmountChange[] = [];
      look.forEach((l, i) => {
        const u = use[i];
        if (u && u.used > 0 && u.resetsAt !== undefined) changes.push({ ...l, used: u.used, resetsAt: u.resetsAt });
      });
      if (changes.length === 0) return;
      const now = this.deps.now();
      if (until && !(await until())) return;
      if (claimPassed) {
        // Best effort: a claim the store could not take (a hiccup) is logged; the change's own alerts are raised anyway.
        const claimed = await Promise.allSettled(this.deps.alerts.budgetAlertsPassedBefore(id, changes, now).map((e) => claimPassed(e)));
        const failed = claimed.filter((c): c is PromiseRejectedResult => c.status === "rejected");
        if (failed.length) this.deps.log?.(JSON.stringify({ level: "warn", time: Date.now(), msg: "claiming a changed key budget's earlier alerts as delivered failed", key: id, failed: failed.length, error: failed[0]!.reason instanceof Error ? failed[0]!.reason.message : String(failed[0]!.reason) }));
      }
      this.deps.alerts.budgetAmountChanged(id, changes, now);
    } catch (err) {
      this.deps.log?.(JSON.stringify({ level: "warn", time: Date.now(), msg: "raising a changed key budget's alerts failed", key: id, error: err instanceof Error ? err.message : String(err) }));
    }
  }

  /**
   * A config reload replaced the file's keys: `previous` is the file's keys before (by name), `active`
   * the keys in force now (`KeyStore.activeKeys()`, with their ids); each file key that was there before
   * is compared as {@link changed} does. Never rejects.
   */
  async configKeysChanged(previous: ReadonlyArray<{ name: string; limits?: KeyLimits }>, active: readonly ClientKey[]): Promise<void> {
    const was = new Map(previous.map((k) => [k.name, k] as const));
    const work: Promise<void>[] = [];
    for (const k of active) {
      if (k.source !== "config") continue;
      const p = was.get(k.name);
      if (p !== undefined && p.limits !== k.limits) work.push(this.changed(k.id ?? k.name, p.limits, k.limits));
    }
    await Promise.all(work);
  }
}
