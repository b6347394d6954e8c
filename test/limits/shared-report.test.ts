/**
 * The shared key counters' once-a-second report (SPEC 9.6, D-2) on a throwaway PostgreSQL, two stores
 * standing for two instances that watch every key with limits: a report sends the use of the shares
 * whose use changed on its instance, not a row per watched key and limit (it did: with 1,000 keys, 3,000
 * rows each way every second on every instance, scripts/bench-shared-report.ts), and still brings back
 * the other instance's use of a key it never served (budget use, minute use).
 */
import { describe, expect, test } from "bun:test";
import { SharedKeyCounters } from "../../src/limits/shared-counters.ts";
import type { Store } from "../../src/store/types.ts";
import { roomInWindow } from "../support/aligned-window.ts";
import { twoStoresOnPostgres } from "../support/two-instances-on-postgres.ts";

let a: Store;
let b: Store;
const limits = { rpm: 1000, tpm: 1_000_000, budgets: [{ window: "1d" as const, tokens: 10_000_000 }] };
const KEYS = Array.from({ length: 50 }, (_, i) => ({ name: `k${i}`, id: `k${i}#1`, limits }));

twoStoresOnPostgres("shared_report", (x, y) => {
  [a, b] = [x, y];
});

/** `store` with the rows its use reports send counted (whichever report statement the counters use). */
function counting(store: Store) {
  const sent: number[] = [];
  const proxy = new Proxy(store, {
    get(t, p) {
      const v = Reflect.get(t, p, t);
      if (typeof v !== "function") return v;
      if (p === "reportQuotaUse" || p === "exchangeQuotaUse") return (rows: unknown[]) => (sent.push(rows.length), v.call(t, rows));
      return v.bind(t);
    },
  });
  return { proxy, sent };
}

async function use(counters: SharedKeyCounters, key: string, tokens: number): Promise<void> {
  const got = await counters.admit(key, limits, Date.now());
  if (!got.ok) throw new Error(`refused: ${JSON.stringify(got.refusal)}`);
  await counters.settle(key, limits, { tokens, usd: 0 }, Date.now(), got.ticket);
}

describe("the shared limits' report", () => {
  test("sends only the shares whose use changed here, and still learns the other instance's use of every watched key", async () => {
    const { proxy, sent } = counting(a);
    const A = new SharedKeyCounters(proxy as Store, () => {}, { reportMs: 3_600_000, keys: () => KEYS });
    const B = new SharedKeyCounters(b, () => {}, { reportMs: 3_600_000, keys: () => KEYS });
    try {
      // One minute throughout (aligned to multiples of a minute): across its end the minute's use starts
      // again from 0. The 1d budget's window opens with its first request and lasts a day.
      await roomInWindow(60_000, 15_000);
      await A.report();
      await use(B, "k7#1", 120);
      await B.report();
      sent.length = 0;
      await A.report();
      // Nothing changed on A: no row sent (150 before: 50 keys × rpm, tpm, budget).
      expect(sent.reduce((x, y) => x + y, 0)).toBe(0);
      // B's use of a key A never served, read back all the same.
      expect((await A.budgetUse("k7#1", limits, Date.now())).map((u) => u.used)).toEqual([120]);
      expect(A.minuteUse("k7#1", limits, Date.now())).toEqual({ requests: { used: 1, limit: 1000 }, tokens: { used: 120, limit: 1_000_000 } });
      // A key used on A: its changed shares alone (those the settle did not report already).
      await use(A, "k3#1", 40);
      sent.length = 0;
      await A.report();
      expect(sent.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(3);
      await B.report();
      expect((await B.budgetUse("k3#1", limits, Date.now())).map((u) => u.used)).toEqual([40]);
    } finally {
      await A.close();
      await B.close();
    }
  }, 60_000);
});
