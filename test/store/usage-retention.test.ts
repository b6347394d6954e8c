/**
 * Usage retention (`settings.usage_retention_days`, src/store/usage-retention.ts): usage rows were kept
 * forever (README "Not done yet"). Rows older than the setting's days are deleted, in batches of at
 * most N rows, on both stores (SQLite, and PostgreSQL on a throwaway server started for this file);
 * recent rows and the usage totals over the kept window are unchanged; without the setting nothing is
 * deleted. A running gateway starts pruning when a reload sets it (read back through the admin API).
 * Also least-used's seed (`servedPerModel`): the same counts as the usage summary by model, of the
 * pairs asked for alone when given, and on SQLite read with the event loop free between slices of rows.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/types.ts";
import { UsageRetention } from "../../src/store/usage-retention.ts";
import { startGateway } from "../support/gateway.ts";
import { tempDir, usage, withRaw } from "./helpers.ts";
import { storeBackends } from "../support/store-backends.ts";

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;

const backends = storeBackends("retention");

/** 23 rows 31–53 days old and 7 rows of the last 29 days, over two models and one refused request. */
function fill(s: Store): void {
  for (let i = 0; i < 23; i++) s.record(usage({ requestId: `old-${i}`, ts: NOW - (31 + i) * DAY, model: i % 2 ? "m-a" : "m-b" }));
  for (let i = 0; i < 6; i++) s.record(usage({ requestId: `new-${i}`, ts: NOW - (29 - i * 5) * DAY, model: i % 2 ? "m-a" : "m-b", usage: { inputTokens: 10 + i, outputTokens: i } }));
  s.record({ ...usage({ requestId: "new-refused", ts: NOW - DAY }), providerId: undefined, model: undefined, outcome: "rejected", status: 429 });
}

const totals = async (s: Store, sinceMs: number) =>
  (await s.usageSummary({ sinceMs, by: "model" })).map((r) => [r.group, r.requests, r.inputTokens, r.outputTokens, r.costUsd]);

for (const backend of backends) {
  describe(`usage retention: ${backend.name}`, () => {
    test("rows older than usage_retention_days go, at most a batch per statement; recent rows and the kept window's totals stay", async () => {
      const { store: s } = await backend.open();
      fill(s);
      await s.flush();
      const keptBefore = await totals(s, NOW - 30 * DAY);
      const deletes: number[] = [];
      const store = { pruneUsage: async (before: number, limit?: number) => { const n = await s.pruneUsage(before, limit); deletes.push(n); return n; } };
      const lines: string[] = [];
      let days: number | undefined;
      const retention = new UsageRetention({ store, days: () => days, now: () => NOW, log: (l) => lines.push(l), batch: 5 });

      expect(await retention.round()).toBe(0); // no setting: every row is kept
      expect(deletes).toEqual([]);
      expect((await s.recentCalls(100)).length).toBe(30);

      days = 30;
      expect(await retention.round()).toBe(23);
      expect(deletes).toEqual([5, 5, 5, 5, 3]);
      expect((await s.recentCalls(100)).map((c) => c.requestId).sort()).toEqual(["new-0", "new-1", "new-2", "new-3", "new-4", "new-5", "new-refused"]);
      expect(await totals(s, NOW - 30 * DAY)).toEqual(keptBefore);
      expect(await totals(s, 0)).toEqual(keptBefore); // nothing older is left
      expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["usage retention: deleted 23 usage rows older than 30 days (settings.usage_retention_days)"]);

      expect(await retention.round()).toBe(0); // the next round finds nothing
      await retention.stop();
      await s.close();
    });

    test("servedPerModel (least-used's seed) counts the requests per served provider/model, as the summary by model does", async () => {
      const { store: s } = await backend.open();
      fill(s);
      const served = await s.servedPerModel(); // pending rows flushed first
      expect([...served].sort()).toEqual([
        ["openai/m-a", 14],
        ["openai/m-b", 15],
      ]);
      const byModel = await s.usageSummary({ sinceMs: 0, by: "model" });
      expect(Object.fromEntries(byModel.filter((r) => r.group !== null).map((r) => [r.group, r.requests]))).toEqual(Object.fromEntries(served));
      await s.close();
    });

    test("servedPerModel with the least-used targets' pairs counts those alone, whatever other names clients had served", async () => {
      // Fixed 2026-12-07: the seed held every provider/model pair ever served (client-chosen names
      // included) for the process's life; the gateway now asks for its least-used targets' pairs.
      const { store: s } = await backend.open();
      fill(s);
      for (let i = 0; i < 200; i++) s.record(usage({ requestId: `made-up-${i}`, ts: NOW - DAY, model: `client-name-${i}` }));
      expect([...(await s.servedPerModel(new Set(["openai/m-a", "anthropic/m-a", "openai/never-served"])))]).toEqual([["openai/m-a", 14]]);
      expect((await s.servedPerModel(new Set())).size).toBe(0);
      expect((await s.servedPerModel()).size).toBe(202);
      await s.close();
    });
  });
}

