/**
 * The store contract (SPEC D-1, D-2): the same behaviour checked against both backends — the embedded
 * SQLite store and the PostgreSQL store on a throwaway server started for this file. Every call is
 * awaited, as code holding a `Store` does. The PostgreSQL store's own migrations, flush and outage
 * classification are in postgres-flush.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { parseCallCursor, type Store } from "../../src/store/types.ts";
import { code, fakeClock, trace, usage } from "./helpers.ts";
import { storeBackends } from "../support/store-backends.ts";

const backends = storeBackends("contract");

for (const backend of backends) {
  describe(`store contract: ${backend.name}`, () => {
    test("client keys: create shows the secret once, lookup from memory, list, revoke, conflicts, config keys read-only", async () => {
      const { store: s, reopen } = await backend.open();
      s.setConfigKeys([{ name: "cfg", secret: "config-secret", scopes: ["admin"] }]);
      const created = await s.createKey("laptop", ["admin", "admin"], "team-a");
      expect(created.secret).toMatch(/^sy-[A-Za-z0-9_-]{43}$/);
      expect(created.key).toEqual({ name: "laptop", id: "laptop#1", scopes: ["admin"], tag: "team-a", source: "db" });
      expect(s.lookup(created.secret)).toEqual({ name: "laptop", id: "laptop#1", scopes: ["admin"], tag: "team-a", source: "db" });
      expect(s.lookup("config-secret")?.source).toBe("config");
      expect(s.lookup("nope")).toBeUndefined();
      expect(s.any()).toBe(true);
      expect(await code(() => s.createKey("laptop"))).toBe("conflict");
      expect(await code(() => s.createKey("cfg"))).toBe("read_only");
      expect(await code(() => s.createKey(""))).toBe("invalid");
      const list = await s.listKeys();
      expect(list.map((k) => [k.name, k.source, k.revokedAt === undefined])).toEqual([
        ["cfg", "config", true],
        ["laptop", "db", true],
      ]);
      expect(JSON.stringify(list)).not.toContain(created.secret);
      expect(await s.revokeKey("laptop")).toBe(true);
      expect(s.lookup(created.secret)).toBeUndefined();
      expect(await s.revokeKey("laptop")).toBe(false);
      expect(await code(() => s.revokeKey("cfg"))).toBe("read_only");
      const again = await s.createKey("laptop");
      expect(s.lookup(again.secret)?.name).toBe("laptop");
      await s.close();
      const r = await reopen();
      expect(r.lookup(again.secret)?.name).toBe("laptop");
      expect(r.lookup(created.secret)).toBeUndefined();
      await r.close();
    });

    test("client keys whose names differ only in case: of creates at once through two connections one succeeds, the others are a conflict naming it; a revoked key's name in other case is free", async () => {
      const { store: a, reopen } = await backend.open();
      const b = await reopen();
      const names = ["ci-Bot", "ci-bot", "CI-BOT", "Ci-Bot", "ci-BOT", "cI-bOt"];
      const made = await Promise.allSettled(names.map(async (n, i) => (i % 2 ? b : a).createKey(n))); // SQLite throws at once
      const won = made.findIndex((m) => m.status === "fulfilled");
      expect(made.filter((m) => m.status === "fulfilled")).toHaveLength(1);
      for (const m of made) if (m.status === "rejected") expect([m.reason.code, m.reason.message]).toEqual(["conflict", `a key named ${JSON.stringify(names[won])} already exists (names differ only in case)`]);
      expect((await a.listKeys()).map((k) => k.name)).toEqual([names[won]!]);
      expect(await a.revokeKey(names[won]!)).toBe(true);
      expect((await b.createKey("CI-bot")).key.name).toBe("CI-bot");
      await b.close();
      await a.close();
    });

    test("client keys disabled for a while (G16): lookup refuses, disabled names it, listed since when, kept across a reopen; enable; config keys read-only", async () => {
      const clock = fakeClock();
      const { store: s, reopen } = await backend.open(clock);
      s.setConfigKeys([{ name: "cfg", secret: "config-secret" }]);
      const k = await s.createKey("laptop", [], undefined, { rpm: 5 });
      expect(s.disabled(k.secret)).toBeUndefined();
      expect(await s.setKeyDisabled("laptop", true)).toBe(true);
      const at = clock.now();
      clock.advance(1000);
      expect(await s.setKeyDisabled("laptop", true)).toBe(true); // a second disable keeps the first time
      expect(s.lookup(k.secret)).toBeUndefined();
      expect(s.disabled(k.secret)).toEqual({ name: "laptop", id: "laptop#1", scopes: [], limits: { rpm: 5 }, source: "db" });
      expect(s.disabled("config-secret")).toBeUndefined();
      expect(s.activeKeys().map((x) => x.name).sort()).toEqual(["cfg", "laptop"]); // its limits' windows stay watched
      expect((await s.listKeys()).find((x) => x.name === "laptop")?.disabledAt).toBe(Math.round(at));
      expect(await s.setKeyDisabled("nobody", true)).toBe(false);
      expect(await code(() => s.setKeyDisabled("cfg", true))).toBe("read_only");
      await s.close();
      const r = await reopen();
      expect(r.lookup(k.secret)).toBeUndefined();
      expect(r.disabled(k.secret)?.name).toBe("laptop");
      expect(await r.setKeyDisabled("laptop", false)).toBe(true);
      expect(r.lookup(k.secret)?.id).toBe("laptop#1");
      expect(r.disabled(k.secret)).toBeUndefined();
      expect((await r.listKeys()).find((x) => x.name === "laptop")?.disabledAt).toBeUndefined();
      expect(await r.revokeKey("laptop")).toBe(true);
      expect(await r.setKeyDisabled("laptop", true)).toBe(false); // a revoked key is not disabled
      await r.close();
    });

    test("accounts: upsert, get, list by priority, credential update, overrides, disable, delete with its state", async () => {
      const clock = fakeClock();
      const { store: s, reopen } = await backend.open(clock);
      await s.upsertAccount({ id: "b", providerId: "openai", priority: 2, credential: { type: "api_key", apiKey: "sk-b" }, disabled: false });
      await s.upsertAccount({ id: "a", providerId: "cc", priority: 1, maxConcurrency: 3, proxy: "http://proxy:8080", credential: { type: "oauth", accessToken: "at", refreshToken: "rt", expiresAt: 1_900_000_000_000 }, disabled: false });
      expect((await s.listAccounts()).map((a) => a.id)).toEqual(["a", "b"]);
      expect(await s.getAccount("a")).toEqual({
        id: "a",
        providerId: "cc",
        priority: 1,
        maxConcurrency: 3,
        proxy: "http://proxy:8080",
        credential: { type: "oauth", accessToken: "at", refreshToken: "rt", expiresAt: 1_900_000_000_000 },
        disabled: false,
        source: "db",
      });
      await s.updateCredential("a", { type: "oauth", accessToken: "at2", refreshToken: "rt2", expiresAt: 1_900_000_100_000 });
      expect((await s.getAccount("a"))?.credential).toEqual({ type: "oauth", accessToken: "at2", refreshToken: "rt2", expiresAt: 1_900_000_100_000 });
      expect(await code(() => s.updateCredential("ghost", { type: "api_key", apiKey: "x" }))).toBe("not_found");
      expect(await code(() => s.upsertAccount({ id: "", providerId: "x", priority: 0, credential: { type: "none" }, disabled: false }))).toBe("invalid");
      await s.setCredentialOverride("cfg-acct", "base-fp", { type: "oauth", accessToken: "new", refreshToken: "r" });
      expect(await s.listCredentialOverrides()).toEqual([{ accountId: "cfg-acct", baseFingerprint: "base-fp", credential: { type: "oauth", accessToken: "new", refreshToken: "r" } }]);
      await s.clearCredentialOverride("cfg-acct");
      expect(await s.listCredentialOverrides()).toEqual([]);
      await s.setAccountDisabled("b", true);
      expect((await s.getAccount("b"))?.disabled).toBe(true);
      expect(await code(() => s.setAccountDisabled("ghost", true))).toBe("not_found");
      await s.setAccountModels("a", ["m1", "m2", "m1"]);
      expect((await s.getAccount("a"))?.models).toEqual(["m1", "m2"]);
      await s.setCooldown({ accountId: "a", model: "m1", until: clock.now() + 60_000, reason: "429", level: 1 });
      await s.quarantine({ fingerprint: "fp-a", accountId: "a", reason: "rejected" });
      expect(await s.deleteAccount("a")).toBe(true);
      expect(await s.deleteAccount("a")).toBe(false);
      const st = await s.loadAccountState();
      expect(st.cooldowns).toEqual([]);
      expect(st.discoveredModels).toEqual([]);
      expect(st.quarantined.map((q) => q.fingerprint)).toEqual(["fp-a"]);
      await s.close();
      const r = await reopen();
      expect((await r.listAccounts()).map((a) => [a.id, a.disabled])).toEqual([["b", true]]);
      await r.close();
    });

    test("account state: written through, expired rows left out, buffered bindings and quotas after a flush", async () => {
      const clock = fakeClock();
      const { store: s, reopen } = await backend.open(clock);
      const now = clock.now();
      await s.setCooldown({ accountId: "a", model: "*", until: now + 30_000, reason: "429 rate limit", level: 2 });
      await s.setCooldown({ accountId: "a", model: "old", until: now + 10, reason: "429", level: 0 });
      await s.setLock({ accountId: "b", until: null, reason: "402" });
      await s.removeModel({ accountId: "b", model: "m", reason: "404", until: null });
      await s.setCircuit({ providerId: "p", openUntil: now + 300_000, reason: "10 consecutive 5xx" });
      await s.quarantine({ fingerprint: "fp", reason: "invalid_grant" });
      s.bind({ key: "p|conv", accountId: "a", expiresAt: now + 900_000 });
      s.setQuota({ accountId: "a", window: "5h", model: "*", usedPercent: 42.5, resetAt: now + 3_600_000 });
      clock.advance(100);
      const st = await s.loadAccountState();
      expect(st.cooldowns).toEqual([{ accountId: "a", model: "*", until: now + 30_000, reason: "429 rate limit", level: 2, since: now }]);
      expect(st.locks).toEqual([{ accountId: "b", until: null, reason: "402", since: now }]);
      expect(st.removedModels).toEqual([{ accountId: "b", model: "m", reason: "404", until: null, since: now }]);
      expect(st.circuits).toEqual([{ providerId: "p", openUntil: now + 300_000, reason: "10 consecutive 5xx", since: now }]);
      expect(st.quarantined).toEqual([{ fingerprint: "fp", reason: "invalid_grant", since: now }]);
      expect(st.bindings).toEqual([{ key: "p|conv", accountId: "a", expiresAt: now + 900_000 }]);
      expect(st.quotas).toEqual([{ accountId: "a", window: "5h", model: "*", usedPercent: 42.5, resetAt: now + 3_600_000, updatedAt: now }]);
      await s.clearCooldown("a");
      await s.clearLock("b");
      await s.restoreModel("b");
      await s.clearCircuit("p");
      await s.unquarantine("fp");
      await s.unbind("p|conv");
      const cleared = await s.loadAccountState();
      expect([cleared.cooldowns, cleared.locks, cleared.removedModels, cleared.circuits, cleared.quarantined, cleared.bindings]).toEqual([[], [], [], [], [], []]);
      expect(await code(() => s.setCooldown({ accountId: "a", model: "m", until: Number.NaN, reason: "x", level: 0 }))).toBe("invalid");
      await s.setLock({ accountId: "c", until: now + 50_000, reason: "quota" });
      await s.close();
      const r = await reopen();
      expect((await r.loadAccountState()).locks).toEqual([{ accountId: "c", until: now + 50_000, reason: "quota", since: now + 100 }]);
      await r.close();
    });

    test("usage and traces: buffered until a flush, summaries by group, recent calls with route ids, trace lookups, prune", async () => {
      const { store: s } = await backend.open();
      s.record(usage({ requestId: "r1", ts: 1_800_000_000_001, model: "m-a", keyName: "k1" }));
      s.record(usage({ requestId: "r2", ts: 1_800_000_000_002, model: "m-a", keyName: "k2", outcome: "upstream_error", status: 502, fallback: true, ttfbMs: undefined }));
      s.record(usage({ requestId: "r3", ts: 1_800_000_000_003, model: "m-b", estimated: true, usage: {} }));
      s.record({ ...usage({ requestId: "r4", ts: 1_800_000_000_004 }), providerId: undefined, model: undefined, accountId: undefined, keyName: undefined, outcome: "rejected", status: 404 });
      s.save(trace(1, { requestId: "r1" }));
      s.save(trace(2, { requestId: "r2" }));
      expect(s.stats()).toMatchObject({ pendingUsage: 4, pendingTraces: 2 });
      await s.flush();
      expect(s.stats()).toMatchObject({ pendingUsage: 0, pendingTraces: 0, flushErrors: 0 });
      const byModel = await s.usageSummary({ sinceMs: 0, by: "model" });
      // the gateway's own refusal (rejected) is refused, not an error (try18 D11)
      expect(byModel.map((r) => [r.group, r.requests, r.errors, r.refused, r.fallbacks, r.estimated, r.inputTokens, r.outputTokens])).toEqual([
        ["openai/m-a", 2, 1, 0, 1, 0, 200, 40],
        [null, 1, 0, 1, 0, 0, 100, 20],
        ["openai/m-b", 1, 0, 0, 0, 1, 0, 0],
      ]);
      expect(byModel[0]!.avgTtfbMs).toBe(120);
      expect(byModel[0]!.avgTotalMs).toBe(900);
      const byKey = await s.usageSummary({ sinceMs: 1_800_000_000_002, untilMs: 1_800_000_000_004, by: "key" });
      expect(byKey.map((r) => [r.group, r.requests])).toEqual([
        ["k2", 1],
        ["laptop", 1],
      ]);
      expect(await code(() => s.usageSummary({ sinceMs: 0, by: "nope" as never }))).toBe("invalid");
      const calls = await s.recentCalls(10);
      expect(calls.map((c) => c.requestId)).toEqual(["r4", "r3", "r2", "r1"]);
      expect(calls[3]).toEqual({ ...usage({ requestId: "r1", ts: 1_800_000_000_001, model: "m-a", keyName: "k1" }), routeId: "sy_1" });
      expect(calls[2]!.ttfbMs).toBeUndefined();
      expect(calls[0]!.providerId).toBeUndefined();
      expect((await s.getTrace("sy_2"))?.requestId).toBe("r2");
      expect((await s.getTrace("r1"))?.routeId).toBe("sy_1");
      expect(await s.getTrace("nothing")).toBeUndefined();
      expect((await s.recentTraces(1)).map((t) => t.routeId)).toEqual(["sy_2"]);
      expect(await s.pruneUsage(1_800_000_000_003)).toBe(2);
      expect((await s.recentCalls(10)).map((c) => c.requestId)).toEqual(["r4", "r3"]);
      await s.close();
      s.record(usage({ requestId: "late" }));
      expect(s.stats().dropped).toBe(1);
      expect(await code(() => s.recentCalls(1))).toBe("closed");
    });

    test("the trace ring's size follows setTraceRingSize from the next flush (settings.trace_ring_size changed while running)", async () => {
      const { store: s } = await backend.open();
      const one = async (i: number) => (s.save(trace(i)), await s.flush());
      for (const i of [1, 2, 3]) await one(i);
      s.setTraceRingSize(1);
      await one(4);
      expect((await s.recentTraces(10)).map((t) => t.routeId)).toEqual(["sy_4"]);
      await s.close();
    });

    test("a row with text or numbers the database cannot hold as sent does not hold up the flush: every row is written", async () => {
      const { store: s } = await backend.open();
      s.record(usage({ requestId: "before", ts: 1_800_000_000_001 }));
      // A client's model name with a NUL or a lone surrogate; an upstream's absurd token count.
      s.record(usage({ requestId: "nul", ts: 1_800_000_000_002, requestedModel: "gpt\u0000x" }));
      s.record(usage({ requestId: "surrogate", ts: 1_800_000_000_003, requestedModel: "\ud800abc" }));
      s.record(usage({ requestId: "huge", ts: 1_800_000_000_004, usage: { inputTokens: 1e20, outputTokens: 1e300 } }));
      s.save(trace(1, { requestId: "nul", requestedModel: "gpt\u0000x" }));
      await s.flush();
      s.record(usage({ requestId: "after", ts: 1_800_000_000_005 }));
      await s.flush();
      expect(s.stats()).toMatchObject({ pendingUsage: 0, pendingTraces: 0, dropped: 0, flushErrors: 0 });
      const calls = await s.recentCalls(10);
      expect(calls.map((c) => c.requestId)).toEqual(["after", "huge", "surrogate", "nul", "before"]);
      // PostgreSQL's text holds no NUL: it becomes U+FFFD there; SQLite keeps it.
      expect(calls.find((c) => c.requestId === "nul")!.requestedModel).toBe(backend.name === "postgres" ? "gpt\ufffdx" : "gpt\u0000x");
      expect(calls.find((c) => c.requestId === "surrogate")!.requestedModel).toBe("\ufffdabc");
      expect(calls.find((c) => c.requestId === "huge")!.usage).toMatchObject({ inputTokens: Number.MAX_SAFE_INTEGER, outputTokens: Number.MAX_SAFE_INTEGER });
      expect((await s.getTrace("sy_1"))?.requestedModel).toBe("gpt\u0000x");
      await s.close();
    });

    test("usage series: one bucket per interval from the rounded-down start, zeros included, sums per bucket", async () => {
      const { store: s } = await backend.open();
      const t0 = 1_800_000_040_000; // 40 s into a minute
      s.record(usage({ requestId: "s1", ts: t0 + 1_000, costUsd: 0.25 }));
      s.record(usage({ requestId: "s2", ts: t0 + 2_000, outcome: "upstream_error", status: 502, fallback: true }));
      s.record(usage({ requestId: "s3", ts: t0 + 125_000, costUsd: 0.5 }));
      s.record(usage({ requestId: "s5", ts: t0 + 126_000, outcome: "rejected", status: 429, usage: {} }));
      s.record(usage({ requestId: "s4", ts: t0 + 500_000 })); // after the range
      const series = await s.usageSeries({ sinceMs: t0, untilMs: t0 + 180_000, bucketMs: 60_000 });
      const minute = 1_800_000_000_000 + 0; // t0 rounded down to its minute
      // a refusal (rejected) is counted as refused, apart from the errors (try18 D11)
      expect(series.map((b) => [b.t, b.requests, b.errors, b.refused, b.fallbacks, b.inputTokens, b.outputTokens])).toEqual([
        [minute, 2, 1, 0, 1, 200, 40],
        [minute + 60_000, 0, 0, 0, 0, 0, 0],
        [minute + 120_000, 2, 0, 1, 0, 100, 20],
        [minute + 180_000, 0, 0, 0, 0, 0, 0],
      ]);
      expect(series[0]!.costUsd).toBeCloseTo(0.25, 12);
      expect(series[2]!.costUsd).toBeCloseTo(0.5, 12);
      expect(series[1]).toEqual({ t: minute + 60_000, requests: 0, errors: 0, refused: 0, fallbacks: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 0, subscriptionUsd: 0 });
      expect(await code(() => s.usageSeries({ sinceMs: 0, untilMs: 1_000_000, bucketMs: 10 }))).toBe("invalid");
      expect(await code(() => s.usageSeries({ sinceMs: 0, untilMs: 1_800_000_000_000, bucketMs: 60_000 }))).toBe("invalid");
      await s.close();
    });

    test("usage series with a UTC offset: day buckets start at that local midnight (the dashboard reader's days)", async () => {
      const { store: s } = await backend.open();
      const day = 86_400_000;
      const midnight = 20_800 * day; // a UTC midnight
      // 8 h west of UTC: local midnight is 08:00 UTC
      s.record(usage({ requestId: "d1", ts: midnight + 7 * 3_600_000 })); // 23:00 the day before, local
      s.record(usage({ requestId: "d2", ts: midnight + 9 * 3_600_000 })); // 01:00, local
      s.record(usage({ requestId: "d3", ts: midnight + 30 * 3_600_000 })); // 22:00, local
      const local = await s.usageSeries({ sinceMs: midnight, untilMs: midnight + 2 * day, bucketMs: day, offsetMs: -8 * 3_600_000 });
      expect(local.map((b) => [(b.t - midnight) / 3_600_000, b.requests])).toEqual([
        [-16, 1],
        [8, 2],
        [32, 0],
      ]);
      const utc = await s.usageSeries({ sinceMs: midnight, untilMs: midnight + 2 * day, bucketMs: day });
      expect(utc.map((b) => [(b.t - midnight) / 3_600_000, b.requests])).toEqual([
        [0, 2],
        [24, 1],
      ]);
      await s.close();
    });

    test("usage: the cost the subscription providers served is apart (subscriptionUsd), by key and per bucket, with a filter too", async () => {
      const { store: s } = await backend.open();
      const t0 = 1_800_000_000_000;
      s.record(usage({ requestId: "a1", ts: t0 + 1_000, providerId: "openai", keyName: "k1", costUsd: 0.25 }));
      s.record(usage({ requestId: "c1", ts: t0 + 2_000, providerId: "cc", keyName: "k1", costUsd: 1.5 }));
      s.record(usage({ requestId: "x1", ts: t0 + 3_000, providerId: "cx", keyName: "k2", costUsd: 0.5 }));
      s.record(usage({ requestId: "u1", ts: t0 + 4_000, providerId: "cc", keyName: "k2", costUsd: undefined, unpriced: true }));
      const subs = ["cc", "cx"];
      const byKey = await s.usageSummary({ sinceMs: t0, by: "key", subscriptionProviders: subs });
      expect(byKey.map((r) => [r.group, r.costUsd, r.subscriptionUsd])).toEqual([
        ["k1", 1.75, 1.5],
        ["k2", 0.5, 0.5],
      ]);
      expect((await s.usageSummary({ sinceMs: t0, by: "key" })).map((r) => r.subscriptionUsd)).toEqual([0, 0]);
      const filtered = await s.usageSummary({ sinceMs: t0, by: "provider", filter: { key: "k1" }, subscriptionProviders: subs });
      expect(filtered.map((r) => [r.group, r.costUsd, r.subscriptionUsd]).sort()).toEqual([
        ["cc", 1.5, 1.5],
        ["openai", 0.25, 0],
      ]);
      const series = await s.usageSeries({ sinceMs: t0, untilMs: t0 + 120_000, bucketMs: 60_000, filter: { key: "k1" }, subscriptionProviders: subs });
      expect(series.map((b) => [b.costUsd, b.subscriptionUsd])).toEqual([
        [1.75, 1.5],
        [0, 0],
      ]);
      expect((await s.usageSeries({ sinceMs: t0, untilMs: t0 + 60_000, bucketMs: 60_000, subscriptionProviders: subs })).map((b) => b.subscriptionUsd)).toEqual([2]);
      await s.close();
    });

    test("key limits and cost: stored, carried by lookup, summed by the summary", async () => {
      const { store: s, reopen } = await backend.open();
      const limits = { rpm: 60, concurrency: 2, budgets: [{ window: "1d" as const, usd: 5 }], models: ["glm/*"] };
      const k = await s.createKey("ci", [], undefined, limits);
      expect(s.lookup(k.secret)?.limits).toEqual(limits);
      expect((await s.listKeys()).find((x) => x.name === "ci")?.limits).toEqual(limits);
      expect(await code(() => s.createKey("bad", [], undefined, { rpm: 0 }))).toBe("invalid");
      s.record(usage({ requestId: "c1", keyName: "ci", costUsd: 0.0126 }));
      s.record(usage({ requestId: "c2", keyName: "ci", unpriced: true }));
      s.record(usage({ requestId: "c3", keyName: "ci", costUsd: -1 }));
      const ci = (await s.usageSummary({ sinceMs: 0, by: "key" })).find((r) => r.group === "ci")!;
      expect(ci.costUsd).toBeCloseTo(0.0126, 12);
      expect(ci.unpriced).toBe(1);
      const calls = new Map((await s.recentCalls(10)).map((c) => [c.requestId, c]));
      expect(calls.get("c1")!.costUsd).toBe(0.0126);
      expect(calls.get("c2")!.unpriced).toBe(true);
      expect(calls.get("c3")!.costUsd).toBeUndefined();
      await s.close();
      const r = await reopen();
      expect(r.lookup(k.secret)?.limits).toEqual(limits);
      await r.close();
    });

    test("updateKey (try18 D3): new limits and tag for the same key (secret, id, prefix kept), null clears, two changes at once both hold, kept across a reopen", async () => {
      const { store: s, reopen } = await backend.open();
      s.setConfigKeys([{ name: "cfg", secret: "sy-config-key-contract-update-01" }]);
      const k = await s.createKey("ci", [], "team-a", { rpm: 1, budgets: [{ window: "1d", tokens: 1000 }] });
      const before = (await s.listKeys()).find((x) => x.name === "ci")!;
      const changed = await s.updateKey("ci", { limits: { rpm: 5, budgets: [{ window: "1d", tokens: 2000 }] } });
      expect(changed).toMatchObject({ name: "ci", id: k.key.id, tag: "team-a", prefix: before.prefix, createdAt: before.createdAt, limits: { rpm: 5, budgets: [{ window: "1d", tokens: 2000 }] } });
      // the same secret, the same id (its limits' use), the new limits: at once
      expect(s.lookup(k.secret)).toMatchObject({ name: "ci", id: k.key.id, limits: { rpm: 5, budgets: [{ window: "1d", tokens: 2000 }] } });
      expect((await s.updateKey("ci", { limits: { rpm: null }, tag: null })).limits).toEqual({ budgets: [{ window: "1d", tokens: 2000 }] });
      expect(s.lookup(k.secret)?.tag).toBeUndefined();
      // two changes of different fields at once: neither is lost
      await Promise.all([s.updateKey("ci", { limits: { tpm: 500 } }), s.updateKey("ci", { limits: { models: ["glm/*"] } }), s.updateKey("ci", { tag: "team-b" })]);
      expect(s.lookup(k.secret)).toMatchObject({ tag: "team-b", limits: { tpm: 500, models: ["glm/*"], budgets: [{ window: "1d", tokens: 2000 }] } });
      expect(await code(() => s.updateKey("nope", { limits: { rpm: 5 } }))).toBe("not_found");
      expect(await code(() => s.updateKey("cfg", { limits: { rpm: 5 } }))).toBe("read_only");
      expect(await code(() => s.updateKey("ci", { limits: { rpm: 0 } }))).toBe("invalid");
      await s.revokeKey("ci");
      expect(await code(() => s.updateKey("ci", { limits: { rpm: 5 } }))).toBe("not_found");
      const k2 = await s.createKey("ci2", [], undefined, { rpm: 3 });
      expect((await s.updateKey("ci2", { limits: null })).limits).toBeUndefined();
      expect(s.lookup(k2.secret)?.limits).toBeUndefined();
      await s.updateKey("ci2", { limits: { concurrency: 2 } });
      await s.close();
      const r = await reopen();
      expect(r.lookup(k2.secret)?.limits).toEqual({ concurrency: 2 });
      await r.close();
    });

    test("usage by model groups by provider/model: one model id served by two providers is two rows, as the calls filter names them", async () => {
      const { store: s } = await backend.open();
      s.record(usage({ requestId: "t1", providerId: "anthropic", model: "claude-sonnet-4-5", usage: { inputTokens: 10, outputTokens: 1 } }));
      s.record(usage({ requestId: "t2", providerId: "cc", model: "claude-sonnet-4-5", usage: { inputTokens: 200, outputTokens: 20 } }));
      s.record(usage({ requestId: "t3", providerId: "cc", model: "claude-sonnet-4-5", usage: { inputTokens: 300, outputTokens: 30 } }));
      const rows = (await s.usageSummary({ sinceMs: 0, by: "model" })).map((r) => [r.group, r.requests, r.inputTokens, r.outputTokens]);
      expect(rows).toEqual([["cc/claude-sonnet-4-5", 2, 500, 50], ["anthropic/claude-sonnet-4-5", 1, 10, 1]]);
      // a row's group, given back as the model filter, finds that row's requests only
      expect((await s.usageSummary({ sinceMs: 0, by: "model", filter: { model: "anthropic/claude-sonnet-4-5" } })).map((r) => [r.group, r.requests])).toEqual([["anthropic/claude-sonnet-4-5", 1]]);
      await s.close();
    });

    test("token-saver savings (SPEC S-4): stored per request, summed per group, absent when nothing was saved", async () => {
      const { store: s, reopen } = await backend.open();
      s.record(usage({ requestId: "s1", model: "glm-5", savedChars: 40_000, savedTokens: 10_000 }));
      s.record(usage({ requestId: "s2", model: "glm-5", savedChars: 2_002, savedTokens: 501 }));
      s.record(usage({ requestId: "s3", model: "glm-5" }));
      const row = (await s.usageSummary({ sinceMs: 0, by: "model" })).find((r) => r.group === "openai/glm-5")!;
      expect(row).toMatchObject({ requests: 3, savedChars: 42_002, savedTokens: 10_501 });
      const calls = new Map((await s.recentCalls(10)).map((c) => [c.requestId, c]));
      expect(calls.get("s1")).toMatchObject({ savedChars: 40_000, savedTokens: 10_000 });
      expect(calls.get("s3")!.savedTokens).toBeUndefined();
      await s.close();
      const r = await reopen();
      expect((await r.usageSummary({ sinceMs: 0, by: "model" })).find((x) => x.group === "openai/glm-5")!.savedTokens).toBe(10_501);
      await r.close();
    });

    test("coordination: leases up to a limit, counters per fixed window, one refresh-locked call at a time", async () => {
      const { store: s } = await backend.open();
      const a = await s.tryLease("account:x", 2);
      const b = await s.tryLease("account:x", 2);
      expect(typeof a).toBe("string");
      expect(typeof b).toBe("string");
      expect(await s.tryLease("account:x", 2)).toBeUndefined();
      expect(typeof (await s.tryLease("account:y", 1))).toBe("string");
      await s.releaseLease(a!);
      await s.releaseLease(a!);
      const c = await s.tryLease("account:x", 2);
      expect(typeof c).toBe("string");
      expect(await s.tryLease("account:x", 2)).toBeUndefined();
      expect(await code(() => s.tryLease("account:x", 0))).toBe("invalid");
      const w1 = await s.addToCounter("key:laptop:rpm", 3_600_000, 1);
      const w2 = await s.addToCounter("key:laptop:rpm", 3_600_000, 2);
      expect(w2.total - w1.total).toBe(2);
      expect(w2.resetAt).toBe(w1.resetAt);
      expect(w2.resetAt % 3_600_000).toBe(0);
      expect((await s.addToCounter("key:laptop:rpm", 3_600_000, 0)).total).toBe(w2.total);
      expect((await s.addToCounter("key:other:rpm", 3_600_000, 0)).total).toBe(0);
      expect(await code(() => s.addToCounter("x", 0, 1))).toBe("invalid");
      // One instance's share of a pool: what it asks for, capped at the pool; giving back lowers it.
      const pool = { name: "key:laptop:rpm", windowStart: 3_600_000, windowEnd: 7_200_000, limit: 10 };
      expect((await s.setQuotaShare({ ...pool, target: 4, used: 0 })).granted).toBe(4);
      expect((await s.setQuotaShare({ ...pool, target: 25, used: 3 })).granted).toBe(10);
      const back = await s.setQuotaShare({ ...pool, target: 3, used: 3 });
      expect(back).toMatchObject({ granted: 3, othersUsed: 0 });
      expect(Math.abs(back.now - Date.now())).toBeLessThan(60_000);
      expect(await s.reportQuotaUse([{ name: pool.name, windowStart: pool.windowStart, used: 5 }])).toEqual([0]);
      // The report: this instance's changed use in, the pools other instances use out (none here).
      expect(await s.exchangeQuotaUse([{ name: pool.name, windowStart: pool.windowStart, used: 6 }])).toEqual([]);
      expect(await s.exchangeQuotaUse([])).toEqual([]);
      expect(await code(() => s.setQuotaShare({ ...pool, name: "", target: 1, used: 0 }))).toBe("invalid");
      const order: string[] = [];
      const slow = s.withRefreshLock("acct", async () => {
        order.push("first in");
        await Bun.sleep(150);
        order.push("first out");
        return 1;
      });
      // The second caller starts once the first holds the lock (a database round trip away).
      while (!order.includes("first in")) await Bun.sleep(5);
      const second = s.withRefreshLock("acct", async () => {
        order.push("second");
        return 2;
      });
      expect(await Promise.all([slow, second])).toEqual([1, 2]);
      expect(order).toEqual(["first in", "first out", "second"]);
      await expect(s.withRefreshLock("acct", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
      expect(await s.withRefreshLock("acct", async () => "after a failure")).toBe("after a failure");
      // A held refresh lock holds no database connection: 12 refreshes of different accounts at once
      // (more than the pool's 10 connections) all run together, and each can still read the store.
      let entered = 0;
      let allIn!: () => void;
      const together = new Promise<void>((resolve) => (allIn = resolve));
      const refreshes = Array.from({ length: 12 }, (_, i) =>
        s.withRefreshLock(`acct-${i}`, async () => {
          if (++entered === 12) allIn();
          await together;
          return (await s.listAccounts()).length;
        }),
      );
      const timeout = Bun.sleep(15_000).then(() => "some refreshes never got the lock");
      expect(await Promise.race([Promise.all(refreshes), timeout])).toEqual(Array(12).fill(0));
      await s.close();
    });
  });
}

for (const backend of backends) {
  describe(`store contract: ${backend.name}: routing objects of the admin API`, () => {
    test("combos, aliases, settings and account flags round-trip, are written through and survive a reopen", async () => {
      const clock = fakeClock(1_800_000_000_000);
      const { store: a, reopen } = await backend.open(clock);
      const spec = { name: "duo", strategy: "fallback", targets: [{ model: "p/x", when: { expr: { fact: "has_tools", op: "eq", value: true } } }] };
      await a.putCombo("duo", spec);
      await a.putAlias("fast", "p/x");
      await a.setSetting("flight_recorder", { enabled: true });
      await a.setSetting("account_strategy", "p2c");
      await a.setAccountDisabledFlag("a1", true);
      // Written through: a second connection sees them before any flush or close.
      const other = await reopen();
      expect((await other.listCombos()).map((c) => c.name)).toEqual(["duo"]);
      await other.close();
      clock.advance(5000);
      await a.putAlias("fast", "p/y");
      await a.close();

      const b = await reopen();
      expect(await b.listCombos()).toEqual([{ name: "duo", spec, createdAt: 1_800_000_000_000, updatedAt: 1_800_000_000_000 }]);
      expect(await b.listAliases()).toEqual([{ name: "fast", target: "p/y", createdAt: 1_800_000_000_000, updatedAt: 1_800_000_005_000 }]);
      expect(await b.getSettings()).toEqual({ account_strategy: "p2c", flight_recorder: { enabled: true } });
      expect(await b.listDisabledAccounts()).toEqual(["a1"]);

      await b.setSetting("account_strategy", null);
      await b.setAccountDisabledFlag("a1", false);
      expect(await b.deleteCombo("duo")).toBe(true);
      expect(await b.deleteCombo("duo")).toBe(false);
      expect(await b.deleteAlias("fast")).toBe(true);
      expect(await b.getSettings()).toEqual({ flight_recorder: { enabled: true } });
      expect(await b.listDisabledAccounts()).toEqual([]);
      expect(await b.listCombos()).toEqual([]);
      expect(await b.listAliases()).toEqual([]);
      expect(await code(() => b.putCombo("", {}))).toBe("invalid");
      expect(await code(() => b.putAlias("x", " "))).toBe("invalid");
      await b.close();
      expect(await code(() => b.listCombos())).toBe("closed");
    });

    test("createCombo/createAlias: of parallel creates of one name through two connections, exactly one is true; a combo's name is taken for an alias and back (newuser15 N8)", async () => {
      const { store: a, reopen } = await backend.open(fakeClock(1_800_000_000_000));
      const b = await reopen();
      const made = await Promise.all(["p/a", "p/b", "p/c", "p/d"].map((m, i) => (i % 2 ? b : a).createCombo("race", { name: "race", targets: [{ model: m }] })));
      expect(made.filter(Boolean)).toHaveLength(1);
      expect((await a.listCombos()).map((c) => (c.spec as any).targets[0].model)).toEqual([["p/a", "p/b", "p/c", "p/d"][made.indexOf(true)]]);
      expect(await a.createAlias("race", "p/x")).toBe(false);
      const mixed = await Promise.all([a.createAlias("both", "p/x"), b.createCombo("both", { name: "both", targets: [{ model: "p/y" }] }), b.createAlias("both", "p/z")]);
      expect(mixed.filter(Boolean)).toHaveLength(1);
      expect((await a.listAliases()).length + (await a.listCombos()).filter((c) => c.name === "both").length).toBe(1);
      expect(await a.createCombo("both", {})).toBe(false);
      expect(await code(() => a.createCombo("", {}))).toBe("invalid");
      expect(await code(() => a.createAlias("x", ""))).toBe("invalid");
      await b.close();
      await a.close();
    });

    test("createCombo/createAlias: of parallel creates of names a person cannot tell apart (case only, or the same after NFC) through two connections, exactly one is true", async () => {
      const { store: a, reopen } = await backend.open(fakeClock(1_800_000_000_000));
      const b = await reopen();
      // precomposed ä (U+00E4) and a + U+0308, in several cases: all one name to a reader
      const names = ["F\u00e4st", "f\u00e4st", "F\u00c4ST", "Fa\u0308st", "fa\u0308st", "FA\u0308ST", "f\u00c4st", "fA\u0308sT"];
      const made = await Promise.all(names.map((n, i) => (i % 2 ? b : a)[i % 3 ? "createCombo" : "createAlias"](n, (i % 3 ? { name: n, targets: [{ model: "p/m" }] } : "p/m") as never)));
      expect(made.filter(Boolean)).toHaveLength(1);
      const stored = [...(await a.listCombos()).map((c) => c.name), ...(await a.listAliases()).map((x) => x.name)];
      expect(stored).toEqual([names[made.indexOf(true)]]);
      // and one at a time: a look-alike of a stored name is refused, another name is not
      expect(await b.createAlias("FAST".toLowerCase().replace("a", "\u00e4").toUpperCase(), "p/m")).toBe(false);
      expect(await b.createCombo("faster", { name: "faster", targets: [{ model: "p/m" }] })).toBe(true);
      await b.close();
      await a.close();
    });

    test("usage filters and time buckets: every bucket present, filters on summary, series and calls", async () => {
      const { store: s } = await backend.open();
      const T = 1_800_000_000_000; // a multiple of 60 000
      s.record(usage({ requestId: "r1", ts: T + 1_000, requestedModel: "fast", providerId: "openai", model: "gpt-5-mini", accountId: "o1", keyName: "laptop" }));
      s.record(usage({ requestId: "r2", ts: T + 59_999, requestedModel: "fast", providerId: "openai", model: "gpt-5-mini", accountId: "o2", keyName: "ci", outcome: "error", status: 429, fallback: true }));
      s.record(usage({ requestId: "r3", ts: T + 180_000, requestedModel: "coding", providerId: "glm", model: "glm-5.3", accountId: "g1", keyName: "laptop", usage: { inputTokens: 10, outputTokens: 2 } }));
      s.record(usage({ requestId: "r4", ts: T - 1, requestedModel: "fast" }));
      const series = await s.usageSeries({ sinceMs: T + 30_000, untilMs: T + 240_000, bucketMs: 60_000 });
      // The first bucket starts at T but counts from since: r1 (T + 1 s) is older than the range, as
      // the summary of the same range leaves it out (until 2026-12-07 it was counted here).
      expect(series.map((b) => [b.t - T, b.requests, b.errors, b.fallbacks, b.inputTokens, b.outputTokens])).toEqual([
        [0, 1, 1, 1, 100, 20],
        [60_000, 0, 0, 0, 0, 0],
        [120_000, 0, 0, 0, 0, 0],
        [180_000, 1, 0, 0, 10, 2],
      ]);
      expect(series[0]).toMatchObject({ cacheReadTokens: 5, cacheWriteTokens: 1, reasoningTokens: 7 });
      const summed = (await s.usageSummary({ sinceMs: T + 30_000, untilMs: T + 240_000, by: "model" })).reduce((n, r) => n + r.requests, 0);
      expect(series.reduce((n, b) => n + b.requests, 0)).toBe(summed);
      // model matches the requested name, the upstream model and provider/model.
      for (const model of ["coding", "glm-5.3", "glm/glm-5.3"]) {
        const only = await s.usageSeries({ sinceMs: T, untilMs: T + 240_000, bucketMs: 60_000, filter: { model } });
        expect(only.map((b) => b.requests)).toEqual([0, 0, 0, 1]);
      }
      const byAccount = await s.usageSummary({ sinceMs: T, by: "account", filter: { key: "laptop" } });
      expect(byAccount.map((r) => [r.group, r.requests])).toEqual([
        ["g1", 1],
        ["o1", 1],
      ]);
      expect((await s.usageSummary({ sinceMs: 0, by: "model", filter: { outcome: "error", provider: "openai" } })).map((r) => [r.group, r.requests])).toEqual([["openai/gpt-5-mini", 1]]);
      expect((await s.recentCalls(10, { filter: { account: "o2" } })).map((c) => c.requestId)).toEqual(["r2"]);
      expect((await s.recentCalls(10, { sinceMs: T })).map((c) => c.requestId)).toEqual(["r3", "r2", "r1"]);
      expect((await s.recentCalls(10, { sinceMs: T, filter: { model: "fast", key: "laptop" } })).map((c) => c.requestId)).toEqual(["r1"]);
      expect((await s.recentCalls(10)).length).toBe(4);
      expect(await code(() => s.usageSeries({ sinceMs: T, untilMs: T + 60_000, bucketMs: 10 }))).toBe("invalid");
      await s.close();
    });

    test("usage by account counts each 429 against the account that was hit, also one that served nothing; the calls say which", async () => {
      const { store: s, reopen } = await backend.open();
      const T = 1_800_000_000_000;
      s.record(usage({ requestId: "r1", ts: T, accountId: "b", keyName: "laptop", attempts: 3, fallback: true, rateLimited: ["a", "a"] }));
      s.record(usage({ requestId: "r2", ts: T + 1, accountId: "a", keyName: "ci", attempts: 2, fallback: true, rateLimited: ["c"] }));
      s.record(usage({ requestId: "r3", ts: T + 2, accountId: undefined, providerId: undefined, model: undefined, keyName: "ci", outcome: "upstream_error", status: 429, rateLimited: ["c"] }));
      s.record(usage({ requestId: "r4", ts: T + 3, accountId: "b", keyName: "laptop" }));
      const rows = (await s.usageSummary({ sinceMs: T, by: "account" })).map((r) => [r.group, r.requests, r.rateLimited]);
      expect(rows).toEqual([
        ["b", 2, 0],
        [null, 1, 0],
        ["a", 1, 2],
        ["c", 0, 2],
      ]);
      // A filter narrows the requests; its account names the account hit.
      expect((await s.usageSummary({ sinceMs: T, by: "account", filter: { key: "ci" } })).map((r) => [r.group, r.requests, r.rateLimited])).toEqual([
        [null, 1, 0],
        ["a", 1, 0],
        ["c", 0, 2],
      ]);
      expect((await s.usageSummary({ sinceMs: T, by: "account", filter: { account: "a" } })).map((r) => [r.group, r.requests, r.rateLimited])).toEqual([["a", 1, 2]]);
      // Other groupings do not count them.
      expect((await s.usageSummary({ sinceMs: T, by: "key" }))[0]!.rateLimited).toBeUndefined();
      expect((await s.recentCalls(10)).map((c) => [c.requestId, c.rateLimited])).toEqual([
        ["r4", undefined],
        ["r3", ["c"]],
        ["r2", ["c"]],
        ["r1", ["a", "a"]],
      ]);
      await s.close();
      const again = await reopen();
      expect((await again.usageSummary({ sinceMs: T, by: "account", filter: { account: "c" } })).map((r) => [r.group, r.requests, r.rateLimited])).toEqual([["c", 0, 2]]);
      await again.close();
    });
  });
}

for (const backend of backends) {
  describe(`store contract: ${backend.name}: calls a page at a time`, () => {
    test("older and newer cursors walk every call once, in order, keeping the filter; calls of the same millisecond are not lost at a page's edge", async () => {
      const { store: s } = await backend.open();
      // 7 calls, three of them in the same millisecond (ts 2), every other one of model "b".
      const ts = [1, 2, 2, 2, 3, 4, 5];
      ts.forEach((t, i) => s.record(usage({ requestId: `r${i}`, ts: 1_800_000_000_000 + t, model: i % 2 ? "b" : "a" })));
      await s.flush();
      const ids = (p: { calls: Array<{ requestId: string }> }) => p.calls.map((c) => c.requestId);
      const first = await s.callsPage({ limit: 3 });
      expect([ids(first), first.newer]).toEqual([["r6", "r5", "r4"], undefined]);
      const second = await s.callsPage({ limit: 3, before: parseCallCursor(first.older!) });
      expect(ids(second)).toEqual(["r3", "r2", "r1"]);
      expect(second.newer).toBeString();
      const third = await s.callsPage({ limit: 3, before: parseCallCursor(second.older!) });
      expect([ids(third), third.older]).toEqual([["r0"], undefined]);
      // back up: the page just newer than the third is the second again, then the first (no newer)
      const back = await s.callsPage({ limit: 3, after: parseCallCursor(third.newer!) });
      expect(ids(back)).toEqual(["r3", "r2", "r1"]);
      const top = await s.callsPage({ limit: 3, after: parseCallCursor(back.newer!) });
      expect([ids(top), top.newer, top.older]).toEqual([["r6", "r5", "r4"], undefined, first.older]);
      // a filter is kept on every page
      const b1 = await s.callsPage({ limit: 2, filter: { model: "b" } });
      expect(ids(b1)).toEqual(["r5", "r3"]);
      const b2 = await s.callsPage({ limit: 2, filter: { model: "b" }, before: parseCallCursor(b1.older!) });
      expect([ids(b2), b2.older]).toEqual([["r1"], undefined]);
      expect(ids(await s.callsPage({ limit: 2, filter: { model: "b" }, after: parseCallCursor(b2.newer!) }))).toEqual(["r5", "r3"]);
      // recentCalls is the first page
      expect((await s.recentCalls(3)).map((c) => c.requestId)).toEqual(ids(first));
      expect(parseCallCursor("12.x")).toBeUndefined();
      await s.close();
    });

    test("the account filter keeps the calls the account served and those it answered an attempt of with 429, on every page", async () => {
      const { store: s } = await backend.open();
      const T = 1_800_000_000_000;
      s.record(usage({ requestId: "x0", ts: T + 1, accountId: "a1" }));
      s.record(usage({ requestId: "x1", ts: T + 2, accountId: "a2", rateLimited: ["a1"] }));
      s.record(usage({ requestId: "x2", ts: T + 3, accountId: "a2" }));
      s.record(usage({ requestId: "x3", ts: T + 4, accountId: "a3", rateLimited: ["a2", "a1"] }));
      s.record(usage({ requestId: "x4", ts: T + 5, accountId: "a2", rateLimited: ["a1x"] }));
      await s.flush();
      const ids = (p: { calls: Array<{ requestId: string }> }) => p.calls.map((c) => c.requestId);
      expect(ids(await s.callsPage({ limit: 10, filter: { account: "a1" } }))).toEqual(["x3", "x1", "x0"]);
      const a1 = await s.callsPage({ limit: 2, filter: { account: "a1" } });
      expect(ids(a1)).toEqual(["x3", "x1"]);
      expect(ids(await s.callsPage({ limit: 2, filter: { account: "a1" }, before: parseCallCursor(a1.older!) }))).toEqual(["x0"]);
      expect(ids(await s.callsPage({ limit: 10, filter: { account: "a2", model: "gpt-5-mini" } }))).toEqual(["x4", "x3", "x2", "x1"]);
      // the last served call of an account (Test on the Accounts page) is still one it served
      expect((await s.recentCalls(1, { filter: { account: "a1" } })).map((c) => c.requestId)).toEqual(["x0"]);
      await s.close();
    });
  });
}
