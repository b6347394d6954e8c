/**
 * Client key limits counted across instances (SPEC 9.6, D-2): two stores on one throwaway PostgreSQL
 * database stand for two gateway instances; each has its own SharedKeyCounters. The request after a
 * limit is reached is refused whichever instance it reaches; a refused request counts nothing; an
 * unreachable database falls back to counting on the instance.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BUDGET_WINDOW_MS } from "../../pipeline/key-limits.ts";
import { MemoryKeyCounters } from "../../src/limits/counters.ts";
import { SharedKeyCounters } from "../../src/limits/shared-counters.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import type { SharedStore } from "../../src/store/shared.ts";
import { StoreError, type Store } from "../../src/store/types.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

let pg: TestPostgres;
let a: Store;
let b: Store;
let A: SharedKeyCounters;
let B: SharedKeyCounters;

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase("shared_counters");
  a = await openPostgresStore({ url, onError: () => {} });
  b = await openPostgresStore({ url, onError: () => {} });
  A = new SharedKeyCounters(a, new MemoryKeyCounters());
  B = new SharedKeyCounters(b, new MemoryKeyCounters());
}, 120_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await pg?.destroy();
});

const spent = { tokens: 18, usd: 0 };

/** rpm and tpm count in fixed minute windows: start a test well inside one. */
async function insideOneMinute(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 55_000) await Bun.sleep(60_000 - into + 50);
}

describe("across two instances", () => {
  test("the stores are shared", () => {
    expect(a.shared).toBe(true);
  });

  test("rpm 3: two requests on A and one on B pass, the 4th on either is refused until the minute ends", async () => {
    const l = { rpm: 3 };
    await insideOneMinute();
    const now = Date.now();
    expect((await A.admit("rpm", l, now)).ok).toBe(true);
    expect((await A.admit("rpm", l, now)).ok).toBe(true);
    expect((await B.admit("rpm", l, now)).ok).toBe(true);
    const r = await B.admit("rpm", l, now);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.refusal).toMatchObject({ limit: "rpm", used: 3, max: 3 });
      expect(r.refusal.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(r.refusal.retryAfterMs).toBeGreaterThan(0);
    }
    // the refusal took nothing back from anyone else: still refused on A
    expect((await A.admit("rpm", l, now)).ok).toBe(false);
  });

  test("concurrency 1: a request in flight on A refuses B until A's is settled", async () => {
    const l = { concurrency: 1 };
    const first = await A.admit("conc", l, Date.now());
    expect(first.ok).toBe(true);
    const r = await B.admit("conc", l, Date.now());
    expect(r.ok === false && r.refusal).toEqual({ limit: "concurrency", used: 1, max: 1, retryAfterMs: 1000 });
    await A.settle("conc", l, spent, Date.now(), first.ok ? first.ticket : undefined);
    const second = await B.admit("conc", l, Date.now());
    expect(second.ok).toBe(true);
    expect(B.inFlight("conc")).toBe(1);
  });

  test("tpm 40: tokens settled on both count; the request after 54 tokens is refused", async () => {
    const l = { tpm: 40 };
    await insideOneMinute();
    for (const c of [A, B, A]) {
      const v = await c.admit("tpm", l, Date.now());
      expect(v.ok).toBe(true);
      await c.settle("tpm", l, spent, Date.now(), v.ok ? v.ticket : undefined);
    }
    const r = await B.admit("tpm", l, Date.now());
    expect(r.ok === false && r.refusal.limit).toBe("tpm");
    expect(r.ok === false && r.refusal.used).toBe(54);
  });

  test("budgets: settled on either, seen by both; windows are aligned to multiples of their length", async () => {
    const l = { budgets: [{ window: "5h" as const, tokens: 50 }, { window: "1d" as const, usd: 1 }] };
    const changes = [];
    for (const c of [A, B, B]) {
      const v = await c.admit("budget", l, Date.now());
      expect(v.ok).toBe(true);
      changes.push(await c.settle("budget", l, { tokens: 18, usd: 0.25 }, Date.now(), v.ok ? v.ticket : undefined));
    }
    expect(changes[2].map((ch) => [ch.before, ch.after])).toEqual([
      [36, 54],
      [0.5, 0.75],
    ]);
    const r = await A.admit("budget", l, Date.now());
    expect(r.ok === false && r.refusal).toMatchObject({ limit: "budget", budget: { window: "5h", tokens: 50 }, used: 54, max: 50 });
    const use = await A.budgetUse("budget", l, Date.now());
    expect(use.map((u) => u.used)).toEqual([54, 0.75]);
    expect(use[0].startedAt! % BUDGET_WINDOW_MS["5h"]).toBe(0);
    expect(use[0].resetsAt! - use[0].startedAt!).toBe(BUDGET_WINDOW_MS["5h"]);
  });
});

describe("when the shared database cannot be reached", () => {
  test("requests are counted on this instance (degraded), logged once", async () => {
    const down = (): never => {
      throw new StoreError("unavailable", "database unreachable");
    };
    const broken = { shared: true, tryLease: down, releaseLease: () => {}, addToCounter: down } as unknown as SharedStore;
    const logs: string[] = [];
    const c = new SharedKeyCounters(broken, new MemoryKeyCounters(), (l) => logs.push(l));
    const l = { rpm: 1 };
    const v = await c.admit("k", l, Date.now());
    expect(v.ok).toBe(true);
    expect((await c.admit("k", l, Date.now())).ok).toBe(false);
    expect(logs).toHaveLength(1);
    expect(JSON.parse(logs[0]).msg).toContain("counted by this instance alone");
  });
});
