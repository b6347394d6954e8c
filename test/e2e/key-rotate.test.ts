/**
 * Rotating a client key (newuser12a G1): `POST /admin/api/keys/{name}/rotate` (what `switchyard keys
 * rotate NAME [--grace D]` calls) gives the key a new secret and keeps its identity, limits and their
 * use; the old secret works for the grace period, then not. Before, the only way was revoke + create:
 * the key's budget use started again from 0, its limits had to be typed again, and the old secret was
 * refused before the new one existed. On the embedded store and on PostgreSQL.
 *
 * The scenario: `ci` (rpm 10, a 1d budget of 50 tokens; 18 tokens per request) serves one request; it is
 * rotated with a 10 min grace: both secrets are served and count in the same budget (36 used, not 18);
 * rotated again with no grace: the secrets before are refused at once, the newest served, and the budget
 * is spent (54 of 50) so the next is refused as such. Unknown names, config keys and a bad grace are
 * refused with what to do.
 */
import { describe, expect, test } from "bun:test";
import { simpleReply, type FakeUpstream } from "../support/fake-upstream.ts";
import { keysRequiredConfig } from "../support/configs.ts";
import { gatewayOnEmbeddedStore } from "../support/gateway-on-embedded-store.ts";
import { instanceOnPostgres } from "../support/instance-on-postgres.ts";
import { until } from "../support/until.ts";
import { roomInWindow } from "../support/aligned-window.ts";

const ADMIN = "sy-test-rotate-admin-00000000001";
const LIMITS = { rpm: 10, budgets: [{ window: "1d", tokens: 50 }] };

const yamlOf = (providerUrl: string) => keysRequiredConfig(providerUrl, ADMIN);

async function scenario(url: string): Promise<void> {
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const chat = async (key: string) => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "up/gpt-rotate", messages: [{ role: "user", content: "hi" }] }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const listed = async () => (((await (await admin("GET", "/keys")).json()) as { keys: any[] }).keys as any[]).filter((k) => k.name === "ci");
  const budgetUsed = async () => (await listed())[0]?.use?.budgets?.[0]?.used;

  const made = await admin("POST", "/keys", { name: "ci", limits: LIMITS });
  expect(made.status).toBe(201);
  const first = ((await made.json()) as { secret: string }).secret;
  expect((await chat(first)).status).toBe(200); // 18 of 50

  const r1 = await admin("POST", "/keys/ci/rotate", { grace: "10m" });
  expect(r1.status).toBe(200);
  const rot1 = (await r1.json()) as { secret: string; key: Record<string, unknown>; previousUntil: number };
  expect(rot1.secret).toMatch(/^sy-/);
  expect(rot1.secret).not.toBe(first);
  expect(rot1.key).toMatchObject({ name: "ci", limits: LIMITS });
  expect(rot1.previousUntil).toBeGreaterThan(Date.now() + 9 * 60_000);
  // Both secrets are the same key during the grace period: one budget.
  expect((await chat(rot1.secret)).status).toBe(200); // 36
  expect((await chat(first)).status).toBe(200); // the old secret still accepted: 54 of 50
  await until(async () => (await budgetUsed()) === 54, 20_000, "the key's budget use across both secrets (54)");
  const rows = await listed();
  expect(rows).toHaveLength(1); // one key, not a revoked one and a new one
  expect(rows[0].revokedAt).toBeUndefined();
  expect(rows[0].limits).toEqual(LIMITS);
  expect(rows[0].previousUntil).toBe(rot1.previousUntil);

  // Rotated again without grace: every earlier secret is refused at once; the budget stays spent.
  const r2 = await admin("POST", "/keys/ci/rotate");
  expect(r2.status).toBe(200);
  const rot2 = (await r2.json()) as { secret: string; previousUntil?: number };
  expect(rot2.previousUntil).toBeUndefined();
  expect((await chat(first)).status).toBe(401);
  expect((await chat(rot1.secret)).status).toBe(401);
  const spent = await chat(rot2.secret);
  expect(spent.status).toBe(429);
  expect(spent.body.error.message).toStartWith('Client key "ci" has used its 1d budget of 50 tokens (54 tokens used)');
  expect((await listed())[0].previousUntil).toBeUndefined();

  // What cannot be rotated says why.
  const unknown = await admin("POST", "/keys/nope/rotate");
  expect(unknown.status).toBe(404);
  expect(((await unknown.json()) as any).error.message).toContain("No active key named nope");
  const config = await admin("POST", "/keys/admin/rotate");
  expect(config.status).toBe(409);
  expect(((await config.json()) as any).error.message).toContain("config file");
  const bad = await admin("POST", "/keys/ci/rotate", { grace: "ten minutes" });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as any).error.message).toContain("grace must be 0 or look like 30s, 10m, 24h or 7d");
  expect((await chat(rot2.secret)).status).toBe(429); // a refused rotation changed nothing
}

const upstreamReply = (fake: FakeUpstream) => fake.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream));

describe("keys rotate: a new secret, the same key", () => {
  describe("on the embedded store", () => {
    const embedded = gatewayOnEmbeddedStore({ yaml: yamlOf, env: { UP_KEY: "sk-upstream-rotate-0001" }, answer: upstreamReply });
    test("limits and their use kept; the old secret served during the grace period, refused after a rotation without one", async () => {
      await scenario(embedded.gateway.url);
    }, 60_000);
  });

  describe("on PostgreSQL", () => {
    const pg = instanceOnPostgres({ database: "rotate", yaml: yamlOf, env: { UP_KEY: "sk-upstream-rotate-0001" }, answer: upstreamReply });
    test("the same, the shared counters keeping the key's use", async () => {
    // On PostgreSQL a 1d budget counts in windows aligned to the day (they end at midnight UTC): inside one,
    // or the key's use starts again from 0 under the scenario.
    await roomInWindow(86_400_000, 60_000);
      await scenario(pg.instance.url);
    }, 150_000);
  });
});
