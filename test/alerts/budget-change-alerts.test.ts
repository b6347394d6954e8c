/**
 * The alerts of a key budget an operator changed (src/alerts/budget-change-alerts.ts, SPEC 9.7) on the
 * embedded counters: a USD budget lowered under its window's spend raises the thresholds it is then past
 * and was not under the old amount; a raised one raises nothing and reads nothing; on a shared store the
 * thresholds past under both amounts are handed to `claimPassed` (claimed as delivered, not raised).
 * The whole scenario over HTTP, on both stores: test/e2e/budget-alert-on-lowering.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { Alerts } from "../../src/alerts/alerts.ts";
import { BudgetChangeAlerts, changedBudgets } from "../../src/alerts/budget-change-alerts.ts";
import { MemoryKeyCounters } from "../../src/limits/counters.ts";
import { EventBus, type AlertEvent } from "../../src/events/bus.ts";
import type { KeyLimits } from "../../pipeline/ports.ts";

const T = Date.UTC(2026, 11, 6, 8, 0, 0);
const usd = (amount: number): KeyLimits => ({ budgets: [{ window: "1d", usd: amount }] });

/** A key `ci` that spent $8.50 of a $10 1d budget, the alerts it raised so far, and a change raiser. */
function spent850(claims?: AlertEvent[], claim?: (e: AlertEvent) => Promise<void>, log?: (line: string) => void) {
  const bus = new EventBus();
  const got: AlertEvent[] = [];
  bus.subscribe((e) => void (e.type === "alert" && got.push(e)));
  const counters = new MemoryKeyCounters();
  const alerts = new Alerts(bus, { thresholds: () => [0.8, 0.95], now: () => T });
  const admitted = counters.admit("ci", usd(10), T);
  if (!admitted.ok) throw new Error("not admitted");
  alerts.budgetChanged("ci", counters.settle("ci", usd(10), { tokens: 100, usd: 8.5 }, T, admitted.ticket), T);
  let reads = 0;
  const counted = { ...counters, budgetUse: (...a: Parameters<MemoryKeyCounters["budgetUse"]>) => (reads++, counters.budgetUse(...a)) } as unknown as MemoryKeyCounters;
  const changes = new BudgetChangeAlerts({ counters: counted, alerts, now: () => T, claimPassed: claim ?? (claims ? async (e) => void claims.push(e) : undefined), log, learnedAfterMs: 20 });
  /**
   * A request of `ci` admitted under `limits` (what it is settled against: its key as it was admitted),
   * settled later with `spent` USD through {@link BudgetChangeAlerts.settled}, as the app does.
   */
  const inFlight = (limits: KeyLimits) => (spent: number) => changes.settled("ci", counters.settle("ci", limits, { tokens: 10, usd: spent }, T), T);
  return { got, changes, alerts, inFlight, reads: () => reads, close: () => alerts.close() };
}

const shown = (as: AlertEvent[]) => as.map((a) => [a.subject, a.detail.threshold, a.detail.limit, a.detail.used, a.detail.exhausted === true]);

