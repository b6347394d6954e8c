/**
 * Changing a client key's limits (tryout finding D3): `PATCH /admin/api/keys/{name}` (what `switchyard
 * keys set` and the Keys page's Edit limits call) changes an active stored key's limits and tag, keeping
 * its secret, identity and the use of its limits so far. Before, there was no such route (405): the
 * only way was revoke + create, a new secret for the developer and the budget counted from 0 again.
 * On the embedded store and on PostgreSQL, where a second instance sharing the database serves the new
 * limit too.
 *
 * The scenario: `ci` (rpm 1, a 1d budget of 1,000 tokens; 900 tokens per request) serves one request and
 * is refused the next (429, its rpm); PATCH rpm 5 and a budget of 2,000: the answer and GET /keys show
 * 900 of 2,000, and the next request with the same secret is served (1,800 of 2,000). null clears a
 * limit, a tag is set and removed; a bad value, an empty change, an unknown or revoked key and a config
 * key are refused with what to do, and a refused change changes nothing. `scopes: ["admin"]` gives the
 * key the admin API (its secret lists the keys: 200, where it got 403), `scopes: null` takes it away;
 * a misspelt scope is refused. Before, `scopes` was an unknown field (400): a key's scopes could not be
 * changed. On PostgreSQL the other instance follows within seconds, as for a revoke.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { keysRequiredConfig } from "../support/configs.ts";
import { gatewayOnEmbeddedStore } from "../support/gateway-on-embedded-store.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until } from "../support/until.ts";
import { roomInWindow } from "../support/aligned-window.ts";

const ADMIN = "sy-test-keychange-admin-000000001";
const yamlOf = (providerUrl: string) => keysRequiredConfig(providerUrl, ADMIN);
const UP_ENV = { UP_KEY: "sk-upstream-keychange-0001" };
/** 450 in + 450 out: 900 tokens a request. */
const upstreamReply = (fake: FakeUpstream) => fake.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 450, output: 450 } }, r.stream));

const adminOf = (url: string) => async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const chatOf = (url: string) => async (key: string) => {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "up/gpt-keychange", messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: res.status, body: (await res.json()) as any };
};

/**
 * The scenario of the module comment against one instance; returns the key's secret. `fixedMinutes`:
 * rpm counts in fixed minutes (PostgreSQL), so the 429 and the request after the change are kept in one.
 */
async function scenario(url: string, fixedMinutes: boolean): Promise<string> {
  const admin = adminOf(url);
  const chat = chatOf(url);
  const listed = async () => ((await admin("GET", "/keys")).body.keys as any[]).filter((k) => k.name === "ci");
  const budgetUsed = async () => (await listed())[0]?.use?.budgets?.[0]?.used;

  const made = await admin("POST", "/keys", { name: "ci", tag: "team-a", limits: { rpm: 1, budgets: [{ window: "1d", tokens: 1000 }] } });
  expect(made.status).toBe(201);
  const secret = made.body.secret as string;
  const before = (await listed())[0];
  if (fixedMinutes) await roomInWindow(60_000, 30_000);
  expect((await chat(secret)).status).toBe(200); // 900 of 1,000
  const limited = await chat(secret);
  expect(limited.status).toBe(429);
  expect(limited.body.error.message).toContain("rpm");
  await until(async () => (await budgetUsed()) === 900, 20_000, "the key's budget use (900)");

  const changed = await admin("PATCH", "/keys/ci", { limits: { rpm: 5, budgets: [{ window: "1d", tokens: 2000 }] } });
  expect(changed.status).toBe(200);
  expect(changed.body.key).toMatchObject({ name: "ci", tag: "team-a", limits: { rpm: 5, budgets: [{ window: "1d", tokens: 2000 }] }, prefix: before.prefix, createdAt: before.createdAt });
  // the use so far is kept: 900 of 2,000, not 0 of 2,000
  expect(changed.body.key.use.budgets[0]).toMatchObject({ budget: { window: "1d", tokens: 2000 }, used: 900 });
  expect(changed.body.key.id).toBeUndefined();
  // the next request, with the same secret, is checked against rpm 5
  expect((await chat(secret)).status).toBe(200);
  await until(async () => (await budgetUsed()) === 1800, 20_000, "the key's budget use (1,800 of 2,000)");
  const rows = await listed();
  expect(rows).toHaveLength(1); // the same key, not a revoked one and a new one
  expect(rows[0]).toMatchObject({ limits: { rpm: 5, budgets: [{ window: "1d", tokens: 2000 }] }, prefix: before.prefix, createdAt: before.createdAt });

  // null clears a limit, a field left out stays; the tag is set and removed
  const cleared = await admin("PATCH", "/keys/ci", { limits: { rpm: null, tpm: 100_000 }, tag: null });
  expect(cleared.status).toBe(200);
  expect(cleared.body.key.limits).toEqual({ tpm: 100_000, budgets: [{ window: "1d", tokens: 2000 }] });
  expect(cleared.body.key.tag).toBeUndefined();
  expect((await admin("PATCH", "/keys/ci", { tag: "team-b", limits: { models: ["up/*"] } })).body.key).toMatchObject({ tag: "team-b", limits: { tpm: 100_000, models: ["up/*"] } });

  // refused: with what to do, and nothing changed
  const bad = await admin("PATCH", "/keys/ci", { limits: { rpm: 0 } });
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ param: "limits.rpm", type: "invalid_request_error" });
  expect(bad.body.error.message).toContain("rpm must be");
  const typo = await admin("PATCH", "/keys/ci", { limits: { rpms: 5 } });
  expect(typo.status).toBe(400);
  expect(typo.body.error.message).toContain("rpms");
  const nothing = await admin("PATCH", "/keys/ci", {});
  expect(nothing.status).toBe(400);
  expect(nothing.body.error.message).toStartWith("Nothing to change");
  const provider = await admin("PATCH", "/keys/ci", { limits: { models: ["nope/*"] } });
  expect(provider.status).toBe(400);
  expect(provider.body.error.param).toBe("limits.models[0]");
  const unknown = await admin("PATCH", "/keys/nope", { limits: { rpm: 5 } });
  expect(unknown.status).toBe(404);
  expect(unknown.body.error.message).toContain("No active key named nope");
  const config = await admin("PATCH", "/keys/admin", { limits: { rpm: 5 } });
  expect(config.status).toBe(409);
  expect(config.body.error.message).toContain("config file");
  expect((await admin("POST", "/keys", { name: "old" })).status).toBe(201);
  expect((await admin("DELETE", "/keys/old")).status).toBe(200);
  const revoked = await admin("PATCH", "/keys/old", { limits: { rpm: 5 } });
  expect(revoked.status).toBe(409);
  expect(revoked.body.error.message).toStartWith("Key old was revoked at ");
  expect((await listed())[0]).toMatchObject({ tag: "team-b", limits: { tpm: 100_000, models: ["up/*"], budgets: [{ window: "1d", tokens: 2000 }] } });

  // scopes: given, replaced; null takes them away; left out, they stay
  const keysWith = async () => (await fetch(`${url}/admin/api/keys`, { headers: { authorization: `Bearer ${secret}` } })).status;
  expect(await keysWith()).toBe(403);
  const granted = await admin("PATCH", "/keys/ci", { scopes: ["admin"] });
  expect(granted.status).toBe(200);
  expect(granted.body.key).toMatchObject({ name: "ci", scopes: ["admin"], tag: "team-b", prefix: before.prefix });
  expect(await keysWith()).toBe(200);
  expect((await admin("PATCH", "/keys/ci", { tag: "team-c" })).body.key.scopes).toEqual(["admin"]);
  const misspelt = await admin("PATCH", "/keys/ci", { scopes: ["admn"] });
  expect(misspelt.status).toBe(400);
  expect(misspelt.body.error).toMatchObject({ param: "scopes[0]", message: 'scopes[0]: unknown scope "admn": the only scope is admin' });
  expect(await keysWith()).toBe(200);
  const taken = await admin("PATCH", "/keys/ci", { scopes: null });
  expect(taken.status).toBe(200);
  expect(taken.body.key.scopes).toEqual([]);
  expect(await keysWith()).toBe(403);
  return secret;
}

