/**
 * A key budget lowered under what its window already used raises, at the change, the threshold alerts
 * it is then past (SPEC 2.3, 9.7; src/alerts/budget-change-alerts.ts), each once: not again when use
 * grows later in the window, and not those raised before the change. Raising a budget raises nothing.
 * Until 2026-12-06 a lowered budget raised nothing at all, not even its share 1, though the key's
 * requests were refused from the change on (README "Not done yet", try19).
 *
 * Thresholds [0.8, 0.95]. A stored key `dev` with a 1d budget of 1,000 tokens uses 850 (0.8 alerted);
 * `PATCH /admin/api/keys/dev` (what `switchyard keys set` and Edit limits call) lowers it to 880: 850 is
 * 0.966 of it, the 0.95 alert reaches the webhook, naming the key and the 880-token budget, and 0.8 is
 * not raised again; a 10-token request (860, 0.977) raises nothing; lowered to 800 the share 1
 * (`exhausted`) comes, 0.95 not again; its next request is refused; raised to 2,000, nothing.
 * A file key `filekey` (1,000 tokens, 850 used) lowered to 800 in the config file and reloaded: the
 * share 1 of the 800-token budget, one alert with 0.95 as passed (since 2026-12-07; before, two).
 *
 * On the embedded store and on two instances sharing PostgreSQL (one webhook: each alert reaches it
 * once; at a reload both instances raise the alerts and their claim in the store has one deliver them).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { keysRequiredConfig } from "../support/configs.ts";
import { gatewayOnEmbeddedStore } from "../support/gateway-on-embedded-store.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { webhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { until } from "../support/until.ts";
import { roomInWindow } from "../support/aligned-window.ts";

const ADMIN = "sy-test-lowered-admin-00000000001";
const FILE_KEY = "sy-test-lowered-filekey-000000001";
const UP_ENV = { UP_KEY: "sk-upstream-lowered-0000000001" };
/** The config: the file key's 1d budget is `fileBudget` tokens. */
const yamlOf = (providerUrl: string, hookUrl: string, fileBudget: number) => `${keysRequiredConfig(providerUrl, ADMIN)}  - { name: filekey, key: ${FILE_KEY}, limits: { budgets: [{ window: 1d, tokens: ${fileBudget} }] } }
settings:
  alerts: { webhook: "${hookUrl}", quota_thresholds: [0.8, 0.95] }
`;
/** Tokens the next reply reports (half input, half output). */
let replyTokens = 850;
const upstreamReply = (fake: FakeUpstream) => fake.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: replyTokens / 2, output: replyTokens / 2 } }, r.stream));

let hook: WebhookReceiver;
beforeAll(() => {
  hook = webhookReceiver();
});
afterAll(() => hook?.stop());

const adminAt = (url: string) => async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};

/**
 * A Chat request with `secret` reporting `tokens` tokens: its status, or `budget` for a 429 of the key's
 * budget. A 429 that asks for a retry within seconds (the shared counters' share being refilled) is retried.
 */
async function chat(url: string, secret: string, tokens: number): Promise<number | "budget"> {
  replyTokens = tokens;
  const end = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "up/gpt-lowered", messages: [{ role: "user", content: "hi" }] }),
    });
    const body = await res.text();
    if (res.status === 429 && body.includes("key_budget_exceeded")) return "budget";
    if (res.status !== 429 || Date.now() > end) return res.status;
    await Bun.sleep(Number(res.headers.get("retry-after") ?? "1") * 1000);
  }
}

/** [threshold, limit, used, exhausted] of each alert of `subject` the webhook got (up to 4 are delivered at once: sorted by limit, then threshold). */
const hooked = (subject: string) =>
  hook.got
    .filter((a) => a.subject === subject)
    .map((a) => [a.detail.threshold, a.detail.limit, a.detail.used, a.detail.exhausted === true])
    .sort((x, y) => y[1] - x[1] || x[0] - y[0]);

