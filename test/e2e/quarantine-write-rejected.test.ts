/**
 * A gateway whose store rejects a credential quarantine (SPEC 6.3; here a SQLite trigger refusing the
 * insert, as a constraint or a policy would): the operator reads an `error` line per quarantine naming the account
 * and the store's message (no token, no fingerprint), `switchyard_store_dropped_total` counts it, and
 * no "credential quarantined" line claims the quarantine holds. Until 2026-12-07 an empty catch
 * (src/accounts/credentials.ts `quarantine`) dropped it without a line or a count. In process, the
 * fake OAuth vendor and upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { claudeCodePools } from "../oauth/fake-oauth.ts";
import { startWorld, until, type SubscriptionWorld } from "../oauth/helpers.ts";

const POOL = (vendorUrl: string) => claudeCodePools(vendorUrl, "ccq");

let w: SubscriptionWorld;
beforeAll(async () => {
  w = await startWorld(POOL);
});
afterAll(async () => {
  await w?.stop();
});

const dropped = async () => Number(/^switchyard_store_dropped_total (\d+)$/m.exec(await (await fetch(`${w.gw.url}/metrics`)).text())?.[1]);

test("a quarantine the store rejects: an error line per write without the token, each counted in switchyard_store_dropped_total", async () => {
  const db = new Database(join(w.gw.dataDir, "switchyard.db"));
  try {
    db.run("CREATE TRIGGER refuse_quarantine BEFORE INSERT ON quarantined_credentials BEGIN SELECT RAISE(ABORT, 'quarantines are written by the operator only'); END");
  } finally {
    db.close();
  }
  const dead = w.vendor.seed({ name: "gone", models: ["claude-z"] });
  w.vendor.revokeAccess(dead.accessToken);
  w.vendor.revokeRefresh(dead.refreshToken);
  await w.call("POST", "/accounts", { provider: "ccq", id: "ccq-1", credential: { type: "oauth", access_token: dead.accessToken, refresh_token: dead.refreshToken, expires_at: Date.now() + 3600_000 } });
  expect(await dropped()).toBe(0);
  const res = await fetch(`${w.gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "ccq/claude-z", max_tokens: 30, messages: [{ role: "user", content: "hi" }] }) });
  expect(res.status).toBeGreaterThanOrEqual(400);
  const lines = () => w.gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
  const rejected = () => lines().filter((l) => String(l.msg).startsWith("the store rejected a credential quarantine"));
  // Two writes, both rejected: the refresh's (its token refused) and the failed request's (credentials.ts
  // `failure`), one line each, each counted.
  await until(() => rejected().length === 2, 5000);
  expect(rejected()).toEqual([
    expect.objectContaining({ level: "error", account: "ccq-1", reason: expect.stringContaining("invalid_grant"), error: "quarantines are written by the operator only" }),
    expect.objectContaining({ level: "error", account: "ccq-1", reason: expect.stringContaining("invalid_grant"), error: "quarantines are written by the operator only" }),
  ]);
  expect(lines().some((l) => l.msg === "credential quarantined until a new login or import")).toBe(false);
  const all = w.gw.logs.join("\n");
  expect(all).not.toContain(dead.accessToken);
  expect(all).not.toContain(dead.refreshToken);
  expect(await dropped()).toBe(2);
});