describe("PATCH /admin/api/keys/{name}: new limits, the same key", () => {
  describe("on the embedded store", () => {
    const embedded = gatewayOnEmbeddedStore({ yaml: yamlOf, env: UP_ENV, answer: upstreamReply });
    test("the next request checked against the new rpm, the budget's use kept, the secret unchanged; bad changes refused", async () => {
      await scenario(embedded.gateway.url, false);
    }, 120_000);
  });

  describe("on PostgreSQL, two instances", () => {
    let pg: TestPostgres | undefined;
    let upstream: FakeUpstream | undefined;
    let a: Instance | undefined;
    let b: Instance | undefined;
    beforeAll(async () => {
      pg = await startPostgres();
      const dbUrl = await pg.createDatabase("keychange");
      upstream = await startFakeUpstream();
      upstreamReply(upstream);
      a = await startInstance({ yaml: yamlOf(upstream.url), env: UP_ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
      b = await startInstance({ yaml: yamlOf(upstream.url), env: UP_ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
    }, 240_000);
    afterAll(async () => {
      await stopInstance(a);
      await stopInstance(b);
      await upstream?.stop();
      await pg?.destroy();
    }, 60_000);
    test("the same through one instance; the other serves the new limit within seconds", async () => {
      // a 1d budget counts in windows aligned to the day (they end at midnight UTC): inside one
      await roomInWindow(86_400_000, 120_000);
      const secret = await scenario(a!.url, true);
      const admin = adminOf(a!.url);
      // the admin scope given through A: B lets the key use its admin API, then refuses it again
      const keysAtB = async () => (await fetch(`${b!.url}/admin/api/keys`, { headers: { authorization: `Bearer ${secret}` } })).status;
      // (the scenario took the scope away through A last: B follows within about a second)
      await until(async () => (await keysAtB()) === 403, 20_000, "instance B refusing the key its admin API", 200);
      expect((await admin("PATCH", "/keys/ci", { scopes: ["admin"] })).status).toBe(200);
      await until(async () => (await keysAtB()) === 200, 20_000, "instance B letting the key use its admin API", 200);
      expect((await admin("PATCH", "/keys/ci", { scopes: null })).status).toBe(200);
      await until(async () => (await keysAtB()) === 403, 20_000, "instance B refusing the key its admin API again", 200);
      // through A: rpm 1 and no budget; B, sharing the database, refuses the key over that rpm
      const chatB = chatOf(b!.url);
      await roomInWindow(60_000, 40_000);
      expect((await admin("PATCH", "/keys/ci", { limits: { rpm: 1, tpm: null, models: null, budgets: null } })).status).toBe(200);
      await until(
        async () => {
          const r = await chatB(secret);
          return r.status === 429 && String(r.body.error?.message).includes("limit of 1 request per minute (rpm)");
        },
        20_000,
        "instance B refusing the key over its new rpm of 1",
        200,
      );
      // raised through A: B serves it again, within the minute that refused it
      expect((await admin("PATCH", "/keys/ci", { limits: { rpm: 5 } })).status).toBe(200);
      await until(async () => (await chatB(secret)).status === 200, 20_000, "instance B serving the key at its new rpm of 5", 200);
    }, 300_000);
  });
});
