/**
 * The count of a USD budget's unpriced requests in GET /admin/api/keys (src/admin/unpriced-budget.ts)
 * is a usage query over the whole window: review19 R5 measured 100–150 ms per key on SQLite with
 * 300,000 rows, run on every list (the Keys page reads it every second under traffic), and a shared
 * database away made the whole list a 503. What a lead notices: the list answers from a reused count
 * (no second query within the reuse time), a request of an unpriced model served here asks again at
 * once, and a store that cannot count leaves the note out instead of failing the list.
 */
import { expect, test } from "bun:test";
import type { BudgetUse } from "../../pipeline/ports.ts";
import { UNPRICED_COUNT_TTL_MS, withUnpricedCounts } from "../../src/admin/unpriced-budget.ts";
import { noteUnpricedServed } from "../../src/limits/unpriced-seen.ts";

const usd: BudgetUse = { budget: { window: "1d", usd: 5 } as BudgetUse["budget"], used: 0.2, startedAt: 1_800_000_000_000, resetsAt: 1_800_086_400_000 };
const tokens: BudgetUse = { budget: { window: "1d", tokens: 1000 } as BudgetUse["budget"], used: 10, startedAt: 1_800_000_000_000 };

/** A usage store whose summary answers `unpriced` rows and counts how often it was asked. */
function countingStore(unpriced: () => number) {
  const store = {
    asked: 0,
    async usageSummary() {
      store.asked++;
      return [{ unpriced: unpriced() }] as never;
    },
  };
  return store;
}

test("a count is reused within the reuse time, asked again after it, and at once when this instance served the key an unpriced request", async () => {
  let rows = 3;
  const store = countingStore(() => rows);
  const t0 = 1_800_000_100_000;
  const key = `alice-${Math.random()}`;
  expect((await withUnpricedCounts(store, key, [usd, tokens], t0))[0]).toMatchObject({ used: 0.2, unpriced: 3 });
  expect(store.asked).toBe(1);
  rows = 4;
  // the Keys page's next reads: the same count, no query
  expect((await withUnpricedCounts(store, key, [usd], t0 + 1_000))[0]!).toMatchObject({ unpriced: 3 });
  expect(store.asked).toBe(1);
  // a request of an unpriced model served here: asked again at once
  noteUnpricedServed(key);
  expect((await withUnpricedCounts(store, key, [usd], t0 + 2_000))[0]!).toMatchObject({ unpriced: 4 });
  expect(store.asked).toBe(2);
  rows = 5; // another instance's request (a shared database): seen once the reuse time is over
  expect((await withUnpricedCounts(store, key, [usd], t0 + 2_000 + UNPRICED_COUNT_TTL_MS - 1))[0]!).toMatchObject({ unpriced: 4 });
  expect((await withUnpricedCounts(store, key, [usd], t0 + 2_000 + UNPRICED_COUNT_TTL_MS))[0]!).toMatchObject({ unpriced: 5 });
  expect(store.asked).toBe(3);
  // the token budget is never counted
  expect((await withUnpricedCounts(store, key, [tokens], t0))[0]).toEqual(tokens);
});

test("a store that cannot count (a shared database away) leaves the note out; the budget's use still answers", async () => {
  const store = {
    async usageSummary(): Promise<never> {
      throw Object.assign(new Error("the shared store is unavailable"), { code: "unavailable" });
    },
  };
  const out = await withUnpricedCounts(store, `bob-${Math.random()}`, [usd]);
  expect(out).toEqual([usd]);
  expect(out[0]).not.toHaveProperty("unpriced");
});