describe("a key budget changed by an operator", () => {
  test("lowered under its window's spend: the thresholds it is then past and was not, once; used up: the share 1", async () => {
    const k = spent850();
    expect(shown(k.got)).toEqual([["key:ci", 0.8, 10, 8.5, false]]);
    await k.changes.changed("ci", usd(10), usd(8.8)); // 8.5 of 8.8: 0.966
    await k.changes.changed("ci", usd(8.8), usd(8)); // 8.5 of 8: used up, 0.95 not again
    expect(shown(k.got)).toEqual([
      ["key:ci", 0.8, 10, 8.5, false],
      ["key:ci", 0.95, 8.8, 8.5, false],
      ["key:ci", 1, 8, 8.5, true],
    ]);
    expect(k.got[1]!.detail).toEqual({ kind: "key_budget", window: "1d", unit: "usd", limit: 8.8, used: 8.5, threshold: 0.95, resets_at: "2026-12-07T08:00:00.000Z" });
    k.close();
  });

  test("raised, or unchanged: nothing raised, and the window's spend is not even read", async () => {
    const k = spent850();
    await k.changes.changed("ci", usd(10), usd(20));
    await k.changes.changed("ci", usd(10), { ...usd(10), rpm: 5 });
    expect(shown(k.got)).toEqual([["key:ci", 0.8, 10, 8.5, false]]);
    expect(k.reads()).toBe(0);
    k.close();
  });

  test("on a shared store: the thresholds past under both amounts are claimed as delivered, not raised", async () => {
    const claims: AlertEvent[] = [];
    const k = spent850(claims);
    await k.changes.changed("ci", usd(10), usd(8.8));
    expect(shown(claims)).toEqual([["key:ci", 0.8, 8.8, 8.5, false]]);
    expect(shown(k.got).slice(1)).toEqual([["key:ci", 0.95, 8.8, 8.5, false]]);
    // a raise claims what the spend was past under both (0.8 of $10.50: 8.5 is 0.81), raises nothing
    claims.length = 0;
    await k.changes.changed("ci", usd(8.8), usd(10.5));
    expect(shown(claims)).toEqual([["key:ci", 0.8, 10.5, 8.5, false]]);
    expect(k.got.length).toBe(2);
    k.close();
  });

  test("on a shared store that cannot take the claims (a hiccup): the lowering's own alerts are raised anyway, and the failure is logged", async () => {
    const logged: string[] = [];
    const k = spent850(undefined, async () => {
      throw new Error("connection reset (test)");
    }, (line) => void logged.push(line));
    await k.changes.changed("ci", usd(10), usd(8)); // 8.5 of 8: used up (0.95 passed with it: one alert)
    expect(shown(k.got).slice(1)).toEqual([["key:ci", 1, 8, 8.5, true]]);
    expect(k.got.at(-1)!.detail.passed).toEqual([0.95]);
    expect(logged.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ level: "warn", key: "ci", failed: 1, error: "connection reset (test)" })]);
    k.close();
  });

  test("a request in flight over the lowering is judged against the new budget: the share 1 it uses up, no threshold of the old one", async () => {
    const k = spent850();
    const settle = k.inFlight(usd(10)); // admitted under the $10 budget
    await k.changes.changed("ci", usd(10), usd(8.8)); // 0.95 of $8.80
    settle(1); // $9.50: past 0.95 of $10, and all of $8.80
    expect(shown(k.got)).toEqual([
      ["key:ci", 0.8, 10, 8.5, false],
      ["key:ci", 0.95, 8.8, 8.5, false],
      ["key:ci", 1, 8.8, 9.5, true],
    ]);
    k.close();
  });

  test("a request in flight over a chain of changes is judged against the last; over a budget removed, raises nothing", async () => {
    const k = spent850();
    const first = k.inFlight(usd(10));
    await k.changes.changed("ci", usd(10), usd(20));
    const second = k.inFlight(usd(20));
    const third = k.inFlight(usd(20));
    await k.changes.changed("ci", usd(20), usd(9)); // 8.5 of 9: 0.944, 0.8 of $9 (8.5 was under 0.8 of $20)
    first(0.1); // 8.6 of 9: 0.956, the 0.95 of $9 (not of $10)
    second(0.1); // 8.7 of 9 (not of $20)
    expect(shown(k.got).slice(1)).toEqual([
      ["key:ci", 0.8, 9, 8.5, false],
      ["key:ci", 0.95, 9, 8.6, false],
    ]);
    await k.changes.changed("ci", usd(9), undefined);
    third(1); // 9.7: past all of $9, which is gone
    expect(k.got.length).toBe(3);
    k.close();
  });

  test("learned from another instance's change (a shared store's re-read): the same alerts, with the use read at once, raised a moment later (the changing instance claims first); no claims; a request in flight here judged against the new budget", async () => {
    const claims: AlertEvent[] = [];
    const k = spent850(claims);
    const settle = k.inFlight(usd(10)); // admitted here under the $10 budget
    const learned = k.changes.learned("ci", usd(10), usd(8.8));
    await Bun.sleep(0); // the use is read (8.5)
    expect(k.got.length).toBe(1); // nothing yet
    settle(1); // $9.50: all of $8.80 (not 0.95 of $10)
    await learned;
    expect(shown(k.got).slice(1)).toEqual([
      ["key:ci", 1, 8.8, 9.5, true],
      ["key:ci", 0.95, 8.8, 8.5, false],
    ]);
    expect(claims).toEqual([]); // the instance that took the change claims the 0.8 of $8.80
    k.close();
  });

  test("this instance's own change reported by a re-read first: raised once, by its own call, with its claims; a stop drops what waits", async () => {
    const claims: AlertEvent[] = [];
    const k = spent850(claims);
    const learned = k.changes.learned("ci", usd(10), usd(8.8)); // a re-read between the PATCH's write and its own
    await k.changes.changed("ci", usd(10), usd(8.8));
    await learned;
    await Bun.sleep(50);
    expect(shown(k.got).slice(1)).toEqual([["key:ci", 0.95, 8.8, 8.5, false]]);
    expect(shown(claims)).toEqual([["key:ci", 0.8, 8.8, 8.5, false]]);
    const stopped = k.changes.learned("ci", usd(8.8), usd(8));
    k.changes.close();
    await stopped;
    await Bun.sleep(50);
    expect(k.got.length).toBe(2);
    k.close();
  });

  test("which budgets count as changed: by window and unit; a new one has no previous amount", () => {
    const before: KeyLimits = { budgets: [{ window: "1d", usd: 10 }, { window: "7d", tokens: 1000 }] };
    const after: KeyLimits = { budgets: [{ window: "1d", usd: 10 }, { window: "7d", tokens: 900 }, { window: "1d", tokens: 50 }] };
    expect(changedBudgets(before, after)).toEqual([
      { budget: { window: "7d", tokens: 900 }, previous: 1000 },
      { budget: { window: "1d", tokens: 50 } },
    ]);
    expect(changedBudgets(after, undefined)).toEqual([]);
  });
});
