/**
 * A request whose failed attempts' usage their providers reported (billed; UsageRecord.split) is stored
 * as one row per attempt (SQLite schema 23, PostgreSQL 25, column `split`, src/store/rows.ts SPLIT):
 * usage by provider, model and account sums each attempt's tokens and cost under its own provider,
 * model and account, and the subscriptions' part of the cost is the subscription attempts' only; the
 * attempts' rows are no requests (not counted, not in the calls list, not in least-used's seed), and
 * the call lists the request's total tokens and cost. Until 2026-12-08 the request's row carried it
 * all under the served provider (a paid API key's broken attempt served by a subscription read as
 * subscription use). A database of the previous schema upgrades on open; its rows stay whole requests,
 * as do those an earlier instance still writes on a shared upgraded store.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { join } from "node:path";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { openStore } from "../../src/store/open.ts";
import { PG_MIGRATIONS, migratePg } from "../../src/store/postgres/migrations.ts";
import { MIGRATIONS, migrate } from "../../src/store/sqlite/migrations.ts";
import type { Store } from "../../src/store/types.ts";
import { postgresForFile, tempDir, usage } from "./helpers.ts";

const pg = postgresForFile();
const clock = { now: () => Date.parse("2026-12-08T01:00:00Z"), sleep: (ms: number) => Bun.sleep(ms) };
const T = 1_800_000_000_000;

/** The usage columns an earlier version's insert names. */
const OLD_COLUMNS = "request_id, ts, client_format, requested_model, provider_id, model, account_id, input_tokens, cost_usd, estimated, outcome, status, total_ms, attempts, fallback";

/**
 * A request served by the subscription `cc` (11 in, 7 out, $0.0018) after two broken attempts of the
 * paid API key (1000 in, 1 out, $0.1001 each), as the accounting makes it: totals on the record, the
 * split by attempt in `split`.
 */
const split: UsageRecord = usage({
  requestId: "req-split",
  ts: T + 3,
  requestedModel: "mixed",
  providerId: "cc",
  model: "claude-v",
  accountId: "cc-file",
  usage: { inputTokens: 2011, outputTokens: 9, webSearches: 1 },
  costUsd: 0.202,
  attempts: 3,
  fallback: true,
  split: {
    served: { usage: { inputTokens: 11, outputTokens: 7 }, costUsd: 0.0018 },
    billed: [
      { providerId: "paid", model: "claude-v", accountId: "paid-key", usage: { inputTokens: 1000, outputTokens: 1, webSearches: 1 }, costUsd: 0.1001 },
      { providerId: "paid", model: "claude-v", accountId: "paid-key", usage: { inputTokens: 1000, outputTokens: 1 }, costUsd: 0.1001 },
    ],
  },
});
const plain = usage({ requestId: "req-plain", ts: T + 4, requestedModel: "paid/claude-v", providerId: "paid", model: "claude-v", accountId: "paid-key", usage: { inputTokens: 5, outputTokens: 5 }, costUsd: 0.001 });

/** What a user reads of `s` after the two requests above (and any rows before them). */
async function reads(s: Store) {
  s.record(split);
  s.record(plain);
  await s.flush();
  const pick = (r: any) => ({ requests: r.requests, errors: r.errors, inputTokens: r.inputTokens, outputTokens: r.outputTokens, costUsd: Number(r.costUsd.toFixed(6)), subscriptionUsd: Number(r.subscriptionUsd.toFixed(6)), avgTotalMs: r.avgTotalMs });
  const by = async (g: "provider" | "model" | "account") =>
    Object.fromEntries((await s.usageSummary({ sinceMs: T + 3, by: g, subscriptionProviders: ["cc"] })).map((r) => [r.group, pick(r)]));
  const calls = (await s.recentCalls(10)).map((c) => ({ requestId: c.requestId, providerId: c.providerId, usage: c.usage, costUsd: c.costUsd }));
  const page = (await s.callsPage({ limit: 10 })).calls.map((c) => c.requestId);
  const filtered = (await s.callsPage({ limit: 10, filter: { provider: "cc" } })).calls.map((c) => [c.requestId, c.usage.inputTokens, c.costUsd]);
  const series = (await s.usageSeries({ sinceMs: T, untilMs: T + 60_000, bucketMs: 60_000, subscriptionProviders: ["cc"] })).map((b) => ({ requests: b.requests, inputTokens: b.inputTokens, subscriptionUsd: Number(b.subscriptionUsd.toFixed(6)) }));
  return { byProvider: await by("provider"), byModel: await by("model"), byAccount: await by("account"), calls, page, filtered, series, served: Object.fromEntries(await s.servedPerModel()) };
}

const PAID = { requests: 1, errors: 0, inputTokens: 2005, outputTokens: 7, costUsd: 0.2012, subscriptionUsd: 0, avgTotalMs: 900 };
const CC = { requests: 1, errors: 0, inputTokens: 11, outputTokens: 7, costUsd: 0.0018, subscriptionUsd: 0.0018, avgTotalMs: 900 };

