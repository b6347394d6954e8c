/**
 * SPEC 6.3 "model-scoped 403 / 404 model not found: remove this account/model pairing": the removal
 * lasts 24 h, not forever (a model that answered 404 during a provider's rollout is tried on that
 * account again afterwards); until then it is kept across a restart, on both stores; and the registry's
 * `restorePairings` (behind `POST /admin/api/accounts/{id}/restore` and `switchyard accounts restore`)
 * ends it at once, in memory and in the store.
 */
import { describe, expect, test } from "bun:test";
import { classify } from "../../pipeline/classify.ts";
import type { Clock } from "../../pipeline/ports.ts";
import { AccountRegistry } from "../../src/accounts/registry.ts";
import { EventBus, type GatewayEvent } from "../../src/events/bus.ts";
import type { Store } from "../../src/store/types.ts";
import { storeBackends } from "../support/store-backends.ts";
import { account, providerOf, recordingStore, settableClock } from "./helpers.ts";

/** How long a removed pairing lasts (literal, not the code's constant): 24 h. */
const DAY_MS = 24 * 60 * 60_000;

const p = providerOf("p");
const notFound = (now: number) => classify({ status: 404, bodyText: JSON.stringify({ type: "error", error: { type: "not_found_error", message: "model: claude-x" } }), now });
const noAccess = (now: number) => classify({ status: 403, bodyText: "You do not have access to the model claude-y", now });

function rig(store?: Store, clock: Clock & { t: number; advance(ms: number): void } = settableClock()) {
  const bus = new EventBus();
  const events: GatewayEvent[] = [];
  bus.subscribe((e) => void events.push(e));
  const registry = new AccountRegistry(store, clock, { bus });
  registry.setAccounts([account("a1"), account("a2")], new Map([["p", p]]));
  const a1 = registry.list().find((a) => a.id === "a1")!;
  return { clock, registry, a1, events };
}

