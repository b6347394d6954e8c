/**
 * A key created with the name of a revoked key is a new key (SPEC 9.6, README "Key limits"): its
 * budgets, rpm/tpm counts and budget alerts start fresh, on the embedded store and on PostgreSQL, while
 * the usage history of that name (`usage --by key`, GET /admin/api/usage?by=key) still holds both keys'
 * requests. Before, counters and stored budget windows were keyed by name: a replacement for an
 * overspent key was refused at once ("has used its 1d budget"), and on PostgreSQL its budget alerts in
 * the same (epoch-aligned) window were claimed already by the revoked key's.
 *
 * The scenario, through the admin API as `switchyard keys create|revoke|list` and the dashboard use it:
 * `ci` (rpm 2, a 1d budget of 30 tokens; 18 tokens per request) spends its budget in two requests
 * (crossing the 0.5 alert threshold), the third is a 429 `key_budget_exceeded`; `ci` is revoked and
 * created again; the new key's request is served, GET /admin/api/keys shows its own use (18 tokens, 1
 * request this minute), the webhook gets the new key's crossing too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { keysRequiredConfig } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { instanceOnPostgres } from "../support/instance-on-postgres.ts";
import { webhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { until } from "../support/until.ts";
import { roomInWindow } from "../support/aligned-window.ts";

const ADMIN = "sy-test-reused-admin-0000000001";
const LIMITS = { rpm: 2, budgets: [{ window: "1d", tokens: 30 }] };

const yamlOf = (providerUrl: string, webhook: string) => `${keysRequiredConfig(providerUrl, ADMIN)}settings:
  alerts: { webhook: "${webhook}", quota_thresholds: [0.5] }
`;

/** One gateway under test: its URL, and a restart keeping its data (embedded store only). */
interface Target {
  url: () => string;
  restart?: () => Promise<void>;
}

const admin = (t: Target, method: string, path: string, body?: unknown) =>
  fetch(`${t.url()}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
const chat = (t: Target, key: string) =>
  fetch(`${t.url()}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "up/gpt-reuse", messages: [{ role: "user", content: "hi" }] }),
  });
const keyCi = async (t: Target) => (((await (await admin(t, "GET", "/keys")).json()) as { keys: any[] }).keys as any[]).find((k) => k.name === "ci" && k.revokedAt === undefined);

