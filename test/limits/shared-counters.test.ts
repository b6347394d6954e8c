/**
 * Client key limits counted across instances (SPEC 9.6, D-2): two stores on one throwaway PostgreSQL
 * database stand for two gateway instances; each has its own SharedKeyCounters. The request after a
 * limit is reached is refused whichever instance it reaches; a refused request counts nothing; an
 * unreachable database falls back to counting on the instance.
 */
import { describe, expect, test } from "bun:test";
import { BUDGET_WINDOW_MS } from "../../pipeline/key-limits.ts";
import { monoNow } from "../../src/limits/quota-share.ts";
import { SharedKeyCounters } from "../../src/limits/shared-counters.ts";
import type { SharedStore } from "../../src/store/shared.ts";
import { StoreError, type Store } from "../../src/store/types.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import type { TestPostgres } from "../support/postgres.ts";
import { twoStoresOnPostgres } from "../support/two-instances-on-postgres.ts";

let a: Store;
let b: Store;
let A: SharedKeyCounters;
let B: SharedKeyCounters;
let pg: TestPostgres;

twoStoresOnPostgres("shared_counters", (x, y, server) => {
  [a, b, pg] = [x, y, server];
  A = new SharedKeyCounters(a);
  B = new SharedKeyCounters(b);
});

const spent = { tokens: 18, usd: 0 };

/**
 * The timeout of a test that calls {@link inOneMinute}: up to three runs, each after a wait of up to 5 s
 * for the next minute. Bun's default of 5 s (bunfig's `timeout` is not read; scripts/test passes
 * --timeout 20000) failed such a test reached 55.0–55.2 s into a minute under `bun test` (the wait
 * alone took 4.85 s): "an instance that dies without reporting" timed out at 5000 ms in a run started
 * at 2026-12-31 23:59:50 UTC.
 */
const IN_ONE_MINUTE_TIMEOUT_MS = 60_000;

/**
 * rpm and tpm count in fixed minute windows (on the database's clock, here the same machine's): runs
 * `body` inside one minute, started at least 5 s before the minute ends. When the minute turned while
 * it ran (or was within 1 s of turning) and it failed, the window it counted in changed under it (a
 * loaded machine took longer than those 5 s): it runs again, at most twice more, in the new minute and
 * with a fresh key name (`k(name)`). A failure inside one minute fails the test.
 */
async function inOneMinute(body: (k: (name: string) => string) => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const into = Date.now() % 60_000;
    if (into > 55_000) await Bun.sleep(60_000 - into + 50);
    const minute = Math.floor(Date.now() / 60_000);
    try {
      await body((name) => (attempt === 0 ? name : `${name}_again${attempt}`));
      return;
    } catch (err) {
      if (attempt >= 2 || Math.floor((Date.now() + 1000) / 60_000) === minute) throw err;
    }
  }
}