describe("a removed account/model pairing", () => {
  test("a 404 model not found removes the pairing for 24 h; then the model is tried on that account again", () => {
    const { store, calls } = recordingStore();
    const { clock, registry, a1 } = rig(store);
    const t0 = clock.now();
    registry.failure(a1, p, "claude-x", notFound(t0));
    expect(registry.exclusion(a1, "claude-x")?.cause).toBe("removed");
    expect(registry.exclusion(a1, "claude-other")).toBeUndefined();
    const write = calls.find((c) => c.method === "removeModel")!.args[0] as { until: number | null };
    expect(write.until).toBe(t0 + DAY_MS);
    expect(registry.snapshot().removed).toEqual([{ accountId: "a1", model: "claude-x", reason: "404 model not found", until: t0 + DAY_MS }]);
    clock.advance(DAY_MS - 1);
    expect(registry.exclusion(a1, "claude-x")?.cause).toBe("removed");
    clock.advance(1);
    expect(registry.exclusion(a1, "claude-x")).toBeUndefined();
    expect(registry.snapshot().removed).toEqual([]);
    registry.close();
  });

  test("a restore the shared database refuses (P0001): StoreError rejected naming the change and the database's reason, the pairing still removed, no model_restored", async () => {
    const refusal = Object.assign(new Error("removals end by themselves"), { errno: "P0001" });
    const store = new Proxy({}, { get: (_t, m) => (m === "restoreModel" ? () => Promise.reject(refusal) : () => undefined) }) as Store;
    const { clock, registry, a1, events } = rig(store);
    registry.failure(a1, p, "claude-x", notFound(clock.now()));
    await expect(registry.restorePairings("a1", "claude-x")).rejects.toMatchObject({
      code: "rejected",
      message: "The database refused the restore of account a1's removed pairing of model claude-x (SQLSTATE P0001: removals end by themselves; not tried again), so it was not done: the pairing stays removed. Try again once the database accepts the change.",
    });
    expect(registry.exclusion(a1, "claude-x")?.cause).toBe("removed");
    expect(events.filter((e) => e.type === "account_state" && e.change === "model_restored")).toEqual([]);
    registry.close();
  });

  test("restorePairings ends a removal now: memory, the store, a model_restored event; one model or all", async () => {
    const { store, calls } = recordingStore();
    const { clock, registry, a1, events } = rig(store);
    registry.failure(a1, p, "claude-x", notFound(clock.now()));
    registry.failure(a1, p, "claude-y", noAccess(clock.now()));
    expect(await registry.restorePairings("a1", "claude-y")).toEqual(["claude-y"]);
    expect(registry.exclusion(a1, "claude-y")).toBeUndefined();
    expect(registry.exclusion(a1, "claude-x")?.cause).toBe("removed");
    expect(calls.filter((c) => c.method === "restoreModel").map((c) => c.args)).toEqual([["a1", "claude-y"]]);
    expect(await registry.restorePairings("a1")).toEqual(["claude-x"]);
    expect(registry.exclusion(a1, "claude-x")).toBeUndefined();
    expect(calls.filter((c) => c.method === "restoreModel").map((c) => c.args)).toEqual([["a1", "claude-y"], ["a1"]]);
    expect(await registry.restorePairings("a1")).toEqual([]);
    const restored = events.filter((e) => e.type === "account_state" && e.change === "model_restored");
    expect(restored.map((e) => e.type === "account_state" && [e.account, e.provider, e.model])).toEqual([
      ["a1", "p", "claude-y"],
      ["a1", "p", "claude-x"],
    ]);
    const removed = events.find((e) => e.type === "account_state" && e.change === "model_removed");
    expect(removed).toMatchObject({ model: "claude-x", until: clock.now() + DAY_MS });
    registry.close();
  });

  test("the removal's end is published on the registry's clock: a clock past the end gets model_restored at the next re-read", () => {
    // The end timer waits real time; a clock that jumps (this one, a stepped system clock) outruns it, and
    // the re-read drops the ended removal (the store prunes it): without publishing there, no event ever came.
    const { clock, registry, a1, events } = rig();
    registry.failure(a1, p, "claude-x", notFound(clock.now()));
    clock.advance(DAY_MS);
    registry.loadState({ cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [] });
    const restored = events.filter((e) => e.type === "account_state" && e.change === "model_restored");
    expect(restored).toEqual([{ type: "account_state", at: clock.now(), account: "a1", provider: "p", change: "model_restored", model: "claude-x", reason: "removal (404 model not found) ended" }]);
    // Announced once: the timer, when it fires, finds it gone.
    registry.loadState({ cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [] });
    expect(events.filter((e) => e.type === "account_state" && e.change === "model_restored").length).toBe(1);
    registry.close();
  });

  test("a removal restored elsewhere (another instance on the same store) publishes model_restored at the re-read that drops it", () => {
    const { clock, registry, a1, events } = rig();
    const t0 = clock.now();
    registry.failure(a1, p, "claude-x", notFound(t0));
    registry.failure(a1, p, "claude-y", notFound(t0));
    const state = (removedModels: Array<{ accountId: string; model: string; reason: string; until: number | null; since: number }>) => ({ cooldowns: [], locks: [], removedModels, quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [] });
    clock.advance(60_000);
    // The store still has claude-y (and claude-x is gone): only claude-x is announced, once.
    registry.loadState(state([{ accountId: "a1", model: "claude-y", reason: "404 model not found", until: t0 + DAY_MS, since: t0 }]));
    registry.loadState(state([{ accountId: "a1", model: "claude-y", reason: "404 model not found", until: t0 + DAY_MS, since: t0 }]));
    const restored = events.filter((e) => e.type === "account_state" && e.change === "model_restored");
    expect(restored).toEqual([{ type: "account_state", at: clock.now(), account: "a1", provider: "p", change: "model_restored", model: "claude-x", reason: "restored elsewhere" }]);
    expect(registry.exclusion(a1, "claude-x")).toBeUndefined();
    expect(registry.exclusion(a1, "claude-y")?.cause).toBe("removed");
    registry.close();
  });

  test("a restore that a re-read overtakes (it sees the store's delete first) still names what it restored, announced once with the restore's reason", async () => {
    let deleted!: () => void;
    const write = new Promise<void>((r) => (deleted = r));
    const { store } = recordingStore();
    const { clock, registry, a1, events } = rig(new Proxy(store, { get: (t, m) => (m === "restoreModel" ? () => write : Reflect.get(t, m)) }));
    registry.failure(a1, p, "claude-x", notFound(clock.now()));
    registry.failure(a1, p, "claude-y", notFound(clock.now()));
    const asked = registry.restorePairings("a1", undefined, "restored through the admin API");
    // The instance's own re-read lands while the store's delete is under way: the rows are gone.
    registry.loadState({ cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [] });
    deleted();
    expect(await asked).toEqual(["claude-x", "claude-y"]);
    const restored = events.filter((e) => e.type === "account_state" && e.change === "model_restored");
    expect(restored.map((e) => e.type === "account_state" && [e.model, e.reason])).toEqual([
      ["claude-x", "restored through the admin API"],
      ["claude-y", "restored through the admin API"],
    ]);
    expect(registry.exclusion(a1, "claude-x")).toBeUndefined();
    registry.close();
  });

  test("a removal stored without an end (written before removals had one) ends 24 h after it began", () => {
    const { clock, registry, a1 } = rig();
    const now = clock.now();
    const stored = (model: string, since: number) => ({ accountId: "a1", model, reason: "404 model not found", until: null, since });
    registry.loadState({ cooldowns: [], locks: [], removedModels: [stored("claude-old", now - DAY_MS - 1), stored("claude-recent", now - 60 * 60_000)], quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [] });
    expect(registry.exclusion(a1, "claude-old")).toBeUndefined();
    expect(registry.exclusion(a1, "claude-recent")?.cause).toBe("removed");
    expect(registry.snapshot().removed).toEqual([{ accountId: "a1", model: "claude-recent", reason: "404 model not found", until: now - 60 * 60_000 + DAY_MS }]);
    clock.advance(DAY_MS - 60 * 60_000);
    expect(registry.exclusion(a1, "claude-recent")).toBeUndefined();
    registry.close();
  });
});

