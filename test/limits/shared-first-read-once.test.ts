/**
 * A key budget used up on one instance, then requests of the key at once on another that has served
 * none (README "Running several instances", "Alerts": each threshold "is raised once per budget window
 * and budget amount"). Until 2026-12-07 each of those requests opened its own pending window on B (the
 * admission's look at the key's other limits dropped the window it had just made, nothing waiting on it
 * yet, and opened another), each confirmed it and learned A's use from 0: B's alerts heard the step
 * 0 → 108 once per request (9 of 10 in tryout44's e2e, test/e2e/multi-instance-alert-repeat.test.ts).
 */
import { expect, test } from "bun:test";
import type { BudgetChange } from "../../pipeline/ports.ts";
import { SharedKeyCounters } from "../../src/limits/shared-counters.ts";
import type { Store } from "../../src/store/types.ts";
import { roomInWindow } from "../support/aligned-window.ts";
import { twoStoresOnPostgres } from "../support/two-instances-on-postgres.ts";

let a: Store;
let b: Store;

twoStoresOnPostgres("first_read_once", (x, y) => {
  [a, b] = [x, y];
});

test("ten requests at once on B of a key A used up: all refused as used up, and B hears A's use once (one step 0 → 108)", async () => {
  const key = "team";
  const limits = { budgets: [{ window: "1d" as const, tokens: 100 }] };
  const A = new SharedKeyCounters(a, () => {}, { reportMs: 3_600_000 });
  const B = new SharedKeyCounters(b, () => {}, { reportMs: 3_600_000 });
  const heard: BudgetChange[] = [];
  B.onOthersBudgetChange = (_key, changes) => void heard.push(...changes);
  try {
    // Waits up to 60.05 s within a minute of midnight UTC: the test's timeout is that plus its run (it was
    // 60 s, which the wait alone could take: reached at 23:59:00.0-00.5 UTC, the test timed out).
    await roomInWindow(86_400_000, 60_000);
    for (let i = 0; i < 6; i++) {
      const d = await A.admit(key, limits, Date.now());
      if (!d.ok) throw new Error(`A refused request ${i + 1}`);
      await A.settle(key, limits, { tokens: 18, usd: 0 }, Date.now(), d.ticket);
    }
    await A.report();
    const onB = await Promise.all(Array.from({ length: 10 }, () => B.admit(key, limits, Date.now())));
    expect(onB.map((d) => (d.ok ? "admitted" : `${d.refusal.limit} ${d.refusal.used}/${d.refusal.max}${d.refusal.heldElsewhere ? " held" : ""}`))).toEqual(Array(10).fill("budget 108/100"));
    expect(heard.map((c) => [c.before, c.after])).toEqual([[0, 108]]);
    const [use] = await B.budgetUse(key, limits, Date.now());
    expect(use!.used).toBe(108);
  } finally {
    await A.close();
    await B.close();
  }
}, 120_000);