async function scenario(t: Target, hook: WebhookReceiver): Promise<void> {
  const made = await admin(t, "POST", "/keys", { name: "ci", limits: LIMITS });
  expect(made.status).toBe(201);
  const madeBody = (await made.json()) as { secret: string; createdAt: number };
  const first = madeBody.secret;
  const firstCreatedAt = madeBody.createdAt;
  expect((await chat(t, first)).status).toBe(200); // 18 of 30: crosses 0.5
  expect((await chat(t, first)).status).toBe(200); // 36 of 30
  const spent = await chat(t, first);
  expect(spent.status).toBe(429);
  const spentBody = (await spent.json()) as any;
  expect(spentBody.error.code).toBe("key_budget_exceeded");
  expect(spentBody.error.message).toStartWith('Client key "ci" has used its 1d budget of 30 tokens (36 tokens used)');
  const crossing = (g: any) => g.event === "quota_threshold" && g.subject === "key:ci" && g.detail.threshold === 0.5;
  await until(() => hook.got.filter(crossing).length === 1, 20_000, "the first key's 0.5 alert at the receiver");

  expect((await admin(t, "DELETE", "/keys/ci")).status).toBe(200);
  const again = await admin(t, "POST", "/keys", { name: "ci", limits: LIMITS });
  expect(again.status).toBe(201);
  const created = (await again.json()) as { secret: string; key: Record<string, unknown> };
  expect(Object.keys(created.key).sort()).toEqual(["limits", "name", "scopes", "source"]);
  // The revoked key stays listed beside the new one, with its own dates (newuser12a G2: the new key's row
  // replaced it, and `keys list` showed one `ci` created now): the active key first.
  const both = (((await (await admin(t, "GET", "/keys")).json()) as { keys: any[] }).keys as any[]).filter((k) => k.name === "ci");
  expect(both.map((k) => (k.revokedAt === undefined ? "active" : "revoked"))).toEqual(["active", "revoked"]);
  expect(both[1].createdAt).toBe(firstCreatedAt);
  expect(both[1].revokedAt).toBeGreaterThanOrEqual(firstCreatedAt);
  expect(both[0].createdAt).toBeGreaterThanOrEqual(both[1].revokedAt);

  // The new key is served: its budget, rpm and alerts are its own.
  // On PostgreSQL rpm counts in minutes aligned to the clock: the request and the read of its minute's use in one.
  await roomInWindow(60_000, 20_000);
  const served = await chat(t, created.secret);
  expect(served.status).toBe(200);
  await served.text();
  await until(async () => (await keyCi(t)).use.budgets[0].used === 18, 20_000, "the new key's budget use");
  const listed = await keyCi(t);
  expect(listed.id).toBeUndefined();
  expect(listed.use.budgets[0]).toMatchObject({ budget: { window: "1d", tokens: 30 }, used: 18 });
  expect(listed.use.minute.requests).toEqual({ used: 1, limit: 2 });
  await until(() => hook.got.filter(crossing).length === 2, 20_000, "the new key's 0.5 alert at the receiver");
  expect(hook.got.filter(crossing).map((g) => g.detail.used)).toEqual([18, 18]);
  expect(hook.got.every((g) => g.subjectId === undefined)).toBe(true);
  expect((await chat(t, first)).status).toBe(401); // the revoked key stays refused

  // Usage history by name: both keys' requests (2 served, 1 refused; 1 served), the new key's budget.
  await until(
    async () => {
      const rows = ((await (await admin(t, "GET", "/usage?by=key&since=1h")).json()) as { rows: any[] }).rows;
      const ci = rows.find((r) => r.group === "ci");
      return ci?.requests === 4 && ci.budgets?.[0]?.used === 18;
    },
    20_000,
    "usage by key: 4 requests of ci, the new key's 18 tokens of budget",
  );

  if (t.restart) {
    // The new key's window is persisted under its own id: after a restart it is still 18, not 36 + 18.
    await t.restart();
    expect((await keyCi(t)).use.budgets[0].used).toBe(18);
    expect((await chat(t, created.secret)).status).toBe(200); // 36 of 30 now
    const over = await chat(t, created.secret);
    expect(over.status).toBe(429);
    expect(((await over.json()) as any).error.message).toStartWith('Client key "ci" has used its 1d budget of 30 tokens (36 tokens used)');
  }
}

describe("a key created with a revoked key's name starts fresh", () => {
  describe("on the embedded store", () => {
    let gw: TestGateway;
    let fake: FakeUpstream;
    let hook: WebhookReceiver;
    beforeAll(async () => {
      hook = webhookReceiver();
      fake = await startFakeUpstream();
      fake.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream));
      gw = await startGateway(yamlOf("{{FAKE}}", hook.url), { fake, env: { UP_KEY: "sk-upstream-reused-0001" } });
    });
    afterAll(async () => {
      await gw?.stop();
      hook?.stop();
    });

    test("budget, rpm and alerts of its own; the name's usage history kept; its window survives a restart", async () => {
      const dataDir = gw.dataDir;
      await scenario(
        {
          url: () => gw.url,
          restart: async () => {
            await gw.stopGatewayOnly();
            gw = await startGateway(yamlOf("{{FAKE}}", hook.url), { fake, dataDir, env: { UP_KEY: "sk-upstream-reused-0001" } });
          },
        },
        hook,
      );
    }, 60_000);
  });

  describe("on PostgreSQL", () => {
    let hook: WebhookReceiver;
    beforeAll(() => {
      hook = webhookReceiver();
    });
    afterAll(() => hook?.stop());
    const pg = instanceOnPostgres({
      database: "reused",
      yaml: (url) => yamlOf(url, hook.url),
      env: { UP_KEY: "sk-upstream-reused-0001" },
      answer: (upstream) => upstream.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream)),
    });

    test("budget, rpm and alerts of its own (the alert claimed as the new key's); the name's usage history kept", async () => {
    // On PostgreSQL a 1d budget counts in windows aligned to the day (they end at midnight UTC): inside one,
    // or the key's use starts again from 0 under the scenario.
    await roomInWindow(86_400_000, 60_000);
      await scenario({ url: () => pg.instance.url }, hook);
    }, 160_000);
  });
});
