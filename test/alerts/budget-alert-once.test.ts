/**
 * A key budget's threshold is raised once per budget window and amount (README "Alerts", SPEC 9.7),
 * whatever steps the counters report: until 2026-12-07 a PostgreSQL instance that learned another's use
 * of a key in several concurrent first reads reported the same step once per refused request, and each
 * was raised (src/alerts/alerts.ts now remembers what it said per window and amount).
 */
import { afterEach, expect, test } from "bun:test";
import { Alerts } from "../../src/alerts/alerts.ts";
import { EventBus, type AlertEvent } from "../../src/events/bus.ts";

const T = Date.parse("2026-12-01T12:00:00.000Z");
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
const collect = (bus: EventBus) => {
  const out: AlertEvent[] = [];
  bus.subscribe((e) => void (e.type === "alert" && out.push(e)));
  return out;
};

test("the same step reported again (a shared store's concurrent first reads, tryout44): raised once per window and amount; a later window or another amount raises again", () => {
  const bus = new EventBus();
  const got = collect(bus);
  const alerts = new Alerts(bus, { thresholds: () => [0.5, 0.9], now: () => T });
  cleanups.push(() => alerts.close());
  const budget = { window: "1d" as const, tokens: 100 };
  const end = T + 86_400_000;
  // ten refused requests on an instance that learned the others' 108 tokens from 0, each the same step
  for (let i = 0; i < 10; i++) alerts.budgetChanged("team", [{ budget, before: 0, after: 108, resetsAt: end + (i % 3) }], T);
  expect(got.map((a) => [a.detail.threshold, a.detail.passed])).toEqual([[1, [0.5, 0.9]]]);
  // a step that crosses only what was raised: nothing; 0.9 learned first, then the step to 1: 1 alone
  const other = { window: "1d" as const, tokens: 200 };
  alerts.budgetChanged("team", [{ budget: other, before: 0, after: 185, resetsAt: end }], T);
  alerts.budgetChanged("team", [{ budget: other, before: 0, after: 120, resetsAt: end }], T);
  alerts.budgetChanged("team", [{ budget: other, before: 0, after: 210, resetsAt: end }], T);
  expect(got.slice(1).map((a) => [a.detail.limit, a.detail.threshold, a.detail.passed ?? null])).toEqual([
    [200, 0.9, [0.5]],
    [200, 1, null],
  ]);
  // the next window: raised again
  alerts.budgetChanged("team", [{ budget, before: 0, after: 108, resetsAt: end + 86_400_000 }], T + 86_400_000);
  expect(got.map((a) => a.detail.threshold)).toEqual([1, 0.9, 1, 1]);
});

test("a budget raised and lowered back to the same amount in the same window raises no threshold again (once per window and amount)", () => {
  const bus = new EventBus();
  const got = collect(bus);
  const alerts = new Alerts(bus, { thresholds: () => [0.8, 0.95], now: () => T });
  cleanups.push(() => alerts.close());
  const end = T + 86_400_000;
  const at = (tokens: number) => ({ window: "1d" as const, tokens });
  // 0 -> 850 of 1,000 tokens: 0.8
  alerts.budgetChanged("team", [{ budget: at(1000), before: 0, after: 850, resetsAt: end }], T);
  expect(got.map((a) => [a.detail.limit, a.detail.threshold])).toEqual([[1000, 0.8]]);
  // raised to 2,000 (850 is 0.425 of it): nothing
  alerts.budgetAmountChanged("team", [{ budget: at(2000), previous: 1000, used: 850, resetsAt: end }], T + 1000);
  // lowered back to 1,000 (850 is 0.85 of it again, past 0.8, which was not under 2,000): 0.8 was said for 1,000 in this window, nothing
  alerts.budgetAmountChanged("team", [{ budget: at(1000), previous: 2000, used: 850, resetsAt: end }], T + 2000);
  expect(got).toHaveLength(1);
  // the next window: raised again
  alerts.budgetChanged("team", [{ budget: at(1000), before: 0, after: 850, resetsAt: end + 86_400_000 }], T + 86_400_000);
  expect(got.map((a) => a.detail.threshold)).toEqual([0.8, 0.8]);
});
