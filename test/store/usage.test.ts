import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { cleanupTempDirs, countRows, storedTraces, tempDir, trace, usage, withRaw } from "./helpers.ts";

afterAll(cleanupTempDirs);

describe("usage batching", () => {
  test("nothing reaches the table before the flush interval, everything after", async () => {
    const path = join(tempDir(), "sy.db");
    // Before the store opens: its flush interval runs from there (a loaded machine can take tens of ms
    // over the opening and the records below, so a clock started after them could read "before" past
    // the first flush).
    const recordedAt = performance.now();
    const s = openSqliteStore({ path, flushIntervalMs: 150 });
    for (let i = 0; i < 50; i++) s.record(usage({ requestId: `r${i}`, ts: 1_800_000_000_000 + i }));
    for (let i = 0; i < 5; i++) s.save(trace(i));
    expect(s.stats()).toMatchObject({ pendingUsage: 50, pendingTraces: 5 });
    if (performance.now() - recordedAt < 140) {
      expect(countRows(path, "usage")).toBe(0);
      expect(storedTraces(path)).toBe(0);
    }
    await Bun.sleep(60);
    // A loaded machine can oversleep past the interval: "before" is only asserted while it is before.
    if (performance.now() - recordedAt < 140) expect(countRows(path, "usage")).toBe(0);
    for (let i = 0; i < 100 && countRows(path, "usage") < 50; i++) await Bun.sleep(20);
    expect(countRows(path, "usage")).toBe(50);
    expect(storedTraces(path)).toBe(5);
    expect(s.stats()).toMatchObject({ pendingUsage: 0, pendingTraces: 0, dropped: 0, flushErrors: 0 });
    expect(s.stats().lastFlushAt).toBeGreaterThan(0);
    s.close();
  });

  test("every column of a usage row is written from its field, in the table's order (the flush binds a row's parameters as one array)", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path, flushIntervalMs: 60_000 });
    // Every column a distinct value, so a parameter bound to the wrong column or left unbound shows.
    const rec = usage({
      requestId: "r-all",
      ts: 1_800_000_000_123,
      clientFormat: "anthropic-messages",
      requestedModel: "fast",
      providerId: "anthropic",
      model: "claude-x",
      accountId: "acct-9",
      keyName: "ci",
      usage: { inputTokens: 11, outputTokens: 12, cacheReadTokens: 13, cacheWriteTokens: 14, reasoningTokens: 15, webSearches: 20 },
      estimated: true,
      outcome: "upstream_error",
      status: 502,
      ttfbMs: 16,
      totalMs: 17,
      attempts: 3,
      fallback: true,
      costUsd: 0.25,
      unpriced: true,
      savedChars: 18,
      savedTokens: 19,
      rateLimited: ["acct-7", "acct-8"],
      instance: "gw-a",
      instanceId: "0f3c5a52-7d3e-4f6a-9c1e-2b8d4e6f8a10",
      transport: "websocket",
    });
    s.record(rec);
    s.record(usage({ requestId: "r-bare", usage: {}, ttfbMs: undefined, keyName: undefined, accountId: undefined }));
    s.flush();
    const rows = withRaw(path, (db) => db.query("SELECT * FROM usage ORDER BY id").all()) as Record<string, unknown>[];
    expect(rows.map(({ id: _id, ...r }) => r)).toEqual([
      {
        request_id: "r-all",
        ts: 1_800_000_000_123,
        client_format: "anthropic-messages",
        requested_model: "fast",
        provider_id: "anthropic",
        model: "claude-x",
        account_id: "acct-9",
        key_name: "ci",
        input_tokens: 11,
        output_tokens: 12,
        cache_read_tokens: 13,
        cache_write_tokens: 14,
        reasoning_tokens: 15,
        estimated: 1,
        outcome: "upstream_error",
        status: 502,
        ttfb_ms: 16,
        total_ms: 17,
        attempts: 3,
        fallback: 1,
        cost_usd: 0.25,
        unpriced: 1,
        saved_chars: 18,
        saved_tokens: 19,
        rate_limited: '["acct-7","acct-8"]',
        instance: "gw-a",
        instance_id: "0f3c5a52-7d3e-4f6a-9c1e-2b8d4e6f8a10",
        transport: "websocket",
        web_searches: 20,
        split: 0,
      },
      expect.objectContaining({ request_id: "r-bare", account_id: null, key_name: null, input_tokens: null, reasoning_tokens: null, ttfb_ms: null, cost_usd: null, unpriced: 0, saved_chars: 0, rate_limited: null, instance: null, instance_id: null, transport: null, web_searches: null }),
    ]);
    s.close();
  });

  test("a burst of rows waits for the interval until the SQLite store's early-flush mark, then is written on the next macrotask (fewer, larger flushes under load)", async () => {
    const mark = 1024; // SQLITE_EARLY_FLUSH_AT
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path, flushIntervalMs: 60_000 });
    // Past the old mark of 256 the rows still wait: one flush writes them with the rest (docs/performance.md item 110).
    for (let i = 0; i < mark - 1; i++) s.record(usage({ requestId: `r${i}` }));
    for (let i = 0; i < mark - 1; i++) s.save(trace(i));
    await Bun.sleep(20);
    expect(countRows(path, "usage")).toBe(0);
    expect(storedTraces(path)).toBe(0);
    s.record(usage({ requestId: `r${mark - 1}` }));
    expect(countRows(path, "usage")).toBe(0); // never inside the request that filled the batch
    for (let i = 0; i < 100 && countRows(path, "usage") < mark; i++) await Bun.sleep(20);
    expect(countRows(path, "usage")).toBe(mark);
    expect(storedTraces(path)).toBe(mark - 1);
    // every trace of the batch resolves, across the blocks one flush wrote
    for (const i of [0, 255, 256, 511, 512, mark - 2]) expect(s.getTrace(`sy_${i}`)).toEqual(trace(i));
    s.close();
  });

  test("close() and flush() write synchronously", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path, flushIntervalMs: 60_000 });
    s.record(usage({ requestId: "a" }));
    s.flush();
    expect(countRows(path, "usage")).toBe(1);
    s.record(usage({ requestId: "b" }));
    s.save(trace(1));
    s.close();
    expect(countRows(path, "usage")).toBe(2);
    expect(storedTraces(path)).toBe(1);
    // after close, records are dropped (and counted), never thrown
    s.record(usage({ requestId: "c" }));
    s.save(trace(2));
    expect(s.stats().dropped).toBe(2);
  });

  test("a usage row round-trips; malformed values do not fail the batch", () => {
    const s = openSqliteStore({ path: ":memory:", flushIntervalMs: 60_000 });
    const full = usage({ requestId: "full", ts: 1_800_000_000_500, ttfbMs: 12.6, totalMs: 99.4, fallback: true, attempts: 3 });
    s.record(full);
    // A rejected request: no provider, no tokens, no time to first byte; it must read back as written.
    const sparse: UsageRecord = {
      requestId: "sparse",
      ts: 1_800_000_000_400,
      clientFormat: "anthropic-messages",
      requestedModel: "nope/x",
      usage: {},
      estimated: true,
      outcome: "rejected",
      status: 404,
      totalMs: 2,
      attempts: 0,
      fallback: false,
    };
    s.record(sparse);
    s.record({ ...usage({ requestId: "weird", ts: 1_800_000_000_300 }), usage: { inputTokens: Number.NaN }, totalMs: undefined as unknown as number, status: "200" as unknown as number });
    s.save(trace(1, { requestId: "full" }));
    const calls = s.recentCalls(10);
    expect(calls.map((c) => c.requestId)).toEqual(["full", "sparse", "weird"]);
    expect(calls[0]).toEqual({ ...full, ttfbMs: 13, totalMs: 99, routeId: "sy_1" });
    expect(calls[1]).toEqual(sparse);
    expect(calls[2]!.usage).toEqual({});
    expect(calls[2]!.status).toBe(0);
    expect(s.recentCalls(1)).toHaveLength(1);
    s.close();
  });

  test("summaries group by provider/model, account, key and provider", () => {
    const s = openSqliteStore({ path: ":memory:", flushIntervalMs: 60_000 });
    const t0 = 1_800_000_000_000;
    s.record(usage({ requestId: "1", ts: t0, model: "m1", accountId: "a1", keyName: "k1", providerId: "p1", usage: { inputTokens: 10, outputTokens: 1 } }));
    s.record(usage({ requestId: "2", ts: t0 + 1, model: "m1", accountId: "a2", keyName: "k1", providerId: "p1", usage: { inputTokens: 20, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4, reasoningTokens: 5 }, outcome: "upstream_error", status: 502, fallback: true }));
    s.record(usage({ requestId: "3", ts: t0 + 2, model: "m2", accountId: "a2", keyName: "k2", providerId: "p2", usage: { outputTokens: 7 }, outcome: "client_closed", estimated: true, ttfbMs: undefined }));
    s.record(usage({ requestId: "4", ts: t0 + 3, model: undefined, accountId: undefined, keyName: undefined, providerId: undefined, usage: {}, outcome: "rejected", status: 404, ttfbMs: undefined, totalMs: 1 }));
    s.record(usage({ requestId: "old", ts: t0 - 10_000, model: "m1", usage: { inputTokens: 1000 } }));

    const byModel = s.usageSummary({ sinceMs: t0, by: "model" });
    expect(byModel.map((r) => [r.group, r.requests])).toEqual([
      ["p1/m1", 2],
      [null, 1],
      ["p2/m2", 1],
    ]);
    const m1 = byModel[0]!;
    expect(m1).toMatchObject({ inputTokens: 30, outputTokens: 3, cacheReadTokens: 3, cacheWriteTokens: 4, reasoningTokens: 5, errors: 1, clientClosed: 0, fallbacks: 1, estimated: 0 });
    expect(byModel.find((r) => r.group === "p2/m2")).toMatchObject({ outputTokens: 7, inputTokens: 0, clientClosed: 1, errors: 0, estimated: 1, avgTtfbMs: null });
    expect(byModel.find((r) => r.group === null)).toMatchObject({ errors: 0, refused: 1, avgTotalMs: 1 });

    expect(s.usageSummary({ sinceMs: t0, by: "account" }).map((r) => [r.group, r.requests, r.inputTokens])).toEqual([
      ["a2", 2, 20],
      [null, 1, 0],
      ["a1", 1, 10],
    ]);
    expect(s.usageSummary({ sinceMs: t0, by: "key" }).map((r) => [r.group, r.requests])).toEqual([
      ["k1", 2],
      [null, 1],
      ["k2", 1],
    ]);
    expect(s.usageSummary({ sinceMs: t0, by: "provider" }).map((r) => [r.group, r.requests, r.errors, r.refused])).toEqual([
      ["p1", 2, 1, 0],
      [null, 1, 0, 1],
      ["p2", 1, 0, 0],
    ]);
    // since / until bounds; the older m1 request was served by another provider (openai): its own row,
    // not added to p1's (one model id on two providers is two groups)
    expect(s.usageSummary({ sinceMs: 0, by: "model" }).filter((r) => r.group?.endsWith("/m1")).map((r) => [r.group, r.inputTokens])).toEqual([
      ["p1/m1", 30],
      ["openai/m1", 1000],
    ]);
    expect(s.usageSummary({ sinceMs: t0, untilMs: t0 + 1, by: "model" }).map((r) => r.group)).toEqual(["p1/m1"]);
    expect(() => s.usageSummary({ sinceMs: 0, by: "bogus" as "model" })).toThrow("unknown grouping");

    expect(s.pruneUsage(t0)).toBe(1);
    expect(s.usageSummary({ sinceMs: 0, by: "model" }).reduce((n, r) => n + r.requests, 0)).toBe(4);
    s.close();
  });
});

