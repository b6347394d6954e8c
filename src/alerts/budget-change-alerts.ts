/**
 * Budget alerts at an operator's change of a key's budgets (SPEC 2.3, 9.6, 9.7): a budget lowered under
 * what its window already used is past thresholds no request crossed. Until 2026-12-06 those raised
 * nothing (a threshold was crossed only by the window's use growing), not even the share 1, though the
 * key's requests were refused from the change on (try19's tryout). Now the change itself is a step:
 * for each budget whose amount went down (or that the key did not have in that window and unit), the
 * window's use now is read ({@link KeyLimitCounters.budgetUse}) and {@link Alerts.budgetAmountChanged}
 * raises each threshold that use is past under the new amount and was not under the old one, and the
 * share 1 when it is used up. The window's use only grows, so a threshold raised at the change is not
 * crossed again in that window, and one raised before the change is not raised again; a raised budget
 * raises nothing. On a shared store the thresholds the window was past under both amounts are claimed
 * as delivered ({@link BudgetChangeAlertsDeps.claimPassed}), for the instances that learn the use late.
 *
 * The changes come from `PATCH /admin/api/keys/{name}` (which `switchyard keys set` and the dashboard's
 * Edit limits call; only the instance that took the change raises: the key's use is the same on every
 * instance of a shared store) and from a config reload that changes a file key's `limits.budgets`
 * (every instance reading the file raises; on a shared store the alert's claim, which names the key,
 * window, unit, amount, threshold and window end, has the webhook deliver it once:
 * src/alerts/alert-claim.ts). A key new to the file raises nothing at its reload.
 */
import type { ClientKey, KeyBudget, KeyLimitCounters, KeyLimits } from "../../pipeline/ports.ts";
import type { AlertEvent } from "../events/bus.ts";
import type { Alerts, BudgetAmountChange } from "./alerts.ts";

/** What {@link BudgetChangeAlerts} needs. */
export interface BudgetChangeAlertsDeps {
  counters: KeyLimitCounters;
  alerts: Pick<Alerts, "budgetAmountChanged" | "budgetAlertsPassedBefore">;
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

/** Raises the budget alerts of an operator's change of a key's budgets; see the module comment. */
export class BudgetChangeAlerts {
  constructor(private readonly deps: BudgetChangeAlertsDeps) {}

  /**
   * Key `id` (pipeline/key-id.ts) had the limits `before` and has `after` now: raises the thresholds a
   * lowered (or added) budget is past at its window's use now, and with `claimPassed` claims those the
   * use was past under both amounts. Resolves once they are on the bus and claimed (after at most one
   * read of the shared store, ≤ 2 s, and a claim per threshold); never rejects (a failure is logged).
   */
  async changed(id: string, before: KeyLimits | undefined, after: KeyLimits | undefined): Promise<void> {
    const { claimPassed } = this.deps;
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
      if (claimPassed) await Promise.all(this.deps.alerts.budgetAlertsPassedBefore(id, changes, now).map((e) => claimPassed(e)));
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