describe("across two instances", () => {
  test("the stores are shared", () => {
    expect(a.shared).toBe(true);
  });

  test("rpm 3: requests alternating over A and B pass until 3, then the next is refused on both until the minute ends", async () => {
    const l = { rpm: 3 };
    await inOneMinute(async (k) => {
      const key = k("rpm");
      const now = Date.now();
      expect((await A.admit(key, l, now)).ok).toBe(true);
      expect((await B.admit(key, l, now)).ok).toBe(true);
      expect((await A.admit(key, l, now)).ok).toBe(true);
      const r = await B.admit(key, l, now);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.refusal).toMatchObject({ limit: "rpm", used: 3, max: 3 });
        expect(r.refusal.retryAfterMs).toBeLessThanOrEqual(60_000);
        expect(r.refusal.retryAfterMs).toBeGreaterThan(0);
      }
      // the refusal took nothing back from anyone else: still refused on A
      expect((await A.admit(key, l, now)).ok).toBe(false);
      // this minute's use, as the Keys page shows it: A learns B's at B's report
      await B.report();
      await A.report();
      // at the limit, with how long until the minute ends (what the dry run's 429 says, try18 D10)
      const use = A.minuteUse(key, l, Date.now());
      expect(use).toEqual({ requests: { used: 3, limit: 3, freesInMs: expect.any(Number) } });
      expect(use.requests!.freesInMs!).toBeGreaterThan(0);
      expect(use.requests!.freesInMs!).toBeLessThanOrEqual(60_000);
    });
  }, IN_ONE_MINUTE_TIMEOUT_MS);

  test("rpm 40 under 200 parallel admissions over A and B: exactly 40 admitted, mostly from memory", async () => {
    const l = { rpm: 40 };
    await inOneMinute(async (k) => {
      const key = k("burst");
      const verdicts = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? A : B).admit(key, l, Date.now())));
      expect(verdicts.filter((v) => v.ok).length).toBe(40);
    });
  }, IN_ONE_MINUTE_TIMEOUT_MS);

  test("a share is admitted from memory: after the first request, A answers without waiting while its share has room", async () => {
    const l = { rpm: 80 };
    await inOneMinute(async (k) => {
      const key = k("mem");
      expect((await A.admit(key, l, Date.now())).ok).toBe(true);
      await A.report();
      // block = 80 / 8 = 10 requests held ahead: the next ones are decided synchronously (not a promise)
      const next = A.admit(key, l, Date.now());
      expect(next instanceof Promise).toBe(false);
      expect((next as { ok: boolean }).ok).toBe(true);
    });
  }, IN_ONE_MINUTE_TIMEOUT_MS);

  test("concurrency 1: a request in flight on A refuses B until A's is settled", async () => {
    const l = { concurrency: 1 };
    const first = await A.admit("conc", l, Date.now());
    expect(first.ok).toBe(true);
    const r = await B.admit("conc", l, Date.now());
    // B holds none of the slot: the refusal says the slots are held on other instances (newuser12a G20)
    expect(r.ok === false && r.refusal).toEqual({ limit: "concurrency", used: 1, max: 1, retryAfterMs: 1000, slotsElsewhere: { here: 0, freedWithinMs: 15_000 } });
    await A.settle("conc", l, spent, Date.now(), first.ok ? first.ticket : undefined);
    const second = await B.admit("conc", l, Date.now());
    expect(second.ok).toBe(true);
    expect(B.inFlight("conc")).toBe(1);
  });

  test("concurrency 8 under bursts over A and B: never more than 8 in flight, slots freed by settled requests are reused", async () => {
    // Its own pair, whose spare is never given back for idleness (IDLE_MS, 5 s by default): under load
    // the bursts and the last admissions took longer than that, B gave its spare back and A got 8.
    const url = await pg.createDatabase("shared_counters_burst");
    const x = await openPostgresStore({ url, onError: () => {} });
    const y = await openPostgresStore({ url, onError: () => {} });
    const X = new SharedKeyCounters(x, () => {}, { idleMs: 3_600_000 });
    const Y = new SharedKeyCounters(y, () => {}, { idleMs: 3_600_000 });
    try {
      const l = { concurrency: 8 }; // block = 1 spare slot per instance
      for (let round = 0; round < 3; round++) {
        const verdicts = await Promise.all(Array.from({ length: 40 }, (_, i) => Promise.resolve((i % 2 ? X : Y).admit("burst-conc", l, Date.now())).then((v) => ({ v, c: i % 2 ? X : Y }))));
        const ok = verdicts.filter((v) => v.v.ok);
        expect(ok.length).toBeLessThanOrEqual(8);
        expect(ok.length).toBeGreaterThan(0);
        await Promise.all(ok.map((v) => v.c.settle("burst-conc", l, spent, Date.now(), v.v.ok ? v.v.ticket : undefined)));
      }
      // Which instance's refill reaches the database first decides a burst: Y may have admitted none in
      // the last one and hold no slot. One request of Y's, settled, leaves it the spare it keeps while
      // the key is busy there (asked again while X's give-backs after its settles are on their way).
      let one = await Y.admit("burst-conc", l, Date.now());
      for (let i = 0; i < 100 && !one.ok; i++) one = await Y.admit("burst-conc", l, Date.now());
      expect(one.ok).toBe(true);
      await Y.settle("burst-conc", l, spent, Date.now(), one.ok ? one.ticket : undefined);
      // All settled: X alone gets every slot but Y's spare: 7.
      const again = [];
      for (let i = 0; i < 9; i++) again.push(await X.admit("burst-conc", l, Date.now()));
      expect(again.filter((v) => v.ok).length).toBe(7);
    } finally {
      await X.close();
      await Y.close();
      await x.close();
      await y.close();
    }
  }, 90_000);

  test("tpm 40: tokens settled on both count; the request after 54 tokens is refused", async () => {
    const l = { tpm: 40 };
    await inOneMinute(async (k) => {
      const key = k("tpm");
      for (const c of [A, B, A]) {
        const v = await c.admit(key, l, Date.now());
        expect(v.ok).toBe(true);
        await c.settle(key, l, spent, Date.now(), v.ok ? v.ticket : undefined);
      }
      // Each instance learns the other's use at its next report (every second).
      await A.report();
      await B.report();
      const r = await B.admit(key, l, Date.now());
      expect(r.ok === false && r.refusal.limit).toBe("tpm");
      expect(r.ok === false && r.refusal.used).toBe(54);
      expect(B.minuteUse(key, l, Date.now())).toEqual({ tokens: { used: 54, limit: 40, freesInMs: expect.any(Number) } });
    });
  }, IN_ONE_MINUTE_TIMEOUT_MS);

  test("budgets: settled on either, seen by both; windows open at the first request and last their length (SPEC 2.3)", async () => {
    const l = { budgets: [{ window: "5h" as const, tokens: 50 }, { window: "1d" as const, usd: 1 }] };
    const opened = Date.now();
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
    await B.report();
    await A.report(); // A learns B's use at its next report (every second)
    const r = await A.admit("budget", l, Date.now());
    expect(r.ok === false && r.refusal).toMatchObject({ limit: "budget", budget: { window: "5h", tokens: 50 }, used: 54, max: 50 });
    const use = await A.budgetUse("budget", l, Date.now());
    expect(use.map((u) => u.used)).toEqual([54, 0.75]);
    // Opened by A's first request (the database's clock is this machine's), not at a multiple of 5 h or 1 d since the epoch.
    expect(use[0].startedAt!).toBeGreaterThanOrEqual(opened - 50);
    expect(use[0].startedAt!).toBeLessThan(opened + 5000);
    expect(use[0].resetsAt! - use[0].startedAt!).toBe(BUDGET_WINDOW_MS["5h"]);
    expect(use[1].resetsAt! - use[1].startedAt!).toBe(BUDGET_WINDOW_MS["1d"]);
    expect((await B.budgetUse("budget", l, Date.now())).map((u) => [u.startedAt, u.resetsAt])).toEqual(use.map((u) => [u.startedAt, u.resetsAt]));
  }, 80_000);

  test("a USD budget's requests of models without a price: counted where each settles, seen by both after a report; token budgets have no count (review19 R5)", async () => {
    const l = { budgets: [{ window: "1d" as const, usd: 1 }, { window: "5h" as const, tokens: 10_000 }] };
    const serve = async (c: SharedKeyCounters, spent: { tokens: number; usd: number; unpriced?: boolean }) => {
      const v = await c.admit("usd-unpriced-count", l, Date.now());
      expect(v.ok).toBe(true);
      await c.settle("usd-unpriced-count", l, spent, Date.now(), v.ok ? v.ticket : undefined);
    };
    for (const c of [A, A, B]) await serve(c, { tokens: 18, usd: 0, unpriced: true });
    for (const c of [A, B]) await serve(c, { tokens: 18, usd: 0.25 });
    // each instance knows its own at once
    expect((await A.budgetUse("usd-unpriced-count", l, Date.now()))[0]!.unpriced).toBe(2);
    await A.report();
    await B.report();
    await A.report(); // each learns the other's at its next report (every second)
    for (const c of [A, B]) {
      const [usd, tokens] = await c.budgetUse("usd-unpriced-count", l, Date.now());
      expect(usd).toMatchObject({ used: 0.5, unpriced: 3 });
      expect(tokens).toMatchObject({ used: 90 });
      expect(tokens).not.toHaveProperty("unpriced");
    }
  }, 80_000);

  test("tpm: requests in flight hold their expected tokens; the one that would take the minute past the limit waits (Retry-After 1 s)", async () => {
    const l = { tpm: 1000 };
    await inOneMinute(async (k) => {
      const key = k("tpm-held");
      const first = await A.admit(key, l, Date.now(), { tokens: 400 });
      const second = await A.admit(key, l, Date.now(), { tokens: 400 });
      expect([first.ok, second.ok]).toEqual([true, true]);
      // 400 + 400 held, 400 more would pass 1,000: before, all were admitted (tokens counted only at the end).
      const third = await A.admit(key, l, Date.now(), { tokens: 400 });
      expect(third).toEqual({ ok: false, refusal: { limit: "tpm", used: 0, max: 1000, retryAfterMs: 1000, inFlight: 2 } });
      for (const v of [first, second]) if (v.ok) await A.settle(key, l, { tokens: 10, usd: 0 }, Date.now(), v.ticket);
      // Both ended (20 tokens used): nothing is held, a request goes again.
      expect((await A.admit(key, l, Date.now(), { tokens: 400 })).ok).toBe(true);
    });
  }, IN_ONE_MINUTE_TIMEOUT_MS);

  test("a budget across A and B: six requests sent together, 400 tokens expected each against 1,000, get two admitted, not six; the others are told to retry in 1 s", async () => {
    // Its own pair, whose spare is never given back for idleness (IDLE_MS, 5 s by default): only the
    // settled requests' return to the pool can let Y's request go (the wait for it below has no
    // fixed length, and an idle give-back would let it go without that return).
    const url = await pg.createDatabase("shared_counters_held");
    const x = await openPostgresStore({ url, onError: () => {} });
    const y = await openPostgresStore({ url, onError: () => {} });
    const X = new SharedKeyCounters(x, () => {}, { idleMs: 3_600_000 });
    const Y = new SharedKeyCounters(y, () => {}, { idleMs: 3_600_000 });
    try {
      const l = { budgets: [{ window: "5h" as const, tokens: 1000 }] };
      const verdicts = [];
      for (const c of [X, X, X, Y, Y, Y]) verdicts.push(await c.admit("budget-held", l, Date.now(), { tokens: 400 }));
      // X holds 800 for its two in flight (and the rest of the pool its third asked for); Y gets none of it.
      expect(verdicts.map((v) => v.ok)).toEqual([true, true, false, false, false, false]);
      for (const v of verdicts) {
        if (v.ok) continue;
        // Under the budget: a rate limit for the time requests in flight take, not a spent budget.
        expect(v.refusal).toMatchObject({ limit: "budget", used: 0, max: 1000, retryAfterMs: 1000 });
      }
      expect(verdicts[2].ok === false && verdicts[2].refusal.inFlight).toBe(2);
      expect(verdicts.slice(3).map((v) => v.ok === false && v.refusal.heldElsewhere)).toEqual([true, true, true]);
      // X's requests end (100 tokens each): what they held returns to the pool, and Y's next request goes
      // once Y's pause after a short refill (1 s, refused from memory until then) is over. Asked until
      // it goes (not after a fixed 1.1 s: on a loaded machine X's give-back may land later).
      for (const v of verdicts.slice(0, 2)) if (v.ok) await X.settle("budget-held", l, { tokens: 100, usd: 0 }, Date.now(), v.ticket);
      await X.report();
      const end = Date.now() + 15_000;
      let next = await Y.admit("budget-held", l, Date.now(), { tokens: 400 });
      while (!next.ok && Date.now() < end) {
        await Bun.sleep(50);
        next = await Y.admit("budget-held", l, Date.now(), { tokens: 400 });
      }
      expect(next.ok === false ? next.refusal : "admitted").toBe("admitted");
    } finally {
      await X.close();
      await Y.close();
      await x.close();
      await y.close();
    }
  }, 120_000);

  test("a fresh USD budget: requests sent together hold their expected tokens at the model's dearest token price (five on $0.05 at $0.02 each: two go); an unpriced model's hold nothing, as before", async () => {
    const l = { budgets: [{ window: "1d" as const, usd: 0.05 }] };
    const verdicts = [];
    for (let i = 0; i < 5; i++) verdicts.push(await A.admit("usd-fresh", l, Date.now(), { tokens: 20, usdPerToken: 0.001 }));
    expect(verdicts.map((v) => v.ok)).toEqual([true, true, false, false, false]);
    expect(verdicts[2].ok === false && verdicts[2].refusal).toMatchObject({ limit: "budget", used: 0, max: 0.05, retryAfterMs: 1000, inFlight: 2 });
    const unpriced = [];
    for (let i = 0; i < 5; i++) unpriced.push(await A.admit("usd-unpriced", l, Date.now(), { tokens: 20 }));
    expect(unpriced.map((v) => v.ok)).toEqual([true, true, true, true, true]);
    for (const v of [...verdicts, ...unpriced]) if (v.ok) await A.settle(v === verdicts[0] || v === verdicts[1] ? "usd-fresh" : "usd-unpriced", l, { tokens: 0, usd: 0 }, Date.now(), v.ticket);
  }, 60_000);

  test("an instance that dies without reporting: the window over-admits by at most its share (one block)", async () => {
    const url = await pg.createDatabase("shared_counters_dead");
    await inOneMinute(async (k) => {
      const key = k("dead");
      const x = await openPostgresStore({ url, onError: () => {} });
      const y = await openPostgresStore({ url, onError: () => {} });
      // X never reports on its own (its timer is an hour): its admissions from memory stay unreported.
      const X = new SharedKeyCounters(x, () => {}, { reportMs: 3_600_000 });
      const Y = new SharedKeyCounters(y, () => {}, { reportMs: 3_600_000 });
      try {
        const l = { rpm: 32 }; // block = 4 requests
        // X takes a share of 4 (reporting 0 used) and admits 2 from it, the second from memory.
        expect((await X.admit(key, l, Date.now())).ok).toBe(true);
        const second = X.admit(key, l, Date.now());
        expect(second instanceof Promise).toBe(false);
        expect((second as { ok: boolean }).ok).toBe(true);
        // X's instance goes away without X reporting: its share no longer counts, its 2 admissions are unknown.
        await x.close();
        let admitted = 2;
        for (let i = 0; i < 40; i++) if ((await Y.admit(key, l, Date.now())).ok) admitted++;
        expect(admitted).toBe(34);
        expect(admitted - l.rpm).toBeLessThanOrEqual(4);
      } finally {
        await Y.close();
        await y.close();
      }
    });
  }, IN_ONE_MINUTE_TIMEOUT_MS);

  test("a report sent before a refill that reaches the database after it does not take the use back", async () => {
    // One instance's statements go over different pooled connections: X's timer report (0 used) is sent,
    // then X's request ends and its refill writes 18 used, then the report commits. Before, the row said 0
    // again and Y counted the window without X's 18 tokens (budget alerts and the limit included).
    const url = await pg.createDatabase("shared_counters_order");
    const x = await openPostgresStore({ url, onError: () => {} });
    const y = await openPostgresStore({ url, onError: () => {} });
    let release!: () => void;
    const reportHeld = new Promise<void>((r) => (release = r));
    const late = new Proxy(x, {
      get(t, p) {
        if (p === "reportQuotaUse") return async (rows: Parameters<Store["reportQuotaUse"]>[0]) => (await reportHeld, t.reportQuotaUse(rows));
        const v = Reflect.get(t, p);
        return typeof v === "function" ? v.bind(t) : v;
      },
    });
    const X = new SharedKeyCounters(late, () => {}, { reportMs: 3_600_000 });
    const Y = new SharedKeyCounters(y, () => {}, { reportMs: 3_600_000 });
    try {
      const l = { budgets: [{ window: "5h" as const, tokens: 30 }] };
      const v = await X.admit("order", l, Date.now());
      expect(v.ok).toBe(true);
      const report = X.report(); // sends 0 used; held on its way
      await X.settle("order", l, spent, Date.now(), v.ok ? v.ticket : undefined); // over the share: refilled at once with 18 used
      release();
      await report; // commits after the refill
      const w = await Y.admit("order", l, Date.now());
      expect(w.ok).toBe(true);
      const changes = await Y.settle("order", l, spent, Date.now(), w.ok ? w.ticket : undefined);
      expect(changes.map((c) => [c.before, c.after])).toEqual([[18, 36]]);
      const r = await Y.admit("order", l, Date.now());
      expect(r.ok === false && r.refusal).toMatchObject({ limit: "budget", used: 36, max: 30 });
    } finally {
      await X.close();
      await Y.close();
      await x.close();
      await y.close();
    }
  }, 60_000);

  test("spare a key left idle on one instance returns to the pool", async () => {
    const url = await pg.createDatabase("shared_counters_idle");
    await inOneMinute(async (k) => {
      const key = k("idle");
      const x = await openPostgresStore({ url, onError: () => {} });
      const y = await openPostgresStore({ url, onError: () => {} });
      const X = new SharedKeyCounters(x, () => {}, { reportMs: 3_600_000, idleMs: 0 });
      const Y = new SharedKeyCounters(y, () => {}, { reportMs: 3_600_000 });
      try {
        const l = { rpm: 16 }; // block = 2
        for (let i = 0; i < 3; i++) expect((await X.admit(key, l, Date.now())).ok).toBe(true);
        await Bun.sleep(20);
        await X.report(); // X is idle: its spare goes back
        let admitted = 0;
        for (let i = 0; i < 20; i++) if ((await Y.admit(key, l, Date.now())).ok) admitted++;
        expect(admitted).toBe(13);
      } finally {
        await X.close();
        await Y.close();
        await x.close();
        await y.close();
      }
    });
  }, IN_ONE_MINUTE_TIMEOUT_MS);
});

