/**
 * The registry's routing side (SPEC A-1…A-4): candidates in strategy order with affinity, the quota
 * and quarantine exclusions, conversation bindings (15 min, injected clock), concurrency slots with
 * a short injected wait, and one strategy draw per request.
 */
import { describe, expect, test } from "bun:test";
import { seededRng } from "../../pipeline/order.ts";
import type { AccountCandidate, PickHints } from "../../pipeline/pick.ts";
import type { ProviderInfo } from "../../pipeline/ports.ts";
import { AccountRegistry, bindingKey, type RegistryOptions } from "../../src/accounts/registry.ts";
import { accountsStatus } from "../../src/accounts/status.ts";
import { classify } from "../../pipeline/classify.ts";
import { sha256Hex } from "../../src/store/secrets.ts";
import type { AccountState } from "../../src/store/types.ts";
import { account, providerOf, recordingStore, settableClock } from "./helpers.ts";

/** SPEC A-2: a binding lasts 15 minutes (a literal from the SPEC, not the code's constant). */
const BINDING_TTL_MS = 15 * 60_000;

const EMPTY: AccountState = { cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [] };

function rig(opts: RegistryOptions & { providers?: ProviderInfo[]; accounts?: ReturnType<typeof account>[] } = {}) {
  const clock = settableClock();
  const { store, calls } = recordingStore();
  const registry = new AccountRegistry(store, clock, opts);
  const providers = opts.providers ?? [providerOf("p"), providerOf("cc", "claude-code"), providerOf("cx", "codex"), providerOf("q", "openai-compatible")];
  const accounts = opts.accounts ?? [account("a1", "p", { priority: 1 }), account("a2", "p", { priority: 2 }), account("a3", "p", { priority: 3 })];
  registry.setAccounts(accounts, new Map(providers.map((p) => [p.id, p])));
  registry.loadState(EMPTY);
  const ids = (hints: PickHints = {}, model = "m", provider = "p") => registry.candidates(provider, model, hints).filter((c) => c.eligible).map((c) => c.account.id);
  return { clock, store, calls, registry, ids, acc: (id: string) => accounts.find((a) => a.id === id)! };
}

const c429 = { row: "rate_limit_backoff" as const, account: { type: "backoff" as const, reason: "429" }, loop: "next_account" as const };