describe("route traces", () => {
  test("ring keeps the newest N traces and fewer than N + a block, as one block per flush", () => {
    const path = join(tempDir(), "sy.db");
    // N = 8, a flush every 3 traces: blocks of 3; the oldest goes while the others hold 8.
    const s = openSqliteStore({ path, traceRingSize: 8, flushIntervalMs: 60_000 });
    const newest = (from: number, n: number) => Array.from({ length: n }, (_, i) => `sy_${from - i}`);
    for (let i = 1; i <= 30; i++) {
      s.save(trace(i));
      if (i % 3 === 0) s.flush();
      const kept = storedTraces(path);
      if (i % 3 === 0) {
        expect(kept).toBe(Math.min(i, 9));
        // what is kept is exactly the newest `kept`, newest first
        expect(s.recentTraces(100).map((t) => t.routeId)).toEqual(newest(i, kept));
      }
    }
    expect(countRows(path, "trace_blocks")).toBe(3);
    expect(s.recentTraces(3).map((t) => t.routeId)).toEqual(["sy_30", "sy_29", "sy_28"]);
    expect(s.getTrace("sy_23")?.routeId).toBe("sy_23");
    expect(s.getTrace("req-23")?.routeId).toBe("sy_23");
    expect(s.getTrace("sy_3")).toBeUndefined();
    expect(s.getTrace("req-3")).toBeUndefined();
    // a batch larger than the ring: its block alone holds the newest 8 and more
    for (let i = 100; i < 140; i++) s.save(trace(i));
    s.flush();
    expect(storedTraces(path)).toBe(40);
    expect(s.recentTraces(100).map((t) => t.routeId)).toEqual(newest(139, 40));
    expect(s.getTrace("sy_30")).toBeUndefined();
    s.close();
    // a reopened store goes on from the newest block
    const again = openSqliteStore({ path, traceRingSize: 8, flushIntervalMs: 60_000 });
    for (let i = 200; i < 205; i++) again.save(trace(i));
    again.flush();
    expect(storedTraces(path)).toBe(45);
    expect(again.recentTraces(100).map((t) => t.routeId)).toEqual([...newest(204, 5), ...newest(139, 40)]);
    for (let i = 205; i < 208; i++) again.save(trace(i));
    again.flush();
    expect(again.recentTraces(100).map((t) => t.routeId)).toEqual(newest(207, 8));
    again.close();
  });

  test("the ring's size follows a configuration change from the next flush (settings.trace_ring_size; it kept the size it opened with)", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path, traceRingSize: 8, flushIntervalMs: 60_000 });
    const newest = (from: number, n: number) => Array.from({ length: n }, (_, i) => `sy_${from - i}`);
    // one trace per flush: blocks of 1, so the ring holds exactly its size
    const one = (i: number) => {
      s.save(trace(i));
      s.flush();
    };
    for (let i = 1; i <= 10; i++) one(i);
    expect(storedTraces(path)).toBe(8);
    s.setTraceRingSize(3);
    one(11);
    expect(s.recentTraces(100).map((t) => t.routeId)).toEqual(newest(11, 3));
    s.setTraceRingSize(5);
    for (let i = 12; i <= 16; i++) one(i);
    expect(s.recentTraces(100).map((t) => t.routeId)).toEqual(newest(16, 5));
    s.close();
  });

  test("a flush of more than a block's traces writes several blocks; ids resolve in each", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path, traceRingSize: 10_000, flushIntervalMs: 60_000 });
    for (let i = 0; i < 600; i++) s.save(trace(i));
    for (let i = 0; i < 600; i++) s.record(usage({ requestId: `req-${i}`, ts: 1_800_000_000_000 + i }));
    s.flush();
    expect(countRows(path, "trace_blocks")).toBe(3);
    expect(storedTraces(path)).toBe(600);
    for (const i of [0, 255, 256, 511, 512, 599]) {
      expect(s.getTrace(`sy_${i}`)).toEqual(trace(i));
      expect(s.getTrace(`req-${i}`)?.routeId).toBe(`sy_${i}`);
    }
    expect(s.recentCalls(600).map((c) => c.routeId)).toEqual(Array.from({ length: 600 }, (_, i) => `sy_${599 - i}`));
    expect(s.recentTraces(10_000)).toHaveLength(600);
    s.close();
  });

  test("traces resolve by route id or request id, and survive a reopen", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path, flushIntervalMs: 60_000 });
    const t = trace(7, { warnings: [{ code: "stripped_signature", message: "x — é 漢字 😀 \t\n" }], redactions: { email: 2 } });
    s.save(t);
    expect(s.getTrace("sy_7")).toEqual(t); // pending traces are flushed before the query
    expect(s.getTrace("req-7")).toEqual(t);
    expect(s.getTrace("sy_nope")).toBeUndefined();
    // a trace saved twice under the same route id is replaced, not duplicated
    s.save({ ...t, outcome: "error", status: 502 });
    s.close();
    const again = openSqliteStore({ path });
    expect(again.getTrace("sy_7")?.status).toBe(502);
    expect(again.getTrace("req-7")?.status).toBe(502);
    expect(again.recentTraces(10).map((r) => [r.routeId, r.status])).toEqual([["sy_7", 502]]);
    again.close();
  });

  test("an unserialisable trace is dropped alone", () => {
    const s = openSqliteStore({ path: ":memory:", flushIntervalMs: 60_000 });
    const bad = trace(1) as RouteTraceWithCycle;
    bad.self = bad;
    s.save(bad);
    s.save(trace(2));
    s.record(usage());
    s.flush();
    expect(s.recentTraces(10).map((t) => t.routeId)).toEqual(["sy_2"]);
    expect(s.recentCalls(10)).toHaveLength(1);
    expect(s.stats().dropped).toBe(1);
    s.close();
  });
});