/** The reads expected of a store holding the two requests, and `before` (calls listed first, newest first) older ones. */
function expected(before: Array<{ requestId: string; providerId: string; usage: object; costUsd: number }> = []) {
  return {
    byProvider: { paid: PAID, cc: CC },
    byModel: { "paid/claude-v": PAID, "cc/claude-v": CC },
    byAccount: { "paid-key": PAID, "cc-file": CC },
    calls: [
      { requestId: "req-plain", providerId: "paid", usage: { inputTokens: 5, outputTokens: 5 }, costUsd: 0.001 },
      // the call shows the request's total tokens, searches and cost (its attempts' rows added back)
      { requestId: "req-split", providerId: "cc", usage: { inputTokens: 2011, outputTokens: 9, webSearches: 1 }, costUsd: 0.202 },
      ...before,
    ],
    page: ["req-plain", "req-split", ...before.map((b) => b.requestId)],
    filtered: [["req-split", 2011, 0.202]],
  };
}

describe("SQLite", () => {
  test("each attempt's tokens and cost under its own provider, model and account; one call with the totals", async () => {
    const s = await openStore(undefined, tempDir(), undefined, () => {}, clock, () => {});
    try {
      const r = await reads(s);
      expect(r).toMatchObject(expected());
      expect(r.series).toEqual([{ requests: 2, inputTokens: 2016, subscriptionUsd: 0.0018 }]);
      expect(r.served).toEqual({ "cc/claude-v": 1, "paid/claude-v": 1 });
    } finally {
      await s.close();
    }
  }, 30_000);

  test("a schema-22 file upgrades; its rows stay whole requests", async () => {
    const dir = tempDir();
    const db = new Database(join(dir, "switchyard.db"));
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 22));
    db.run(`INSERT INTO usage (${OLD_COLUMNS}) VALUES ('req-old', ${T + 1}, 'anthropic', 'old', 'paid', 'claude-v', 'paid-key', 40, 0.004, 0, 'ok', 200, 900, 1, 0)`);
    db.close();
    const lines: string[] = [];
    const s = await openStore(undefined, dir, undefined, (l) => lines.push(l), clock, () => {});
    try {
      expect(lines.map((l) => JSON.parse(l).msg as string)).toEqual([expect.stringMatching(/^store upgraded from schema 22 to 23:/)]);
      const r = await reads(s);
      const old = { requestId: "req-old", providerId: "paid", usage: { inputTokens: 40 }, costUsd: 0.004 };
      expect({ calls: r.calls, page: r.page }).toEqual({ calls: expected([old]).calls, page: expected([old]).page });
      const all = await s.usageSummary({ sinceMs: T, by: "provider", subscriptionProviders: ["cc"] });
      expect(all.map((x) => [x.group, x.requests, x.inputTokens, Number(x.costUsd.toFixed(6))])).toEqual([
        ["paid", 2, 2045, 0.2052],
        ["cc", 1, 11, 0.0018],
      ]);
    } finally {
      await s.close();
    }
  }, 30_000);
});

describe("PostgreSQL", () => {
  test("each attempt's tokens and cost under its own provider, model and account; one call with the totals", async () => {
    const url = await pg.database("shares");
    const s = await openStore(url, tempDir(), undefined, () => {}, clock, () => {});
    try {
      const r = await reads(s);
      expect(r).toMatchObject(expected());
      expect(r.series).toEqual([{ requests: 2, inputTokens: 2016, subscriptionUsd: 0.0018 }]);
      expect(r.served).toEqual({ "cc/claude-v": 1, "paid/claude-v": 1 });
    } finally {
      await s.close();
    }
  }, 60_000);

  test("a schema-24 database upgrades; its rows, and an earlier instance's, stay whole requests", async () => {
    const url = await pg.database("shares_upgrade");
    const sql = new SQL(url, { max: 1 });
    try {
      await migratePg(sql, () => 1, PG_MIGRATIONS.filter((m) => m.version <= 24));
      const oldInsert = (id: string, ts: number) =>
        sql.unsafe(`INSERT INTO usage (${OLD_COLUMNS}) VALUES ('${id}', ${ts}, 'anthropic', 'old', 'paid', 'claude-v', 'paid-key', 40, 0.004, false, 'ok', 200, 900, 1, false)`);
      await oldInsert("req-old", T + 1);
      const lines: string[] = [];
      const s = await openStore(url, tempDir(), undefined, (l) => lines.push(l), clock, () => {});
      try {
        const warn = lines.map((l) => JSON.parse(l) as { level: string; added?: string[] }).filter((l) => l.level === "warn");
        expect(warn.map((w) => w.added)).toEqual([["failed attempts' usage under their own provider"]]);
        // an instance of the earlier version still running reads such an attempt's row as a request
        expect((warn[0] as unknown as { msg: string }).msg).toContain("; until then such an instance lists a failed attempt whose usage an upgraded one recorded as a call of its own");
        await oldInsert("req-old-instance", T + 2);
        const r = await reads(s);
        const old = (requestId: string) => ({ requestId, providerId: "paid", usage: { inputTokens: 40 }, costUsd: 0.004 });
        const e = expected([old("req-old-instance"), old("req-old")]);
        expect({ calls: r.calls, page: r.page }).toEqual({ calls: e.calls, page: e.page });
        const all = await s.usageSummary({ sinceMs: T, by: "provider", subscriptionProviders: ["cc"] });
        expect(all.map((x) => [x.group, x.requests, x.inputTokens, Number(x.costUsd.toFixed(6))])).toEqual([
          ["paid", 3, 2085, 0.2092],
          ["cc", 1, 11, 0.0018],
        ]);
      } finally {
        await s.close();
      }
    } finally {
      await sql.close();
    }
  }, 60_000);
});
