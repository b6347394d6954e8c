/**
 * A key budget's window opens at the key's first counted request and resets a window's length later
 * (SPEC 2.3 "budgets: fixed windows aligned to the first use", 9.6), on the embedded store and on
 * PostgreSQL alike. On PostgreSQL the window used to be aligned to multiples of its length since the
 * epoch (UTC): a 5h budget first used at 09:10 reset at 10:00, and `GET /admin/api/keys` named a window
 * before any request. Here what a user sees on each store: no window before the first request; after it,
 * a window started by it and resetting 5 h later, in the admin API and in the 429 that refuses the
 * request after the budget is spent (its Retry-After and the reset time its message names). And on
 * PostgreSQL, two instances opening a key's window at the same moment end up with one start; and a
 * database upgraded from schema 21 keeps a window of the old alignment still open, with its use, until
 * its aligned end (neither reset nor counted twice by the upgrade).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp, type App } from "../../src/app.ts";
import { SharedKeyCounters } from "../../src/limits/shared-counters.ts";
import { migratePg, PG_MIGRATIONS } from "../../src/store/postgres/migrations.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { StoreError, type Store } from "../../src/store/types.ts";
import { roomInWindow } from "../support/aligned-window.ts";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

const KEY = "sy-first-use-budget-key-00000001";
const ADMIN = "sy-first-use-budget-admin-000002";
const FIVE_H = 5 * 3_600_000;
/** The database's clock and this process's are the same machine's; a statement's time may lie a little outside the bracket read here. */
const SLACK_MS = 50;

let pg: TestPostgres;
let fake: FakeUpstream;
const dirs: string[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  fake = await startFakeUpstream();
}, 120_000);