test("sqlite: servedPerModel over 120,000 rows lets a timer run before it answers (other requests are served while it reads; a least-used request waits for it at most 1 s)", async () => {
  const path = join(tempDir(), "sy.db");
  openSqliteStore({ path }).close(); // the schema
  withRaw(path, (db) =>
    db.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120000)
            INSERT INTO usage (request_id, ts, client_format, requested_model, provider_id, model, estimated, outcome, status, total_ms, attempts, fallback)
            SELECT 'r' || i, ${NOW} + i, 'openai-chat', 'lu', 'openai', CASE WHEN i % 3 = 0 THEN 'm-a' ELSE 'm-b' END, 0, 'ok', 200, 10, 1, 0 FROM n`),
  );
  const s = openSqliteStore({ path, flushIntervalMs: 60_000 });
  let ticked = false;
  const read = s.servedPerModel();
  setTimeout(() => (ticked = true), 0);
  const served = await read.then((m) => ({ m, tickedFirst: ticked }));
  expect(served.tickedFirst).toBe(true);
  expect(Object.fromEntries(served.m)).toEqual({ "openai/m-a": 40_000, "openai/m-b": 80_000 });
  s.close();
}, 60_000);

test("a gateway whose reload sets settings.usage_retention_days deletes the older usage rows; GET /admin/api/usage over the kept window is unchanged", async () => {
  const yaml = (extra: string) => `providers:\n  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }\naccounts:\n  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }\n${extra}`;
  const g = await startGateway(yaml(""), { env: { SWITCHYARD_RETENTION_MS: "100" } });
  try {
    const now = Date.now();
    for (let i = 0; i < 12; i++) g.app.store.record(usage({ requestId: `old-${i}`, ts: now - (20 + i) * DAY }));
    for (let i = 0; i < 3; i++) g.app.store.record(usage({ requestId: `new-${i}`, ts: now - (i + 1) * DAY }));
    const requests = async (since: string) => {
      const body = (await (await fetch(`${g.url}/admin/api/usage?since=${since}&by=model`)).json()) as { rows: Array<{ requests: number; inputTokens: number }> };
      return [body.rows.reduce((n, r) => n + r.requests, 0), body.rows.reduce((n, r) => n + r.inputTokens, 0)];
    };
    expect(await requests("60d")).toEqual([15, 1500]);
    expect(await requests("10d")).toEqual([3, 300]);
    await Bun.sleep(300); // rounds would have run: none without the setting
    expect(await requests("60d")).toEqual([15, 1500]);

    writeFileSync(g.configPath, yaml("settings:\n  usage_retention_days: 10\n").replaceAll("{{FAKE}}", g.fake.url));
    const reload = await fetch(`${g.url}/admin/api/config/reload`, { method: "POST" });
    expect(reload.status).toBe(200);
    const end = Date.now() + 10_000;
    while ((await requests("60d"))[0] !== 3 && Date.now() < end) await Bun.sleep(100);
    expect(await requests("60d")).toEqual([3, 300]);
    expect(await requests("10d")).toEqual([3, 300]);
    expect(g.logs.some((l) => l.includes("usage retention: deleted 12 usage rows older than 10 days"))).toBe(true);
  } finally {
    await g.stop();
  }
}, 60_000);

test("a big prune leaves the event loop free at least half of the time: each batch is followed by a pause as long as it took (review16 R2)", async () => {
  // a store whose every delete holds the event loop 20 ms (bun:sqlite is synchronous), 10 full batches then the rest
  let calls = 0;
  let busyMs = 0;
  const store = {
    pruneUsage: async (_before: number, limit: number) => {
      const t = performance.now();
      while (performance.now() - t < 20);
      busyMs += performance.now() - t;
      return ++calls <= 10 ? limit : 0;
    },
  };
  const retention = new UsageRetention({ store, days: () => 30, now: () => NOW, log: () => {}, batch: 100 });
  // a request-like chain of event-loop turns runs while the prune does
  let turns = 0;
  let pruning = true;
  const chain = (async () => {
    while (pruning) {
      await new Promise((r) => setTimeout(r, 0));
      turns++;
    }
  })();
  const started = performance.now();
  expect(await retention.round()).toBe(1000);
  const wall = performance.now() - started;
  pruning = false;
  await chain;
  expect(calls).toBe(11);
  expect(wall).toBeGreaterThanOrEqual(1.8 * busyMs); // back to back it was ~busyMs
  expect(turns).toBeGreaterThanOrEqual(10);
});

test("a reload that lowers usage_retention_days prunes at once, not at the next period; a round asked for while one runs follows it (review16 R4)", async () => {
  const befores: number[] = [];
  let release!: () => void;
  let hold: Promise<void> | undefined = new Promise<void>((r) => (release = r));
  const store = {
    pruneUsage: async (before: number) => {
      befores.push(before);
      if (hold) await hold;
      return 0;
    },
  };
  let days = 400;
  const retention = new UsageRetention({ store, days: () => days, now: () => NOW, log: () => {}, everyMs: 3_600_000 });
  try {
    retention.ensure(); // the first round starts (held)
    const end = Date.now() + 5_000;
    while (befores.length === 0 && Date.now() < end) await Bun.sleep(5);
    days = 30;
    retention.ensure(); // the reload lowers the setting while the first round runs
    hold = undefined;
    release();
    while (befores.length < 2 && Date.now() < end) await Bun.sleep(5);
    expect(befores).toEqual([NOW - 400 * DAY, NOW - 30 * DAY]);
    retention.ensure(); // unchanged: nothing more
    await Bun.sleep(50);
    expect(befores).toHaveLength(2);
  } finally {
    await retention.stop();
  }
});
