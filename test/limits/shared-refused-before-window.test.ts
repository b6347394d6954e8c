/**
 * A key's budget window opens at its first counted request (SPEC 2.3, 9.6 with D-2; on PostgreSQL the
 * database keeps its start). A request refused by another of the key's limits (concurrency, rpm) on an
 * instance that does not know the key's window yet opens nothing there: it gets that limit's refusal,
 * not a budget one, and the instance still learns the window another instance opened and the use
 * counted in it (its keys list, dashboard, dry run and budget alerts read that use).
 */
import { describe, expect, test } from "bun:test";
import type { KeyLimits } from "../../pipeline/ports.ts";
import { SharedKeyCounters } from "../../src/limits/shared-counters.ts";
import type { Store } from "../../src/store/types.ts";
import { roomInWindow } from "../support/aligned-window.ts";
import { twoStoresOnPostgres } from "../support/two-instances-on-postgres.ts";

let a: Store;
let b: Store;

twoStoresOnPostgres("refused_before_window", (x, y) => {
  [a, b] = [x, y];
});

const budgets = [{ window: "5h" as const, tokens: 1000 }];

/** Two instances' counters on the one database; `watching` gives them the key to watch (as the gateway does). */
function instances(key: string, limits: KeyLimits, watching: boolean): [SharedKeyCounters, SharedKeyCounters] {
  const keys = watching ? { keys: () => [{ name: key, id: key, limits }] } : {};
  return [new SharedKeyCounters(a, () => {}, { reportMs: 3_600_000, ...keys }), new SharedKeyCounters(b, () => {}, { reportMs: 3_600_000, ...keys })];
}

/** B settles 17 tokens of its request; both report; each instance's budget use of `key`. */
async function spendOnB(A: SharedKeyCounters, B: SharedKeyCounters, key: string, limits: KeyLimits, ticket: unknown) {
  await B.settle(key, limits, { tokens: 17, usd: 0 }, Date.now(), ticket);
  for (let i = 0; i < 3; i++) await Promise.all([B.report(), A.report()]);
  const [[ua], [ub]] = await Promise.all([A.budgetUse(key, limits, Date.now()), B.budgetUse(key, limits, Date.now())]);
  return { ua: ua!, ub: ub! };
}

describe("on PostgreSQL, a request refused by another limit before the instance knows the budget's window", () => {
  test("refused by concurrency (the slot held on another instance): a concurrency refusal, and the instance then sees the other's window and use", async () => {
    const key = "agent";
    const limits = { concurrency: 1, budgets };
    const [A, B] = instances(key, limits, true);
    try {
      const held = await B.admit(key, limits, Date.now());
      expect(held.ok).toBe(true); // B opens the key's window and holds its one slot
      const refused = await A.admit(key, limits, Date.now());
      expect(refused.ok).toBe(false);
      if (refused.ok) return;
      expect(refused.refusal.limit).toBe("concurrency");
      expect(refused.refusal.budget).toBeUndefined();
      expect(refused.refusal.heldElsewhere).toBeUndefined();
      expect(refused.refusal.slotsElsewhere).toEqual({ here: 0, freedWithinMs: expect.any(Number) });
      const { ua, ub } = await spendOnB(A, B, key, limits, held.ok ? held.ticket : undefined);
      expect(ub.used).toBe(17);
      expect(ua).toEqual(ub);
    } finally {
      await A.close();
      await B.close();
    }
  }, 60_000);

  test("refused by rpm (the minute used on another instance): the instance, not watching the key, reads the other's window and use when asked", async () => {
    const key = "minute";
    const limits = { rpm: 1, budgets };
    const [A, B] = instances(key, limits, false);
    try {
      await roomInWindow(60_000, 10_000); // one minute throughout
      const served = await B.admit(key, limits, Date.now());
      expect(served.ok).toBe(true);
      const refused = await A.admit(key, limits, Date.now());
      expect(refused.ok === false && refused.refusal.limit).toBe("rpm");
      const { ua, ub } = await spendOnB(A, B, key, limits, served.ok ? served.ticket : undefined);
      expect(ub.used).toBe(17);
      expect(ua).toEqual(ub);
    } finally {
      await A.close();
      await B.close();
    }
  }, 90_000);
});