const backends = storeBackends("removed_pairing");

for (const backend of backends) {
  describe(`a removed pairing across a restart: ${backend.name}`, () => {
    test("still removed after a restart before its 24 h are over, gone after; a restore reaches the store", async () => {
      const clock = settableClock(Date.now());
      const { store, reopen } = await backend.open(clock);
      // The registry writes through without waiting; the test waits for those writes before the restart.
      const pending: unknown[] = [];
      const watched = new Proxy(store, {
        get: (target, name) => {
          const v = Reflect.get(target, name);
          return typeof v === "function" ? (...args: unknown[]) => (pending.push(v.apply(target, args)), pending.at(-1)) : v;
        },
      });
      const first = rig(watched, clock);
      first.registry.failure(first.a1, p, "claude-x", notFound(clock.now()));
      first.registry.failure(first.a1, p, "claude-y", noAccess(clock.now()));
      await Promise.all(pending);
      expect(pending.length).toBeGreaterThanOrEqual(2);
      first.registry.close();
      await store.close();

      // A restart an hour later: the pairings are still removed.
      clock.advance(60 * 60_000);
      const s2 = await reopen();
      const second = rig(s2, clock);
      second.registry.loadState(await s2.loadAccountState());
      expect(second.registry.exclusion(second.a1, "claude-x")?.cause).toBe("removed");
      expect(second.registry.exclusion(second.a1, "claude-y")?.cause).toBe("removed");
      // A restore by hand reaches the store: the next re-read does not bring the pairing back.
      expect(await second.registry.restorePairings("a1", "claude-y")).toEqual(["claude-y"]);
      second.registry.loadState(await s2.loadAccountState());
      expect(second.registry.exclusion(second.a1, "claude-y")).toBeUndefined();
      expect(second.registry.exclusion(second.a1, "claude-x")?.cause).toBe("removed");
      second.registry.close();
      await s2.close();

      // A restart after the 24 h: the model is tried on the account again.
      clock.advance(DAY_MS);
      const s3 = await reopen();
      const third = rig(s3, clock);
      const state = await s3.loadAccountState();
      expect(state.removedModels).toEqual([]);
      third.registry.loadState(state);
      expect(third.registry.exclusion(third.a1, "claude-x")).toBeUndefined();
      third.registry.close();
      await s3.close();
    });
  });
}
