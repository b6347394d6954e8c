/**
 * A subscription account given another login through the admin API (`POST /admin/api/accounts` with an
 * id that exists: `switchyard login` / `import`, the dashboard's login) may be another subscription:
 * the old login's quota windows (its 5h and weekly percentages) go, from memory and the store, so an
 * account excluded at 99 % used is not held back by a quota that is no longer its. The same login posted
 * again (same refresh token) keeps them. Until 2026-12-07 they stayed until the windows reset.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startWorld, type SubscriptionWorld } from "./helpers.ts";

let w: SubscriptionWorld;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w?.stop();
});

function post(id: string, t: { accessToken: string; refreshToken: string }) {
  return w.call("POST", "/accounts", { provider: "cc", id, origin: "login", credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 3600_000 } });
}

/** The account's quota windows as the registry and the store hold them: "window used%". */
async function windows(id: string): Promise<{ memory: string[]; store: string[] }> {
  const app = w.gw.app;
  const memory = app.registry.quota.windows(id, Date.now()).map((q) => `${q.window} ${q.usedPercent}`);
  const store = (await app.store.loadAccountState()).quotas.filter((q) => q.accountId === id).map((q) => `${q.window} ${q.usedPercent}`);
  return { memory, store };
}

test("another login drops the old login's quota windows; the same login posted again keeps them", async () => {
  const app = w.gw.app;
  const first = w.vendor.seed({ name: "quota-one", models: ["claude-opus-4-1-20250805"] });
  await post("cc-q", first);
  const reset = Date.now() + 3_600_000;
  app.registry.setQuota({ accountId: "cc-q", window: "5h", model: "*", usedPercent: 99, resetAt: reset });
  app.registry.setQuota({ accountId: "cc-q", window: "7d", model: "*", usedPercent: 40, resetAt: reset });
  expect(await windows("cc-q")).toEqual({ memory: ["5h 99", "7d 40"], store: ["5h 99", "7d 40"] });

  await post("cc-q", first); // the same login again
  expect(await windows("cc-q")).toEqual({ memory: ["5h 99", "7d 40"], store: ["5h 99", "7d 40"] });

  const second = w.vendor.seed({ name: "quota-two", models: ["claude-opus-4-1-20250805"] });
  await post("cc-q", second);
  expect(await windows("cc-q")).toEqual({ memory: [], store: [] });
});
