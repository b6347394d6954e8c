/**
 * The stored quota windows' bounds, on both backends (SPEC P-5, D-1): a window read without a reset
 * time lives a day (src/store/account-state.ts QUOTA_NO_RESET_STALE_MS) where one with a reset time
 * lives until it or 30 days; an account keeps the windows of its 512 most recently updated models
 * (QUOTA_MODELS_PER_ACCOUNT) besides `*`, the rest deleted at a read of the account state. Fixed
 * 2026-12-07: before, a window without a reset time stayed 30 days and every model's windows were kept,
 * so the rows grew with the model names clients sent to an OpenAI-compatible upstream (each answer
 * reports a window for the name asked), and memory's 512 per account kept whichever came first in the
 * store's order at a re-read.
 */
import { describe, expect, test } from "bun:test";
import { storeBackends } from "../support/store-backends.ts";
import { fakeClock } from "./helpers.ts";

const backends = storeBackends("quota_bounds");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

for (const backend of backends) {
  describe(`stored quota windows: ${backend.name}`, () => {
    test("a window without a reset time goes a day after its last update; one with a reset time stays until it", async () => {
      const clock = fakeClock();
      const t = clock.now();
      const { store: s } = await backend.open(clock);
      s.setQuota({ accountId: "a", window: "requests", model: "client-made-up", remaining: 5, updatedAt: t - DAY - 1 });
      s.setQuota({ accountId: "a", window: "tokens", model: "gpt-x", remaining: 7, updatedAt: t - DAY + HOUR });
      s.setQuota({ accountId: "a", window: "weekly", model: "*", usedPercent: 40, resetAt: t + 3 * DAY, updatedAt: t - 2 * DAY });
      const st = await s.loadAccountState();
      expect(st.quotas.map((q) => `${q.window}/${q.model}`).sort()).toEqual(["tokens/gpt-x", "weekly/*"]);
      // deleted, not only left out: a read with the clock put back two days does not bring it back
      clock.set(t - 2 * DAY + 1);
      expect((await s.loadAccountState()).quotas.map((q) => `${q.window}/${q.model}`).sort()).toEqual(["tokens/gpt-x", "weekly/*"]);
      clock.set(t + HOUR + 1);
      expect((await s.loadAccountState()).quotas.map((q) => `${q.window}/${q.model}`)).toEqual(["weekly/*"]);
      await s.close();
    });

    test("an account keeps the windows of its 512 most recently updated models besides '*'; the rest are deleted at a read", async () => {
      const clock = fakeClock();
      const t = clock.now();
      const { store: s, reopen } = await backend.open(clock);
      const resetAt = t + HOUR;
      const names = Array.from({ length: 513 }, (_, i) => `m${String(i).padStart(3, "0")}`);
      // m000 was read first in its `requests` window and last in its `tokens` one: its newest update counts
      names.forEach((model, i) => s.setQuota({ accountId: "a", window: "requests", model, remaining: i, resetAt, updatedAt: t - 10_000 + i }));
      s.setQuota({ accountId: "a", window: "tokens", model: "m000", remaining: 1, resetAt, updatedAt: t - 1 });
      // updated with m002: the tie goes to the name first in byte order
      s.setQuota({ accountId: "a", window: "requests", model: "zz-tie", remaining: 1, resetAt, updatedAt: t - 10_000 + 2 });
      s.setQuota({ accountId: "a", window: "5h", model: "*", usedPercent: 10, resetAt, updatedAt: t - 20_000 });
      for (const model of ["x1", "x2", "x3"]) s.setQuota({ accountId: "b", window: "requests", model, remaining: 3, resetAt, updatedAt: t - 30_000 });
      const expectA = ["*", ...names.filter((m) => m !== "m001")].sort();
      const models = (quotas: Array<{ accountId: string; model: string }>, account: string) => [...new Set(quotas.filter((q) => q.accountId === account).map((q) => q.model))].sort();
      const st = await s.loadAccountState();
      expect(models(st.quotas, "a")).toEqual(expectA);
      expect(models(st.quotas, "a").length).toBe(513);
      expect(st.quotas.filter((q) => q.model === "m000").map((q) => q.window).sort()).toEqual(["requests", "tokens"]);
      expect(models(st.quotas, "b")).toEqual(["x1", "x2", "x3"]);
      await s.close();
      // deleted from the store: another process reading the same database sees the same 512
      const r = await reopen();
      expect(models((await r.loadAccountState()).quotas, "a")).toEqual(expectA);
      await r.close();
    });
  });
}