describe("scored order from live health", () => {
  test("fresh accounts come in priority order; a failure (a 500) moves an account back, successes and time bring it back", () => {
    const { registry, ids, acc, clock } = rig();
    expect(ids()).toEqual(["a1", "a2", "a3"]);
    registry.failure(acc("a1"), providerOf("p"), "m", classify({ status: 500, bodyText: "internal error", now: clock.now() }));
    expect(ids()).toEqual(["a2", "a3"]); // cooling down 30 s (SPEC 6.3)
    clock.advance(60_000); // the cooldown is over; the failure is still recent
    expect(ids()).toEqual(["a2", "a3", "a1"]);
    clock.advance(10 * 60_000);
    expect(ids()).toEqual(["a2", "a3", "a1"]);
    clock.advance(40 * 60_000);
    expect(ids()).toEqual(["a1", "a2", "a3"]);
  });

  test("a 429 or a 529 overload is the cooldown's business: once it ends the account is first again (SPEC A-3, 6.3)", () => {
    const cases = [
      { name: "429 with Retry-After", facts: { status: 429, headers: new Headers({ "retry-after": "20" }), bodyText: '{"error":{"type":"rate_limit_error","message":"Rate limited"}}' } },
      { name: "429 per-minute", facts: { status: 429, bodyText: '{"error":{"type":"rate_limit_error","message":"Rate limit exceeded: requests per minute"}}' } },
      { name: "429 backoff", facts: { status: 429, bodyText: "slow down" } },
      { name: "529 overloaded", facts: { status: 529, bodyText: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' } },
    ];
    for (const { name, facts } of cases) {
      const { registry, ids, acc, clock } = rig();
      const c = classify({ ...facts, now: clock.now() });
      expect([name, c.row]).toEqual([name, expect.stringMatching(/^rate_limit_/)]);
      registry.failure(acc("a1"), providerOf("p"), "m", c);
      expect([name, ids()]).toEqual([name, ["a2", "a3"]]); // cooling down
      clock.advance(95_000); // past each of these cooldowns (20 s, 90 s, 2 s backoff)
      expect([name, ids()]).toEqual([name, ["a1", "a2", "a3"]]);
      expect([name, accountsStatus(registry, "scored").accounts[0]!.health]).toMatchObject([name, { successRate: 0, failed: 1 }]); // shown as the failed attempt it was
    }
  });

  test("a quota lock (a 429 saying the quota is used up) and a 402 are the lock's business too: once it ends the account is first again (SPEC A-3, 6.3)", () => {
    const cases = [
      { name: "429 quota used up", row: "quota_exhausted", facts: { status: 429, headers: new Headers({ "retry-after": "60" }), bodyText: '{"error":{"type":"insufficient_quota","message":"You exceeded your current quota"}}' } },
      { name: "402", row: "payment_required", facts: { status: 402, headers: new Headers({ "retry-after": "60" }), bodyText: '{"error":{"message":"Payment required"}}' } },
    ];
    for (const { name, row, facts } of cases) {
      const { registry, ids, acc, clock } = rig();
      const c = classify({ ...facts, now: clock.now() });
      expect([name, c.row, c.account.type]).toEqual([name, row, "lock"]);
      registry.failure(acc("a1"), providerOf("p"), "m", c);
      expect([name, ids()]).toEqual([name, ["a2", "a3"]]); // locked until the named reset
      clock.advance(95_000); // past the lock (60 s); within the failure weight's half-life (5 min)
      expect([name, ids()]).toEqual([name, ["a1", "a2", "a3"]]);
      expect([name, accountsStatus(registry, "scored").accounts[0]!.health]).toMatchObject([name, { successRate: 0, failed: 1 }]); // shown as the failed attempt it was
    }
  });

  test("a slow account (latency EWMA) goes behind a fast one", () => {
    const { registry, ids, acc } = rig();
    registry.success(acc("a1"), providerOf("p"), "m", 4000);
    registry.success(acc("a2"), providerOf("p"), "m", 500);
    expect(ids()[0]).toBe("a2");
  });

  test("a request's fault (client_error) does not count against the account", () => {
    const { registry, ids, acc } = rig();
    registry.failure(acc("a1"), providerOf("p"), "m", { row: "client_error", account: { type: "none" }, loop: "next_target" });
    expect(ids()).toEqual(["a1", "a2", "a3"]);
  });

  test("a 404 model not found on one model removes that pairing and leaves the account's score for every other model as it was (newuser13 J1)", () => {
    const { registry, ids, acc } = rig();
    const notFound = { row: "model_unavailable" as const, account: { type: "remove_pairing" as const, reason: "404 model not found" }, loop: "next_target" as const };
    registry.failure(acc("a1"), providerOf("p"), "missing-model", notFound);
    expect(ids({}, "missing-model")).toEqual(["a2", "a3"]);
    // the priority-1 account still comes first for a model it serves
    expect(ids()).toEqual(["a1", "a2", "a3"]);
    const a1 = registry.candidates("p", "m", {}).find((c) => c.account.id === "a1")!;
    expect(a1.note).toContain("success 1.00");
  });

  test("the eligible account's note carries the score for the trace", () => {
    const { registry } = rig();
    const [c] = registry.candidates("p", "m", {});
    expect(c.note).toMatch(/^score 1\.00 \(success 1\.00, latency 1\.00, quota 1\.00, position 1\.00\)$/);
  });
});

describe("exclusions (SPEC A-1)", () => {
  test("a locked account that also cools down past the lock's end is out until the later of the two (Retry-After reads it)", () => {
    const { registry, clock, acc } = rig();
    const coolEnd = clock.now() + 10 * 60_000;
    registry.failure(acc("a1"), providerOf("p"), "m", { row: "rate_limit_with_reset", account: { type: "cooldown_until", scope: "model", until: coolEnd, reason: "429" }, loop: "next_account" });
    registry.failure(acc("a1"), providerOf("p"), "m", { row: "quota_exhausted", account: { type: "lock", until: clock.now() + 60_000, reason: "monthly cap" }, loop: "next_account" });
    expect(registry.candidates("p", "m", {}).find((x) => x.account.id === "a1")).toMatchObject({ eligible: false, until: coolEnd });
    // another model has no cooldown: the lock's own end
    expect(registry.candidates("p", "other", {}).find((x) => x.account.id === "a1")).toMatchObject({ eligible: false, until: clock.now() + 60_000 });
  });

  test("≤ 2 % remaining quota for this model excludes until the window resets; 3 % does not", () => {
    const { registry, clock, ids } = rig();
    const resetAt = clock.now() + 60_000;
    registry.setQuota({ accountId: "a1", window: "requests", model: "m", remaining: 2, limit: 100, resetAt });
    registry.setQuota({ accountId: "a2", window: "tokens", model: "m", remaining: 3, limit: 100, resetAt });
    const c = registry.candidates("p", "m", {}).find((x) => x.account.id === "a1")!;
    expect(c).toMatchObject({ eligible: false, until: resetAt });
    expect(c.reason).toContain("quota 2 % left in window requests for m");
    expect(ids()).toEqual(["a3", "a2"]); // a2 eligible but scored down by its low quota
    expect(ids({}, "other-model")).toEqual(["a1", "a2", "a3"]); // per model
    clock.advance(60_001);
    expect(ids()).toContain("a1");
  });

  test("an account-wide window (model *) applies to every model; usedPercent counts too", () => {
    const { registry, ids } = rig();
    registry.setQuota({ accountId: "a2", window: "5h", model: "*", usedPercent: 99 });
    expect(ids({}, "x")).toEqual(["a1", "a3"]);
  });

  test("quota windows come in with the periodic re-read", () => {
    const { registry, ids, clock } = rig();
    // read now: a window without a reset time counts for a day after it was read (src/accounts/quota.ts isLive)
    registry.loadState({ ...EMPTY, quotas: [{ accountId: "a1", window: "w", model: "m", usedPercent: 100, updatedAt: clock.now() }] });
    expect(ids()).toEqual(["a2", "a3"]);
  });

  test("a quarantined credential (by fingerprint) is excluded", () => {
    const { registry, ids } = rig();
    registry.loadState({ ...EMPTY, quarantined: [{ fingerprint: sha256Hex("sk-a2-secret"), reason: "refresh rejected", since: 0 }] });
    const c = registry.candidates("p", "m", {}).find((x) => x.account.id === "a2")!;
    expect(c.reason).toContain("quarantined");
    expect(ids()).toEqual(["a1", "a3"]);
  });

  test("modelQuota: the best per-model quota among the provider's accounts (pinned: that account only)", () => {
    const { registry } = rig();
    registry.setQuota({ accountId: "a1", window: "w", model: "m", remaining: 10, limit: 100 });
    registry.setQuota({ accountId: "a2", window: "w", model: "m", remaining: 60, limit: 100 });
    registry.setQuota({ accountId: "a3", window: "w", model: "*", remaining: 90, limit: 100 });
    expect(registry.modelQuota("p", "m")).toBeCloseTo(0.6, 10);
    expect(registry.modelQuota("p", "m", "a1")).toBeCloseTo(0.1, 10);
    expect(registry.modelQuota("p", "other")).toBeUndefined(); // account-wide windows are not per-model
  });
});

describe("hasAccounts", () => {
  test("true for a provider with accounts (disabled ones count) and for a *-compatible one (keyless); false otherwise", () => {
    const { registry } = rig({ accounts: [account("a1", "p"), account("d1", "cc", { disabled: true })] });
    expect(["p", "cc", "q", "cx", "unknown"].map((id) => registry.hasAccounts(id))).toEqual([true, true, true, false, false]);
  });
});

describe("conversation affinity (SPEC A-2)", () => {
  test("a bound conversation returns to its account, ahead of the strategy's choice", () => {
    const { registry, ids, acc } = rig();
    registry.bind({ affinityKey: "f:conv" }, acc("a3"));
    expect(ids({ affinityKey: "f:conv" })).toEqual(["a3", "a1", "a2"]);
    const c = registry.candidates("p", "m", { affinityKey: "f:conv" })[0];
    expect(c.note).toContain("conversation affinity");
    expect(ids({ affinityKey: "f:other" })).toEqual(["a1", "a2", "a3"]);
  });

  test("a binding expires 15 min after the success (injected clock)", () => {
    const { registry, ids, acc, clock } = rig();
    registry.bind({ affinityKey: "f:conv" }, acc("a2"));
    clock.advance(BINDING_TTL_MS - 1);
    expect(ids({ affinityKey: "f:conv" })[0]).toBe("a2");
    clock.advance(1);
    expect(ids({ affinityKey: "f:conv" })[0]).toBe("a1");
  });

  test("the binding is persisted through the store's bind() with its expiry", () => {
    const { registry, calls, acc, clock } = rig();
    registry.bind({ affinityKey: "s:abc" }, acc("a2"));
    expect(calls.filter((c) => c.method === "bind").map((c) => c.args[0])).toEqual([{ key: bindingKey("p", "s:abc"), accountId: "a2", expiresAt: clock.now() + BINDING_TTL_MS }]);
  });

  test("stored bindings (another instance, a restart) are honoured after a re-read", () => {
    const { registry, ids, clock } = rig();
    registry.loadState({ ...EMPTY, bindings: [{ key: bindingKey("p", "s:abc"), accountId: "a3", expiresAt: clock.now() + 1000 }] });
    expect(ids({ affinityKey: "s:abc" })[0]).toBe("a3");
  });

  test("an ineligible bound account is skipped; the binding does not override exclusions", () => {
    const { registry, ids, acc } = rig();
    registry.bind({ affinityKey: "f:conv" }, acc("a2"));
    registry.failure(acc("a2"), providerOf("p"), "m", c429);
    expect(ids({ affinityKey: "f:conv" })).not.toContain("a2");
  });

  test("bindings are per provider: a conversation bound on one provider does not steer another", () => {
    const { registry, ids, acc } = rig({ accounts: [account("a1"), account("a2"), account("b1", "q"), account("b2", "q")] });
    registry.bind({ affinityKey: "f:conv" }, acc("a2"));
    expect(ids({ affinityKey: "f:conv" }, "m", "q")).toEqual(["b1", "b2"]);
    expect(ids({ affinityKey: "f:conv" })).toEqual(["a2", "a1"]);
  });

  test("a combo with cache_affinity off ignores bindings", () => {
    const { registry, ids, acc } = rig();
    registry.bind({ affinityKey: "f:conv" }, acc("a3"));
    expect(ids({ affinityKey: "f:conv", affinity: false })).toEqual(["a1", "a2", "a3"]);
  });

  test("the round-robin strategy ignores bindings and writes none", () => {
    const { registry, ids, acc, calls } = rig({ strategy: () => "round-robin" });
    registry.loadState({ ...EMPTY, bindings: [{ key: bindingKey("p", "f:conv"), accountId: "a3", expiresAt: Date.now() * 2 }] });
    expect(ids({ affinityKey: "f:conv" })).toEqual(["a1", "a2", "a3"]);
    expect(ids({ affinityKey: "f:conv" })).toEqual(["a2", "a3", "a1"]);
    registry.bind({ affinityKey: "f:conv" }, acc("a1"));
    expect(calls.filter((c) => c.method === "bind")).toEqual([]);
  });
});

describe("one strategy decision per request", () => {
  test("the same request (hints object) sees one order however often it asks; a new request draws again", () => {
    const { registry } = rig({ strategy: () => "random", rng: seededRng(9) });
    const hints: PickHints = {};
    const first = registry.candidates("p", "m", hints).map((c) => c.account.id);
    for (let i = 0; i < 5; i++) expect(registry.candidates("p", "m", hints).map((c) => c.account.id)).toEqual(first);
    const orders = new Set(Array.from({ length: 30 }, () => registry.candidates("p", "m", {}).map((c) => c.account.id).join()));
    expect(orders.size).toBeGreaterThan(1);
  });

  test("round-robin advances once per request and not at all for a dry run", () => {
    const { ids } = rig({ strategy: () => "round-robin" });
    const h: PickHints = {};
    expect(ids(h)[0]).toBe("a1");
    expect(ids(h)[0]).toBe("a1");
    expect(ids({ dryRun: true })[0]).toBe("a2");
    expect(ids({})[0]).toBe("a2");
    expect(ids({})[0]).toBe("a3");
  });

  test("eligibility is re-checked on every call within a request", () => {
    const { registry, acc } = rig();
    const h: PickHints = {};
    expect(registry.candidates("p", "m", h).every((c) => c.eligible)).toBe(true);
    registry.failure(acc("a1"), providerOf("p"), "m", c429);
    expect(registry.candidates("p", "m", h).find((c) => c.account.id === "a1")?.eligible).toBe(false);
  });
});

describe("concurrency slots (SPEC A-4)", () => {
  test("limits: max_concurrency, else the kind default (claude-code 5, codex 3), others unlimited", () => {
    const { registry } = rig({ accounts: [account("x", "p", { maxConcurrency: 2 }), account("c", "cc"), account("d", "cx"), account("e", "q"), account("f", "cc", { maxConcurrency: 9 })] });
    expect(["x", "c", "d", "e", "f"].map((id) => registry.slotLimit(registry.list().find((a) => a.id === id)!))).toEqual([2, 5, 3, undefined, 9]);
  });

  test("with max_concurrency reached, the next request is offered another account first", async () => {
    const { registry, acc } = rig({ accounts: [account("a1", "p", { maxConcurrency: 1 }), account("a2", "p", { maxConcurrency: 1 })] });
    const release = await registry.acquire(acc("a1"), new AbortController().signal);
    expect(release).toBeDefined();
    const cands: AccountCandidate[] = registry.candidates("p", "m", {});
    expect(cands.map((c) => c.account.id)).toEqual(["a2", "a1"]);
    expect(cands[1].note).toContain("all 1 slots in use");
    release!();
    expect(registry.candidates("p", "m", {}).map((c) => c.account.id)).toEqual(["a1", "a2"]);
  });

  test("a full account gives up after the (injected, short) slot wait", async () => {
    const { registry, acc } = rig({ slotWaitMs: 40, accounts: [account("a1", "p", { maxConcurrency: 1 })] });
    const hold = await registry.acquire(acc("a1"), new AbortController().signal);
    const t0 = performance.now();
    expect(await registry.acquire(acc("a1"), new AbortController().signal)).toBeUndefined();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
    expect(registry.slots.waiting("a1")).toBe(0);
    hold!();
  });

  test("a freed slot goes to the first waiter (FIFO); double release is harmless", async () => {
    const { registry, acc } = rig({ slotWaitMs: 5000, accounts: [account("a1", "p", { maxConcurrency: 1 })] });
    const hold = (await registry.acquire(acc("a1"), new AbortController().signal))!;
    const order: string[] = [];
    const w1 = registry.acquire(acc("a1"), new AbortController().signal).then((r) => (order.push("w1"), r));
    const w2 = registry.acquire(acc("a1"), new AbortController().signal).then((r) => (order.push("w2"), r));
    expect(registry.slots.waiting("a1")).toBe(2);
    hold();
    hold();
    const r1 = (await w1)!;
    expect(registry.slots.inUse("a1")).toBe(1);
    r1();
    const r2 = (await w2)!;
    r2();
    expect(order).toEqual(["w1", "w2"]);
    expect(registry.slots.inUse("a1")).toBe(0);
  });

  test("a waiter whose client goes away leaves the queue at once", async () => {
    const { registry, acc } = rig({ slotWaitMs: 5000, accounts: [account("a1", "p", { maxConcurrency: 1 })] });
    const hold = (await registry.acquire(acc("a1"), new AbortController().signal))!;
    const ac = new AbortController();
    const w = registry.acquire(acc("a1"), ac.signal);
    ac.abort();
    expect(await w).toBeUndefined();
    expect(registry.slots.waiting("a1")).toBe(0);
    hold();
    expect(registry.slots.inUse("a1")).toBe(0);
  });

  test("unlimited accounts never wait", async () => {
    const { registry, acc } = rig({ accounts: [account("e", "q")] });
    const rs = await Promise.all(Array.from({ length: 50 }, () => registry.acquire(acc("e"), new AbortController().signal)));
    expect(rs.every(Boolean)).toBe(true);
    expect(registry.slots.inUse("e")).toBe(50);
  });
});

describe("accounts status", () => {
  test("per account: eligibility with reasons, cooldowns with end times, locks, quota, slots, bindings, circuit; per model", async () => {
    const { registry, acc, clock } = rig({ accounts: [account("a1", "p", { maxConcurrency: 2 }), account("a2"), account("a3", "p", { disabled: true })], providers: [providerOf("p", "anthropic", { m: {}, n: {} })] });
    registry.failure(acc("a2"), providerOf("p"), "m", c429);
    registry.failure(acc("a1"), providerOf("p"), "m", { row: "quota_exhausted", account: { type: "lock", until: clock.now() + 3_600_000, reason: "monthly cap" }, loop: "next_account" });
    registry.setQuota({ accountId: "a2", window: "tokens", model: "*", remaining: 500, limit: 1000 });
    registry.bind({ affinityKey: "f:x" }, acc("a2"));
    const hold = await registry.acquire(acc("a1"), new AbortController().signal);
    const s = accountsStatus(registry, "scored");
    const [a1, a2, a3] = s.accounts;
    expect(a1).toMatchObject({ id: "a1", eligible: false, lock: { reason: "monthly cap", until: clock.now() + 3_600_000 }, slots: { inUse: 1, limit: 2, waiting: 0 } });
    expect(a1.reasons[0]).toContain("locked: monthly cap until");
    expect(a2).toMatchObject({ eligible: true, bindings: 1, slots: { inUse: 0, limit: null }, circuit: { state: "closed" } });
    expect(a2.cooldowns).toEqual([{ model: "m", reason: "429", until: clock.now() + 2000, level: 0 }]);
    expect(a2.quota[0]).toMatchObject({ window: "tokens", remainingPercent: 50 });
    expect(a2.models).toEqual([
      { model: "m", eligible: false, reason: expect.stringContaining("cooling down (429) until"), until: clock.now() + 2000 },
      { model: "n", eligible: true },
    ]);
    expect(a2.health).toMatchObject({ successRate: 0, succeeded: 0, failed: 1 }); // its one attempt failed, rate limited (the scored strategy's prior is not shown, nor does it count this one)
    expect(a3).toMatchObject({ eligible: false, reasons: ["disabled"] });
    expect(JSON.stringify(s)).not.toContain("secret");
    hold!();
  });
});

describe("per-minute token limits", () => {
  const providers = () => new Map([["p", providerOf("p")]]);
  const tokens = (accountId: string, limit: number) => ({ accountId, window: "tokens", model: "*", remaining: limit, limit, updatedAt: 1 });

  test("an account removed from the list, or given another API key, loses its limit; one kept as it was keeps it", () => {
    const { registry, acc } = rig();
    for (const id of ["a1", "a2", "a3"]) registry.setQuota(tokens(id, 30_000));
    expect(registry.tokenWindowLimit(acc("a1"), "m")).toBe(30_000);
    const rekeyed = account("a2", "p", { priority: 2, credential: { type: "api_key", apiKey: "sk-a2-another-key" } });
    registry.setAccounts([acc("a1"), rekeyed], providers());
    expect(registry.tokenWindowLimit(acc("a1"), "m")).toBe(30_000); // same key: kept
    expect(registry.tokenWindowLimit(rekeyed, "m")).toBeUndefined(); // another key: the old tier's limit is not its
    expect(registry.tokenWindowLimit(acc("a3"), "m")).toBeUndefined(); // removed (and not back with its old limit if re-added)
    registry.setAccounts([acc("a1"), rekeyed, acc("a3")], providers());
    expect(registry.tokenWindowLimit(acc("a3"), "m")).toBeUndefined();
    registry.setQuota(tokens("a2", 450_000));
    expect(registry.tokenWindowLimit(rekeyed, "m")).toBe(450_000);
  });

  test("a new account list of the same accounts (a reload, new objects) keeps every limit", () => {
    const { registry } = rig();
    registry.setQuota(tokens("a1", 30_000));
    const again = [account("a1", "p", { priority: 1 }), account("a2", "p", { priority: 2 })];
    registry.setAccounts(again, providers());
    expect(registry.tokenWindowLimit(again[0]!, "m")).toBe(30_000);
  });
});
