/**
 * A subscription account given another login through the admin API (`POST /admin/api/accounts` with an
 * id that exists: `switchyard login` / `import`, the dashboard's login) may be another subscription:
 * the old login's quota windows (its 5h and weekly percentages) go, from memory and the store, so an
 * account excluded at 99 % used is not held back by a quota that is no longer its. The same login posted
 * again (same refresh token) keeps them. Until 2026-12-07 they stayed until the windows reset.
 * The same login is the stored credential's, which a refresh that rotates the refresh token updates,
 * or, when the store refused the rotated one (it then lives in memory), the current one: until
 * 2026-12-07 (later) importing that current credential counted as another login and dropped the windows.
 * Since session 45 a login whose e-mail (or account id, or token subject) both credentials carry is told
 * by it: one re-imported from an older file, whose refresh token the gateway has since rotated away, is
 * the same login and keeps them; another e-mail drops them.
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

function post(id: string, t: { accessToken: string; refreshToken: string }, email?: string) {
  return w.call("POST", "/accounts", { provider: "cc", id, origin: "login", ...(email ? { email } : {}), credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 3600_000 } });
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

test("a refresh that rotates the refresh token updates the stored credential: importing the current login again keeps the windows", async () => {
  const app = w.gw.app;
  const first = w.vendor.seed({ name: "quota-rot", models: ["claude-opus-4-1-20250805"] });
  await post("cc-rot", first);
  const reset = Date.now() + 3_600_000;
  app.registry.setQuota({ accountId: "cc-rot", window: "5h", model: "*", usedPercent: 99, resetAt: reset });
  expect(await app.credentials.refresh(app.registry.find("cc-rot")!.account)).toBe(true);
  const stored = (await app.store.getAccount("cc-rot"))!.credential as { accessToken: string; refreshToken?: string };
  expect(stored.refreshToken).not.toBe(first.refreshToken); // rotated, and the store holds the new one
  await post("cc-rot", { accessToken: stored.accessToken, refreshToken: stored.refreshToken! });
  expect(await windows("cc-rot")).toEqual({ memory: ["5h 99"], store: ["5h 99"] });
});

test("a rotated credential the store could not take (it lives in memory): importing it is the same login, the windows stay", async () => {
  const app = w.gw.app;
  const first = w.vendor.seed({ name: "quota-mem", models: ["claude-opus-4-1-20250805"] });
  await post("cc-mem", first);
  const reset = Date.now() + 3_600_000;
  app.registry.setQuota({ accountId: "cc-mem", window: "5h", model: "*", usedPercent: 99, resetAt: reset });
  const store = app.store as { updateCredential: (...a: unknown[]) => Promise<void> };
  const update = store.updateCredential;
  store.updateCredential = async () => {
    throw new Error("disk full");
  };
  try {
    expect(await app.credentials.refresh(app.registry.find("cc-mem")!.account)).toBe(true);
  } finally {
    store.updateCredential = update;
  }
  expect(((await app.store.getAccount("cc-mem"))!.credential as { refreshToken?: string }).refreshToken).toBe(first.refreshToken); // stale
  const live = app.credentials.current(app.registry.find("cc-mem")!.account) as { accessToken: string; refreshToken?: string };
  expect(live.refreshToken).not.toBe(first.refreshToken);
  await post("cc-mem", { accessToken: live.accessToken, refreshToken: live.refreshToken! });
  expect(await windows("cc-mem")).toEqual({ memory: ["5h 99"], store: ["5h 99"] });
});

test("a login re-imported from an older file (its refresh token since rotated) is the same login by its e-mail: the windows stay; another e-mail's login drops them", async () => {
  const app = w.gw.app;
  const first = w.vendor.seed({ name: "quota-file", models: ["claude-opus-4-1-20250805"] });
  await post("cc-file", first, "Quota.User@example.test");
  const reset = Date.now() + 3_600_000;
  app.registry.setQuota({ accountId: "cc-file", window: "5h", model: "*", usedPercent: 99, resetAt: reset });
  expect(await app.credentials.refresh(app.registry.find("cc-file")!.account)).toBe(true);
  expect(((await app.store.getAccount("cc-file"))!.credential as { refreshToken?: string }).refreshToken).not.toBe(first.refreshToken); // rotated
  await post("cc-file", first, "quota.user@example.test"); // the older file: the same login, its tokens rotated away since
  expect(await windows("cc-file")).toEqual({ memory: ["5h 99"], store: ["5h 99"] });
  const other = w.vendor.seed({ name: "quota-file-other", models: ["claude-opus-4-1-20250805"] });
  await post("cc-file", other, "someone.else@example.test");
  expect(await windows("cc-file")).toEqual({ memory: [], store: [] });
});