describe("when the shared database cannot be reached", () => {
  test("requests are counted on this instance (degraded), logged once", async () => {
    const down = (): never => {
      throw new StoreError("unavailable", "database unreachable");
    };
    const broken = { shared: true, tryLease: down, releaseLease: () => {}, addToCounter: down, setQuotaShare: down, reportQuotaUse: down } as unknown as SharedStore;
    const logs: string[] = [];
    const c = new SharedKeyCounters(broken, (l) => logs.push(l));
    const l = { rpm: 1 };
    const v = await c.admit("k", l, Date.now());
    expect(v.ok).toBe(true);
    expect((await c.admit("k", l, Date.now())).ok).toBe(false);
    expect(logs).toHaveLength(1);
    expect(JSON.parse(logs[0]).msg).toContain("counted by this instance alone");
  });

  test("an outage that begins right after a recovery, while a late failure of a statement sent before it left the counters degraded, is logged when the tick's probe fails", async () => {
    let away = false;
    const probe = async () => {
      if (away) throw new StoreError("unavailable", "database unreachable");
    };
    const store = { shared: true, reportQuotaUse: probe } as unknown as SharedStore;
    const logs: string[] = [];
    const c = new SharedKeyCounters(store, (l) => logs.push(l), { reportMs: 20 });
    // The state the counters' statements leave (their senders are private): an outage, its end, then
    // a late failure of a statement sent before that end (degraded again, no line: not a new outage).
    const inner = c as unknown as { unavailable(err: unknown, sent: number): boolean; recovered(sent: number): void };
    const before = monoNow();
    await Bun.sleep(2);
    expect(inner.unavailable(new StoreError("unavailable", "database unreachable"), monoNow())).toBe(true);
    await Bun.sleep(2);
    inner.recovered(monoNow());
    inner.unavailable(new StoreError("unavailable", "database unreachable"), before);
    expect(logs.map((l) => JSON.parse(l).msg)).toEqual([expect.stringContaining("counted by this instance alone"), expect.stringContaining("reachable again")]);
    // Now the database really goes away: the degraded tick's probe fails, and that outage is said.
    away = true;
    const deadline = Date.now() + 2_000;
    while (logs.length < 3 && Date.now() < deadline) await Bun.sleep(20);
    expect(logs.map((l) => JSON.parse(l).msg)).toEqual([expect.stringContaining("counted by this instance alone"), expect.stringContaining("reachable again"), expect.stringContaining("counted by this instance alone")]);
    await c.close(Date.now());
  });
});
