/**
 * A re-keyed account (its API key replaced in the config file: a reload hands the registry the new
 * account list) starts with a new quota (SPEC A-1, P-5): the old key's quota windows (a
 * percentage used, requests or tokens left, a daily window) go from memory and from the store, its
 * pending ones too, on the embedded store and on PostgreSQL alike; an account whose key stayed keeps its own.
 */
import { describe, expect, test } from "bun:test";
import { AccountRegistry } from "../../src/accounts/registry.ts";
import { storeBackends } from "../support/store-backends.ts";
import { account, providerOf, settableClock } from "./helpers.ts";

const backends = storeBackends("rekey_quota");

for (const backend of backends) {
  describe(`re-keyed account's quota windows: ${backend.name}`, () => {
    test("the old key's windows go at once and stay gone after a re-read and a restart; an account with the same key keeps its windows", async () => {
      const clock = settableClock();
      const { store, reopen } = await backend.open(clock);
      const registry = new AccountRegistry(store, clock);
      const providers = new Map([["p", providerOf("p")]]);
      const a1 = account("a1", "p", { priority: 1 });
      const a2 = account("a2", "p", { priority: 2 });
      registry.setAccounts([a1, a2], providers);
      registry.loadState(await store.loadAccountState());
      const now = clock.now();
      const hour = now + 3_600_000;
      registry.setQuota({ accountId: "a1", window: "5h", model: "*", usedPercent: 40, resetAt: hour });
      registry.setQuota({ accountId: "a2", window: "5h", model: "*", usedPercent: 99, resetAt: hour });
      registry.setQuota({ accountId: "a2", window: "tokens", model: "*", remaining: 100, limit: 30_000, resetAt: hour });
      registry.loadState(await store.loadAccountState()); // flushed to the store and read back
      registry.setQuota({ accountId: "a2", window: "daily", model: "*", remaining: 0, limit: 1000, resetAt: now + 86_400_000 }); // still pending
      const eligible = () => registry.candidates("p", "m", {}).filter((c) => c.eligible).map((c) => c.account.id).sort();
      expect(eligible()).toEqual(["a1"]); // a2 reports 1 % left (SPEC A-1: ≤ 2 % excludes it)
      expect(registry.tokenWindowLimit(a2, "m")).toBe(30_000);

      const rekeyed = account("a2", "p", { priority: 2, credential: { type: "api_key", apiKey: "sk-a2-a-new-key" } });
      const a1Again = account("a1", "p", { priority: 1 }); // same key, new object (a reload)
      registry.setAccounts([a1Again, rekeyed], providers);
      expect(eligible()).toEqual(["a1", "a2"]);
      expect(registry.quotaHealthy(rekeyed, "m")).toBeUndefined(); // nothing known of the new key yet
      expect(registry.tokenWindowLimit(rekeyed, "m")).toBeUndefined();
      expect(registry.quotaHealthy(a1Again, "m")).toBe(true);

      const st = await store.loadAccountState(); // the periodic re-read
      expect(st.quotas.map((q) => `${q.accountId} ${q.window}`)).toEqual(["a1 5h"]);
      registry.loadState(st);
      expect(eligible()).toEqual(["a1", "a2"]);

      // The new key's own windows are kept as any other.
      registry.setQuota({ accountId: "a2", window: "5h", model: "*", usedPercent: 10, resetAt: hour });
      registry.setAccounts([a1Again, rekeyed], providers); // the next re-read's list: same keys
      expect((await store.loadAccountState()).quotas.map((q) => `${q.accountId} ${q.window} ${q.usedPercent}`)).toEqual(["a1 5h 40", "a2 5h 10"]);
      await store.close();
      const again = await reopen();
      expect((await again.loadAccountState()).quotas.map((q) => `${q.accountId} ${q.window}`)).toEqual(["a1 5h", "a2 5h"]);
      await again.close();
    });

    test("a key replaced while the gateway was stopped: the next start leaves the old key's windows out; an account with the same key keeps its own", async () => {
      const clock = settableClock();
      const { store, reopen } = await backend.open(clock);
      const providers = new Map([["p", providerOf("p")]]);
      const first = new AccountRegistry(store, clock);
      first.setAccounts([account("a1", "p", { priority: 1 }), account("a2", "p", { priority: 2 })], providers);
      first.loadState(await store.loadAccountState());
      const hour = clock.now() + 3_600_000;
      first.setQuota({ accountId: "a1", window: "5h", model: "*", usedPercent: 40, resetAt: hour, updatedAt: clock.now() });
      first.setQuota({ accountId: "a2", window: "5h", model: "*", usedPercent: 99, resetAt: hour, updatedAt: clock.now() });
      first.close();
      await store.close(); // the stop writes them
      const stored = await reopen();
      const quotas = (await stored.loadAccountState()).quotas;
      expect(quotas.map((q) => `${q.accountId} ${q.window} ${q.usedPercent}`)).toEqual(["a1 5h 40", "a2 5h 99"]);
      expect(quotas.every((q) => /^[0-9a-f]{16}$/.test(q.keyHash ?? "") && !JSON.stringify(q).includes("secret"))).toBe(true); // a short hash, not the key

      // The config file now names another key for a2; the gateway starts again.
      const registry = new AccountRegistry(stored, clock);
      const rekeyed = account("a2", "p", { priority: 2, credential: { type: "api_key", apiKey: "sk-a2-a-new-key" } });
      registry.setAccounts([account("a1", "p", { priority: 1 }), rekeyed], providers);
      registry.loadState(await stored.loadAccountState());
      const eligible = () => registry.candidates("p", "m", {}).filter((c) => c.eligible).map((c) => c.account.id).sort();
      expect(eligible()).toEqual(["a1", "a2"]); // not held back by the old key's 1 % left
      expect(registry.quota.windows("a2", clock.now())).toEqual([]);
      expect(registry.quota.windows("a1", clock.now()).map((w) => w.usedPercent)).toEqual([40]);

      // Another instance still on the old key writes a window of it: this one leaves it out at its re-read.
      const behind = new AccountRegistry(stored, clock);
      behind.setAccounts([account("a1", "p", { priority: 1 }), account("a2", "p", { priority: 2 })], providers);
      behind.setQuota({ accountId: "a2", window: "7d", model: "*", usedPercent: 99, resetAt: hour, updatedAt: clock.now() });
      registry.setQuota({ accountId: "a2", window: "5h", model: "*", usedPercent: 10, resetAt: hour, updatedAt: clock.now() });
      registry.loadState(await stored.loadAccountState());
      expect(registry.quota.windows("a2", clock.now()).map((w) => `${w.window} ${w.usedPercent}`)).toEqual(["5h 10"]);
      expect(eligible()).toEqual(["a1", "a2"]);
      behind.close();
      registry.close();
      await stored.close();
    });

    test("a delete of the old key's windows the store refuses once is written (or tried) again: the windows stay gone, also after re-reads", async () => {
      const clock = settableClock();
      const { store } = await backend.open(clock);
      const lines: string[] = [];
      const registry = new AccountRegistry(store, clock, { log: (l) => void lines.push(l) });
      const providers = new Map([["p", providerOf("p")]]);
      registry.setAccounts([account("a1", "p", { priority: 1 }), account("a2", "p", { priority: 2 })], providers);
      registry.loadState(await store.loadAccountState());
      registry.setQuota({ accountId: "a2", window: "5h", model: "*", usedPercent: 99, resetAt: clock.now() + 3_600_000, updatedAt: clock.now() });
      registry.loadState(await store.loadAccountState()); // flushed to the store and read back
      const eligible = () => registry.candidates("p", "m", {}).filter((c) => c.eligible).map((c) => c.account.id).sort();
      expect(eligible()).toEqual(["a1"]);
      // The store refuses the first delete: a full disk (the embedded store throws), a serialization failure (PostgreSQL's 40001).
      const clear = store.clearQuotas.bind(store);
      let calls = 0;
      store.clearQuotas = (id: string) => {
        if (++calls > 1) return clear(id);
        if (backend.name === "sqlite") throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
        return Promise.reject(Object.assign(new Error("could not serialize access due to concurrent update"), { errno: "40001" }));
      };
      clock.advance(1_000);
      const rekeyed = account("a2", "p", { priority: 2, credential: { type: "api_key", apiKey: "sk-a2-a-new-key" } });
      registry.setAccounts([account("a1", "p", { priority: 1 }), rekeyed], providers);
      expect(eligible()).toEqual(["a1", "a2"]);
      if (backend.name === "sqlite") {
        // Not written yet: a re-read that still finds the old window keeps it out of memory.
        const st = await store.loadAccountState();
        expect(st.quotas.map((q) => q.accountId)).toEqual(["a2"]);
        registry.loadState(st);
        expect(eligible()).toEqual(["a1", "a2"]);
        expect(registry.retryWrites()).toBe(0); // before the next re-read (account-list.ts): written now
      } else await registry.stateWritesSettled(() => Date.now() + 2_000); // tried again after a short backoff
      expect(calls).toBe(2);
      const st = await store.loadAccountState();
      expect(st.quotas).toEqual([]);
      registry.loadState(st);
      expect(eligible()).toEqual(["a1", "a2"]);
      expect(lines).toEqual([]);
      expect(registry.lostStateWrites).toBe(0);
      registry.close();
      await store.close();
    });
  });
}