/** The PATCH scenario of the module comment against the gateway at `url`. */
async function lowerThroughAdmin(url: string): Promise<void> {
  const admin = adminAt(url);
  const made = await admin("POST", "/keys", { name: "dev", limits: { budgets: [{ window: "1d", tokens: 1000 }] } });
  expect(made.status).toBe(201);
  const used = async () => ((await admin("GET", "/keys")).body.keys as any[]).find((k) => k.name === "dev")?.use?.budgets?.[0]?.used;
  const listed = async () => ((await admin("GET", "/alerts")).body.alerts as any[]).filter((a) => a.subject === "key:dev").map((a) => [a.detail.threshold, a.detail.limit]);

  expect(await chat(url, made.body.secret, 850)).toBe(200);
  await until(() => hooked("key:dev").length === 1, 30_000, "the 0.8 alert of the 1,000-token budget");
  await until(async () => (await used()) === 850, 30_000, "the key's use (850)");

  // lowered to 880: 850 is 0.966 of it
  const to880 = await admin("PATCH", "/keys/dev", { limits: { budgets: [{ window: "1d", tokens: 880 }] } });
  expect(to880.status).toBe(200);
  await until(() => hooked("key:dev").length === 2, 15_000, "the 0.95 alert of the budget lowered to 880 tokens");
  const alert = hook.got.find((a) => a.subject === "key:dev" && a.detail.limit === 880);
  expect(alert).toMatchObject({ event: "quota_threshold", subject: "key:dev", detail: { kind: "key_budget", window: "1d", unit: "tokens", limit: 880, used: 850, threshold: 0.95 } });

  // 860 of 880 (0.977): past no threshold it was not already past
  expect(await chat(url, made.body.secret, 10)).toBe(200);
  await until(async () => (await used()) === 860, 30_000, "the key's use (860)");

  // lowered to 800: used up (the share 1), 0.95 not again
  const to800 = await admin("PATCH", "/keys/dev", { limits: { budgets: [{ window: "1d", tokens: 800 }] } });
  expect(to800.status).toBe(200);
  await until(() => hooked("key:dev").length === 3, 15_000, "the share 1 of the budget lowered to 800 tokens");
  expect(await chat(url, made.body.secret, 10)).toBe("budget");

  // raised to 2,000: nothing; nor does a request under 80 % of it
  const to2000 = await admin("PATCH", "/keys/dev", { limits: { budgets: [{ window: "1d", tokens: 2000 }] } });
  expect(to2000.status).toBe(200);
  expect(await chat(url, made.body.secret, 10)).toBe(200);
  await until(async () => (await used()) === 870, 30_000, "the key's use (870)");
  await Bun.sleep(1500); // a late alert would have reached the webhook by now
  expect(hooked("key:dev")).toEqual([
    [0.8, 1000, 850, false],
    [0.95, 880, 850, false],
    [1, 800, 860, true],
  ]);
  expect(await listed()).toEqual([
    [1, 800],
    [0.95, 880],
    [0.8, 1000],
  ]);
}

/** The file key of the module comment: 850 used of 1,000, the file changed to 800 and reloaded on each of `gateways`. */
async function lowerInFile(gateways: Array<{ url: string; configPath: string }>, hookUrl: string, providerUrl: string): Promise<void> {
  const url = gateways[0]!.url;
  expect(await chat(url, FILE_KEY, 850)).toBe(200);
  await until(() => hooked("key:filekey").length === 1, 30_000, "the 0.8 alert of the file key's 1,000-token budget");
  const admin = adminAt(url);
  await until(async () => ((await admin("GET", "/keys")).body.keys as any[]).find((k) => k.name === "filekey")?.use?.budgets?.[0]?.used === 850, 30_000, "the file key's use (850)");
  for (const g of gateways) {
    writeFileSync(g.configPath, yamlOf(providerUrl, hookUrl, 800));
    expect((await adminAt(g.url)("POST", "/config/reload")).status).toBe(200);
  }
  await until(() => hooked("key:filekey").length >= 2, 15_000, "the share 1 of the file key's budget lowered to 800 tokens");
  await Bun.sleep(1500); // a second delivery, or a 0.95 of its own, would have reached the webhook by now
  expect(hooked("key:filekey")).toEqual([
    [0.8, 1000, 850, false],
    [1, 800, 850, true],
  ]);
  expect(hook.got.find((a) => a.subject === "key:filekey" && a.detail.limit === 800)!.detail.passed).toEqual([0.95]);
  expect(await chat(url, FILE_KEY, 10)).toBe("budget");
}

describe("a key budget lowered under its window's use raises the thresholds it is then past, once", () => {
  describe("on the embedded store", () => {
    const embedded = gatewayOnEmbeddedStore({ yaml: (up) => yamlOf(up, hook.url, 1000), env: UP_ENV, answer: upstreamReply });
    test("PATCH /admin/api/keys/{name}: lowered, 0.95 then the share 1 reach the webhook; a later request and a raise add nothing", async () => {
      hook.got.length = 0;
      await lowerThroughAdmin(embedded.gateway.url);
    }, 120_000);
    test("a file key lowered in the config file: its reload raises the share 1, 0.95 passed with it (one alert)", async () => {
      hook.got.length = 0;
      const gw = embedded.gateway;
      await lowerInFile([{ url: gw.url, configPath: gw.configPath }], hook.url, gw.fake.url);
    }, 120_000);
  });

  describe("on two instances sharing PostgreSQL", () => {
    let pg: TestPostgres;
    let upstream: FakeUpstream;
    let a: Instance;
    let b: Instance;
    beforeAll(async () => {
      pg = await startPostgres();
      const dbUrl = await pg.createDatabase("lowered");
      upstream = await startFakeUpstream();
      upstreamReply(upstream);
      [a, b] = await Promise.all([0, 1].map(() => startInstance({ yaml: yamlOf(upstream.url, hook.url, 1000), env: UP_ENV, args: ["--database", dbUrl], timeoutMs: 90_000 })));
    }, 180_000);
    afterAll(async () => {
      for (const i of [a, b]) if (i) await stopInstance(i);
      await upstream?.stop();
      await pg?.destroy();
    }, 60_000);
    test("PATCH on one instance: each alert reaches the webhook once", async () => {
      // a 1d budget counts in windows aligned to the day (they end at midnight UTC): inside one
      await roomInWindow(86_400_000, 120_000);
      hook.got.length = 0;
      await lowerThroughAdmin(a.url);
    }, 300_000);
    test("a file key lowered and reloaded on both instances: each alert reaches the webhook once (its claim)", async () => {
      await roomInWindow(86_400_000, 120_000);
      hook.got.length = 0;
      await lowerInFile([a, b], hook.url, upstream.url);
    }, 300_000);
  });
});
