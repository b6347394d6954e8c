/**
 * A key budget's threshold alert after the operator changed the budget (`PATCH /admin/api/keys/{name}`,
 * what `switchyard keys set` and the Keys page's Edit limits call): the thresholds are judged against the
 * new amount. 80 % of the old budget was crossed and alerted; the budget is raised; 80 % of the new one,
 * crossed later in the same window, is alerted again (the webhook gets it, GET /admin/api/alerts lists
 * it), and the request in between, under 80 % of the new budget, raises nothing.
 *
 * Before, on PostgreSQL the second crossing was listed by the instance and never reached the webhook: the
 * alert's claim in the shared store (src/alerts/alert-claim.ts, one delivery across instances) named the
 * window and threshold but not the amount, so it was taken by the first crossing's.
 *
 * The scenario: `ci` has a 1d budget of 1,000 tokens, 400 tokens per request, `quota_thresholds: [0.8]`.
 * Two requests: 800 of 1,000, the 0.8 alert. PATCH to 2,000 tokens. A third: 1,200 of 2,000 (60 %),
 * nothing. A fourth: 1,600 of 2,000, the 0.8 alert of the 2,000-token budget.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { simpleReply, type FakeUpstream } from "../support/fake-upstream.ts";
import { keysRequiredConfig } from "../support/configs.ts";
import { gatewayOnEmbeddedStore } from "../support/gateway-on-embedded-store.ts";
import { instanceOnPostgres } from "../support/instance-on-postgres.ts";
import { webhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { until } from "../support/until.ts";
import { roomInWindow } from "../support/aligned-window.ts";

const ADMIN = "sy-test-budgetalert-admin-0000001";
const UP_ENV = { UP_KEY: "sk-upstream-budgetalert-0001" };
const yamlOf = (providerUrl: string, hookUrl: string) => `${keysRequiredConfig(providerUrl, ADMIN)}settings:
  alerts: { webhook: "${hookUrl}", quota_thresholds: [0.8] }
`;
/** 200 in + 200 out: 400 tokens a request. */
const upstreamReply = (fake: FakeUpstream) => fake.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 200, output: 200 } }, r.stream));

let hook: WebhookReceiver;
beforeAll(() => {
  hook = webhookReceiver();
});
afterAll(() => hook?.stop());

/** The scenario of the module comment against the gateway at `url`. */
async function scenario(url: string): Promise<void> {
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const made = await admin("POST", "/keys", { name: "ci", limits: { budgets: [{ window: "1d", tokens: 1000 }] } });
  expect(made.status).toBe(201);
  const chat = async () => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${made.body.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "up/gpt-budgetalert", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
  };
  const hooked = () => hook.got.filter((a) => a.subject === "key:ci").map((a) => [a.detail.threshold, a.detail.limit, a.detail.used]);
  const listed = async () => ((await admin("GET", "/alerts")).body.alerts as any[]).filter((a) => a.subject === "key:ci").map((a) => [a.detail.threshold, a.detail.limit, a.detail.used]);
  const budgetUsed = async () => ((await admin("GET", "/keys")).body.keys as any[]).find((k) => k.name === "ci")?.use?.budgets?.[0]?.used;

  await chat();
  await chat(); // 800 of 1,000
  await until(() => hooked().length === 1, 30_000, "the webhook's 0.8 alert of the 1,000-token budget");
  expect(hooked()).toEqual([[0.8, 1000, 800]]);

  const changed = await admin("PATCH", "/keys/ci", { limits: { budgets: [{ window: "1d", tokens: 2000 }] } });
  expect(changed.status).toBe(200);
  expect(changed.body.key.use.budgets[0]).toMatchObject({ budget: { window: "1d", tokens: 2000 }, used: 800 });

  await chat(); // 1,200 of 2,000: under 80 % of the new budget
  await until(async () => (await budgetUsed()) === 1200, 30_000, "the key's budget use (1,200 of 2,000)");
  await chat(); // 1,600 of 2,000: 80 % of the new budget
  await until(() => hooked().length === 2, 30_000, "the webhook's 0.8 alert of the 2,000-token budget");
  expect(hooked()).toEqual([
    [0.8, 1000, 800],
    [0.8, 2000, 1600],
  ]);
  // what this instance raised, newest first: nothing at 1,200
  expect(await listed()).toEqual([
    [0.8, 2000, 1600],
    [0.8, 1000, 800],
  ]);
}

describe("a key budget's threshold alert after the budget was raised: judged against the new budget", () => {
  describe("on the embedded store", () => {
    const embedded = gatewayOnEmbeddedStore({ yaml: (up) => yamlOf(up, hook.url), env: UP_ENV, answer: upstreamReply });
    test("80 % of the raised budget reaches the webhook again; 60 % of it raises nothing", async () => {
      hook.got.length = 0;
      await scenario(embedded.gateway.url);
    }, 120_000);
  });

  describe("on PostgreSQL", () => {
    const pg = instanceOnPostgres({ database: "budgetalert", yaml: (up) => yamlOf(up, hook.url), env: UP_ENV, answer: upstreamReply });
    test("80 % of the raised budget reaches the webhook again (its claim names the amount); 60 % of it raises nothing", async () => {
      // a 1d budget counts in windows aligned to the day (they end at midnight UTC): inside one
      await roomInWindow(86_400_000, 120_000);
      hook.got.length = 0;
      await scenario(pg.instance.url);
    }, 300_000);
  });
});