type RouteTraceWithCycle = ReturnType<typeof trace> & { self?: unknown };

describe("flush failures", () => {
  test("rows stay buffered while the database is locked and are written afterwards", () => {
    const path = join(tempDir(), "sy.db");
    const errors: string[] = [];
    const s = openSqliteStore({ path, flushIntervalMs: 60_000, busyTimeoutMs: 0, onError: (m) => errors.push(m) });
    s.record(usage({ requestId: "x" }));
    withRaw(path, (other) => {
      other.run("BEGIN IMMEDIATE");
      s.flush(); // cannot get the write lock
      other.run("ROLLBACK");
    });
    expect(s.stats()).toMatchObject({ pendingUsage: 1, flushErrors: 1 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("database writes failing");
    s.flush();
    expect(countRows(path, "usage")).toBe(1);
    expect(s.stats().pendingUsage).toBe(0);
    s.close();
  });

  test("the buffer is bounded: overflow is dropped and counted", () => {
    const s = openSqliteStore({ path: ":memory:", flushIntervalMs: 60_000, maxPending: 3 });
    for (let i = 0; i < 5; i++) s.record(usage({ requestId: `r${i}` }));
    expect(s.stats()).toMatchObject({ pendingUsage: 3, dropped: 2 });
    s.close();
  });
});