afterAll(async () => {
  await fake?.stop();
  await pg?.destroy();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A gateway on the embedded store (no `database`) or on a fresh PostgreSQL database, with the key `win`: a 5h budget of 30 tokens (each reply is 18). */
async function gateway(database?: string): Promise<App> {
  const dir = mkdtempSync(join(tmpdir(), "sy-first-use-"));
  dirs.push(dir);
  writeFileSync(
    join(dir, "config.yaml"),
    `providers:
  - { id: p, kind: anthropic, base_url: "${fake.url}" }
accounts:
  - { id: a, provider: p, api_key: env:UPSTREAM_KEY }
server: { require_api_key: true }
keys:
  - { name: win, key: ${KEY}, limits: { budgets: [{ window: 5h, tokens: 30 }] } }
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
`,
  );
  return startApp({ configPath: join(dir, "config.yaml"), dataDir: dir, host: "127.0.0.1", port: 0, database, env: { UPSTREAM_KEY: "sk-upstream-first-use" }, log: () => {}, fetchImpl: fake.fetch });
}

const send = (app: App) =>
  fetch(`${app.url}/v1/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ model: "p/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
  });

/** The key `win`'s 5h budget use as `GET /admin/api/keys` lists it. */
async function listed(app: App): Promise<{ used: number; startedAt?: number; resetsAt?: number }> {
  const res = await fetch(`${app.url}/admin/api/keys`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(res.status).toBe(200);
  const keys = ((await res.json()) as { keys: Array<{ name: string; use?: { budgets: Array<{ used: number; startedAt?: number; resetsAt?: number }> } }> }).keys;
  const { used, startedAt, resetsAt } = keys.find((k) => k.name === "win")!.use!.budgets[0]!;
  return { used, startedAt, resetsAt };
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

for (const backend of ["sqlite", "postgres"] as const) {
  describe(`on ${backend === "sqlite" ? "the embedded store" : "PostgreSQL"}`, () => {
    let app: App;
    beforeAll(async () => {
      app = await gateway(backend === "postgres" ? await pg.createDatabase("first_use") : undefined);
    }, 60_000);
    afterAll(async () => {
      await app?.shutdown(1000);
    });

    test("a 5h budget's window opens with the first request at T and resets at T + 5 h, as the admin API and the 429 say", async () => {
      // Before any request no window is open: nothing used, no reset to name.
      expect(await listed(app)).toEqual({ used: 0, startedAt: undefined, resetsAt: undefined });
      const before = Date.now();
      const first = await send(app);
      const after = Date.now();
      expect(first.status).toBe(200);
      await first.text();
      const open = await listed(app);
      expect(open.used).toBe(18);
      // Opened by that request, not at a multiple of 5 h since the epoch; it ends 5 h after it opened.
      expect(open.startedAt!).toBeGreaterThanOrEqual(before - SLACK_MS);
      expect(open.startedAt!).toBeLessThanOrEqual(after + SLACK_MS);
      expect(open.resetsAt).toBe(open.startedAt! + FIVE_H);
      const second = await send(app);
      expect(second.status).toBe(200);
      await second.text();
      // 36 of 30: the next request is refused until the window ends, and the 429 says when.
      const refused = await send(app);
      const at = Date.now();
      expect(refused.status).toBe(429);
      const body = await refused.text();
      expect(body).toContain(`has used its 5h budget of 30 tokens (36 tokens used); the window resets in`);
      // (the embedded store's start may have moved by a ms since: either second)
      expect([-2, 0, 2].some((d) => body.includes(`(at ${iso(open.resetsAt! + d)})`))).toBe(true);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(Math.abs(retryAfter - (open.resetsAt! - at) / 1000)).toBeLessThanOrEqual(2);
      // The same window still (the embedded store re-expresses its start on the wall clock at each look: within a ms or two).
      const now = await listed(app);
      expect(now.used).toBe(36);
      expect(Math.abs(now.startedAt! - open.startedAt!)).toBeLessThanOrEqual(2);
      expect(now.resetsAt).toBe(now.startedAt! + FIVE_H);
    }, 60_000);
  });
}

/**
 * Two stores on one fresh PostgreSQL database `name` (two instances' views of it), opened before the
 * describe block's tests and closed after them: read `stores.a` and `stores.b` inside a test.
 */
function twoStoresOn(name: string): { a: Store; b: Store } {
  const stores = {} as { a: Store; b: Store };
  beforeAll(async () => {
    const url = await pg.createDatabase(name);
    stores.a = await openPostgresStore({ url, onError: () => {} });
    stores.b = await openPostgresStore({ url, onError: () => {} });
  }, 60_000);
  afterAll(async () => {
    await stores.a?.close();
    await stores.b?.close();
  });
  return stores;
}

describe("on PostgreSQL, two instances opening a key's window at once", () => {
  const stores = twoStoresOn("first_use_two");

  test("requests through both at the same moment: one window, started by them, the same on both, counting both", async () => {
    const { a, b } = stores;
    const A = new SharedKeyCounters(a, () => {}, { reportMs: 3_600_000 });
    const B = new SharedKeyCounters(b, () => {}, { reportMs: 3_600_000 });
    try {
      const l = { budgets: [{ window: "5h" as const, tokens: 1000 }] };
      for (let round = 0; round < 5; round++) {
        const key = `together-${round}`;
        const before = Date.now();
        const [x, y] = await Promise.all([A.admit(key, l, Date.now()), B.admit(key, l, Date.now())]);
        const after = Date.now();
        expect([x.ok, y.ok]).toEqual([true, true]);
        await Promise.all([A.settle(key, l, { tokens: 10, usd: 0 }, Date.now(), x.ok ? x.ticket : undefined), B.settle(key, l, { tokens: 7, usd: 0 }, Date.now(), y.ok ? y.ticket : undefined)]);
        await Promise.all([A.report(), B.report()]);
        await Promise.all([A.report(), B.report()]);
        const [[ua], [ub]] = await Promise.all([A.budgetUse(key, l, Date.now()), B.budgetUse(key, l, Date.now())]);
        expect(ua!.startedAt).toBe(ub!.startedAt!);
        expect(ua!.startedAt!).toBeGreaterThanOrEqual(before - SLACK_MS);
        expect(ua!.startedAt!).toBeLessThanOrEqual(after + SLACK_MS);
        expect([ua!.resetsAt, ub!.resetsAt]).toEqual([ua!.startedAt! + FIVE_H, ua!.startedAt! + FIVE_H]);
        // One window: each instance's use counts on both.
        expect([ua!.used, ub!.used]).toEqual([17, 17]);
      }
      // A request refused by another of the key's limits is not counted: it opens no window (as on the
      // embedded store). Here a budget added to a key whose minute of rpm 1 is used up.
      await roomInWindow(60_000, 5_000); // one minute throughout
      const rpm = { rpm: 1 };
      const served = await A.admit("refused-first", rpm, Date.now());
      expect(served.ok).toBe(true);
      const both = { rpm: 1, budgets: [{ window: "5h" as const, tokens: 1000 }] };
      for (const c of [A, B]) {
        const r = await c.admit("refused-first", both, Date.now());
        expect(r.ok === false && r.refusal.limit).toBe("rpm");
      }
      for (const c of [A, B]) expect(await c.budgetUse("refused-first", both, Date.now())).toEqual([{ budget: both.budgets[0]!, used: 0 }]);
      // The stores themselves: ten openings at once from both get one start.
      const opened = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).openBudgetWindow("key:raw:budget:5h:tokens", FIVE_H)));
      expect(new Set(opened.map((w) => w.start)).size).toBe(1);
      expect(opened[0]!.end).toBe(opened[0]!.start + FIVE_H);
    } finally {
      await A.close();
      await B.close();
    }
  }, 60_000);
});

/** `store` whose shared-counter statements fail as an unreachable database's do while `state.down`. */
function switchable(store: Store): { proxy: Store; state: { down: boolean } } {
  const state = { down: false };
  const failing = new Set(["setQuotaShare", "reportQuotaUse", "exchangeQuotaUse", "openBudgetWindow", "readBudgetWindows"]);
  const proxy = new Proxy(store, {
    get(t, p) {
      const v = Reflect.get(t, p, t);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (state.down && failing.has(String(p))) throw new StoreError("unavailable", "database unreachable (test)");
        return v.apply(t, args);
      };
    },
  });
  return { proxy, state };
}

describe("on PostgreSQL, a window opened while the database is away", () => {
  const stores = twoStoresOn("first_use_outage");

  test("keeps its start when no other instance opened one meanwhile; else its use moves to the other's window: one window, counted once", async () => {
    const { a, b } = stores;
    const { proxy, state } = switchable(a);
    const A = new SharedKeyCounters(proxy, () => {}, { reportMs: 3_600_000 });
    const B = new SharedKeyCounters(b, () => {}, { reportMs: 3_600_000 });
    const l = { budgets: [{ window: "5h" as const, tokens: 1000 }] };
    const serve = async (c: SharedKeyCounters, key: string, tokens: number) => {
      const v = await c.admit(key, l, Date.now());
      expect(v.ok).toBe(true);
      await c.settle(key, l, { tokens, usd: 0 }, Date.now(), v.ok ? v.ticket : undefined);
    };
    try {
      state.down = true;
      const before = Date.now();
      await serve(A, "alone", 10); // counted by A alone, in a window A opened
      const after = Date.now();
      await serve(A, "both", 10);
      await Bun.sleep(20);
      const opened = Date.now();
      await serve(B, "both", 7); // B opens "both"'s window in the database meanwhile
      state.down = false;
      await A.report(); // A's use reaches the database: "alone" with A's start, "both" in B's window
      await B.report();
      await A.report();
      const [[alone], [bothA], [bothB]] = await Promise.all([A.budgetUse("alone", l, Date.now()), A.budgetUse("both", l, Date.now()), B.budgetUse("both", l, Date.now())]);
      expect(alone!.used).toBe(10);
      expect(alone!.startedAt!).toBeGreaterThanOrEqual(before - SLACK_MS);
      expect(alone!.startedAt!).toBeLessThanOrEqual(after + SLACK_MS);
      expect((await B.budgetUse("alone", l, Date.now()))[0]).toMatchObject({ used: 10, startedAt: alone!.startedAt, resetsAt: alone!.startedAt! + FIVE_H });
      expect(bothB!.startedAt!).toBeGreaterThanOrEqual(opened - SLACK_MS);
      expect([bothA!.startedAt, bothA!.used, bothB!.used]).toEqual([bothB!.startedAt, 17, 17]);
    } finally {
      await A.close();
      await B.close();
    }
  }, 60_000);
});

describe("on PostgreSQL upgraded from schema 21 (windows aligned to the epoch)", () => {
  test("a window of the old alignment still open keeps its start, end and use; the next opens at first use", async () => {
    const url = await pg.createDatabase("first_use_upgrade");
    const day = 86_400_000;
    await roomInWindow(FIVE_H, 30_000); // the aligned 5h window of now does not end while this runs
    const now = Date.now();
    const aligned = Math.floor(now / FIVE_H) * FIVE_H;
    const sql = new SQL(url, { max: 1 });
    try {
      await migratePg(sql, () => 1, PG_MIGRATIONS.filter((m) => m.version <= 21));
      // An instance of the earlier version counted 40 tokens in the current aligned 5h window of `old`,
      // and 5 in `gone`'s 1d window that ended yesterday.
      await sql`INSERT INTO quota_shares (name, window_start, instance_id, granted, used, window_end, expires_at)
                VALUES ('key:old:budget:5h:tokens', ${aligned}, 'earlier-instance', 40, 40, ${aligned + FIVE_H}, ${now - 60_000}),
                       ('key:gone:budget:1d:tokens', ${aligned - 2 * day}, 'earlier-instance', 5, 5, ${aligned - day}, ${now - 60_000})`;
    } finally {
      await sql.close();
    }
    const store = await openPostgresStore({ url, onError: () => {} });
    const C = new SharedKeyCounters(store, () => {}, { reportMs: 3_600_000 });
    try {
      const l = { budgets: [{ window: "5h" as const, tokens: 100 }] };
      const [kept] = await C.budgetUse("old", l, Date.now());
      expect(kept).toMatchObject({ used: 40, startedAt: aligned, resetsAt: aligned + FIVE_H });
      const v = await C.admit("old", l, Date.now());
      expect(v.ok).toBe(true);
      await C.settle("old", l, { tokens: 18, usd: 0 }, Date.now(), v.ok ? v.ticket : undefined);
      expect((await C.budgetUse("old", l, Date.now()))[0]).toMatchObject({ used: 58, startedAt: aligned, resetsAt: aligned + FIVE_H });
      // An ended window of the old alignment is not carried over: the key's next window opens at its first use.
      const g = { budgets: [{ window: "1d" as const, tokens: 100 }] };
      expect(await C.budgetUse("gone", g, Date.now())).toEqual([{ budget: g.budgets[0]!, used: 0 }]);
      const before = Date.now();
      const w = await C.admit("gone", g, Date.now());
      expect(w.ok).toBe(true);
      const [opened] = await C.budgetUse("gone", g, Date.now());
      expect(opened!.startedAt!).toBeGreaterThanOrEqual(before - SLACK_MS);
      expect(opened!.resetsAt).toBe(opened!.startedAt! + day);
    } finally {
      await C.close();
      await store.close();
    }
  }, 60_000);
});
