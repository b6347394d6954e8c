/**
 * A login, an import or a removal through this instance's own admin API clears the account's lock and
 * cooldowns (SPEC 9.3, 9.4): its live events say what happened here ("… cleared by a new login", "…
 * cleared by a new import", "… cleared: the account was removed"). They said "… cleared elsewhere", as
 * for a clear made by another instance on the same store, because the re-read after the store's write
 * dropped them as if someone else had.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AccountStateEvent, GatewayEvent } from "../../src/events/bus.ts";
import { startWorld, type SubscriptionWorld } from "./helpers.ts";

let w: SubscriptionWorld;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w?.stop();
});

/** Stores a lock and a cooldown on `id` (as a 401 and a 429 there would) and has the registry hold them. */
async function holdBack(id: string): Promise<void> {
  const app = w.gw.app;
  const now = Date.now();
  await app.store.setLock({ accountId: id, until: null, reason: "401 invalid credential", since: now });
  await app.store.setCooldown({ accountId: id, model: "claude-opus-4-1", until: now + 600_000, reason: "429 rate limited", level: 1, since: now });
  app.registry.loadState(await app.store.loadAccountState());
  const snap = app.registry.snapshot();
  expect([snap.locks.filter((l) => l.accountId === id).length, snap.cooldowns.filter((c) => c.accountId === id).length]).toEqual([1, 1]);
}

/** The account_state cooldown_end / unlock events of `id` published while `action` runs, as [change, model?, reason]. */
async function clears(id: string, action: () => Promise<unknown>): Promise<Array<[string, string | undefined, string | undefined]>> {
  const seen: AccountStateEvent[] = [];
  const off = w.gw.app.bus.subscribe((e: GatewayEvent) => {
    if (e.type === "account_state" && e.account === id && (e.change === "cooldown_end" || e.change === "unlock")) seen.push(e);
  });
  try {
    await action();
    // a re-read still on its way would publish now
    await Bun.sleep(50);
  } finally {
    off();
  }
  return seen.map((e) => [e.change, e.model, e.reason] as [string, string | undefined, string | undefined]).sort();
}

function add(id: string, origin: "login" | "import") {
  const t = w.vendor.seed({ name: id, models: ["claude-opus-4-1-20250805"] });
  return w.call("POST", "/accounts", { provider: "cc", id, origin, credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 3600_000 } });
}

describe("a lock and cooldown cleared through this instance's admin API", () => {
  test("a new login says cleared by a new login, not cleared elsewhere", async () => {
    await add("cc-lee", "login");
    await holdBack("cc-lee");
    expect(await clears("cc-lee", () => add("cc-lee", "login"))).toEqual([
      ["cooldown_end", "claude-opus-4-1", "cooldown (429 rate limited) cleared by a new login"],
      ["unlock", undefined, "lock (401 invalid credential) cleared by a new login"],
    ]);
    const snap = w.gw.app.registry.snapshot();
    expect([snap.locks.filter((l) => l.accountId === "cc-lee"), snap.cooldowns.filter((c) => c.accountId === "cc-lee")]).toEqual([[], []]);
  });

  test("an import says cleared by a new import", async () => {
    await add("cc-ivy", "import");
    await holdBack("cc-ivy");
    expect(await clears("cc-ivy", () => add("cc-ivy", "import"))).toEqual([
      ["cooldown_end", "claude-opus-4-1", "cooldown (429 rate limited) cleared by a new import"],
      ["unlock", undefined, "lock (401 invalid credential) cleared by a new import"],
    ]);
  });

  test("removing the account says its lock and cooldown went with it", async () => {
    await add("cc-rex", "login");
    await holdBack("cc-rex");
    expect(await clears("cc-rex", () => w.call("DELETE", "/accounts/cc-rex"))).toEqual([
      ["cooldown_end", "claude-opus-4-1", "cooldown (429 rate limited) cleared: the account was removed"],
      ["unlock", undefined, "lock (401 invalid credential) cleared: the account was removed"],
    ]);
  });
});
