/**
 * Alerts (SPEC 9.7) through the real gateway: a local webhook receiver gets each event once, as
 * `{event, at, subject, detail}` with no secret — key budget thresholds, an account's quota window
 * crossing a share (from the provider's rate-limit headers), an account locked by a 402 — and the same
 * events reach GET /admin/api/events. A dead webhook does not slow requests down (p50 latency with and
 * without one, compared generously: a behaviour check, not a benchmark).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import { webhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";

/** Waits for `cond` (the test's own timeout bounds the wait: a loaded machine decides how long it takes). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await Bun.sleep(10);
}

const BUDGET_KEY = "sy-test-alerts-budget-000001";

describe("webhook deliveries from the gateway", () => {
  let gw: TestGateway;
  let hook: WebhookReceiver;
  /** Alerts published on the gateway's bus (each is delivered to the receiver once). */
  let published = 0;
  beforeAll(async () => {
    hook = webhookReceiver();
    gw = await startGateway(
      `${DEFAULT_YAML}
keys:
  - { name: b, key: ${BUDGET_KEY}, limits: { budgets: [{ window: 1d, tokens: 100 }] } }
settings:
  alerts: { webhook: env:HOOK, quota_thresholds: [0.5, 0.9] }
`,
      { env: { HOOK: hook.url } },
    );
    gw.app.bus.subscribe(() => void published++, ["alert"]);
  });
  afterAll(async () => {
    await gw?.stop();
    hook?.stop();
  });

  const events = () => hook.received.map((g) => g.body);
  /** Every alert the gateway has published on its bus so far has reached the receiver: nothing is on its way. */
  const allDelivered = () => hook.received.length === published && gw.app.webhook.delivered === published;

  test("a key budget: 0.5 is crossed by the 3rd request (54 of 100 tokens), 0.9 by the 5th (90), each once", async () => {
    const client = new OpenAI({ apiKey: BUDGET_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 5; i++) await client.chat.completions.create({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] });
    await until(() => events().filter((e) => e.subject === "key:b").length === 2);
    const got = events().filter((e) => e.subject === "key:b");
    expect(got.map((e) => [e.event, e.detail.threshold, e.detail.used])).toEqual([
      ["quota_threshold", 0.5, 54],
      ["quota_threshold", 0.9, 90],
    ]);
    expect(Object.keys(got[0])).toEqual(["event", "at", "at_ms", "subject", "detail"]);
    expect(got[0].detail).toMatchObject({ kind: "key_budget", window: "1d", unit: "tokens", limit: 100 });
    expect(Date.parse(got[0].at)).toBeGreaterThan(Date.now() - 60_000);
    expect(hook.received[0]!.headers["content-type"]).toBe("application/json");
  });

  test("the budget used up (the 6th request: 108 of 100 tokens): an alert of its own, the share 1 with exhausted, once, though 1 is not configured; the next request is refused and raises nothing", async () => {
    const client = new OpenAI({ apiKey: BUDGET_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] });
    await until(() => events().filter((e) => e.subject === "key:b").length === 3);
    const refused = await client.chat.completions.create({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(refused.status).toBe(429);
    await until(allDelivered);
    const got = events().filter((e) => e.subject === "key:b");
    expect(got.map((e) => [e.event, e.detail.threshold, e.detail.used, e.detail.exhausted ?? null])).toEqual([
      ["quota_threshold", 0.5, 54, null],
      ["quota_threshold", 0.9, 90, null],
      ["quota_threshold", 1, 108, true],
    ]);
    // the reset it names is the one the refusal names
    expect(refused.error.message).toContain(`(at ${got[2].detail.resets_at.replace(/\.000Z$/, "Z")})`);
    const recent = (await (await fetch(`${gw.url}/admin/api/alerts`)).json()) as any;
    expect(recent.alerts[0]).toMatchObject({ event: "quota_threshold", subject: "key:b", detail: { threshold: 1, exhausted: true } });
  });

  test("an account's quota window from the provider's rate-limit headers: 0.5 and 0.9 crossed at one reading, raised once as 0.9 (0.5 passed with it)", async () => {
    const reset = new Date(Date.now() + 3_600_000).toISOString();
    const headers = { "anthropic-ratelimit-requests-limit": "100", "anthropic-ratelimit-requests-remaining": "8", "anthropic-ratelimit-requests-reset": reset };
    gw.fake.handle((req) => (req.format === "anthropic-messages" ? { headers, json: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } } : undefined));
    const client = new Anthropic({ apiKey: "placeholder", baseURL: gw.url, maxRetries: 0 });
    for (let i = 0; i < 2; i++) await client.messages.create({ model: "anth/claude-test", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    gw.fake.handle(undefined);
    // Account quota windows are compared every 5 s; the test compares now, twice (the second: nothing new).
    gw.app.settle();
    gw.app.alerts.scanQuotas();
    gw.app.alerts.scanQuotas();
    await until(allDelivered);
    const got = events().filter((e) => e.subject === "account:anth-1");
    expect(got.map((e) => [e.event, e.detail.window, e.detail.threshold, e.detail.used_share, e.detail.passed])).toEqual([["quota_threshold", "requests", 0.9, 0.92, [0.5]]]);
  });

  test("a 402 locks the account: account_locked once, no credential in the payload; the same alert on /admin/api/events", async () => {
    const stream = await fetch(`${gw.url}/admin/api/events?types=alert`, { headers: { accept: "text/event-stream" } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let sse = "";
    const pump = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        sse += new TextDecoder().decode(value);
      }
    })();
    gw.fake.enqueue({ status: 402, json: { error: { message: "Payment required for sk-fake-upstream-secret", type: "billing_error", code: "payment_required" } } });
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }) });
    expect(res.status).toBeGreaterThanOrEqual(400);
    await until(() => events().some((e) => e.event === "account_locked"));
    await until(() => sse.includes("account_locked"));
    await reader.cancel();
    await pump.catch(() => {});
    await until(allDelivered);
    const locked = events().filter((e) => e.event === "account_locked");
    expect(locked).toHaveLength(1);
    expect(locked[0].subject).toBe("account:oai-1");
    expect(typeof locked[0].detail.reason).toBe("string");
    expect(JSON.stringify(hook.received)).not.toContain("sk-fake-upstream-secret");
    expect(sse).not.toContain("sk-fake-upstream-secret");
    // the webhook's time as the event stream and GET /admin/api/alerts give it (ms), beside the ISO `at`
    const streamed = sse.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6))).find((e) => e.event === "account_locked");
    const listed = ((await (await fetch(`${gw.url}/admin/api/alerts`)).json()) as any).alerts.find((a: any) => a.event === "account_locked");
    expect([locked[0].at_ms, Date.parse(locked[0].at)]).toEqual([streamed.at, streamed.at]);
    expect(listed.at).toBe(streamed.at);
    // every event arrived once
    const ids = events().map((e) => JSON.stringify([e.event, e.subject, e.detail.threshold ?? null, e.detail.window ?? null]));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("a dead webhook does not slow requests", () => {
  // Every request crosses one of 100 thresholds of its key's budget, so every request raises an alert.
  const thresholds = Array.from({ length: 100 }, (_, i) => (i + 1) / 100);
  const yaml = (hook: boolean) => `${DEFAULT_YAML}
keys:
  - { name: b, key: ${BUDGET_KEY}, limits: { budgets: [{ window: 1d, tokens: 1800 }] } }
settings:
  alerts: { ${hook ? "webhook: env:HOOK, " : ""}quota_thresholds: [${thresholds.join(", ")}] }
`;

  /**
   * p50 of 40 requests to each gateway, interleaved (one to `a`, one to `b`, …) so that a change of the
   * machine's load during the run weighs on both alike.
   */
  async function p50s(a: TestGateway, b: TestGateway): Promise<[number, number]> {
    const clients = [a, b].map((gw) => new OpenAI({ apiKey: BUDGET_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 }));
    const times: number[][] = [[], []];
    for (let i = 0; i < 40; i++) {
      for (const k of [0, 1]) {
        const t = performance.now();
        await clients[k]!.chat.completions.create({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] });
        times[k]!.push(performance.now() - t);
      }
    }
    const p50 = (xs: number[]) => xs.sort((x, y) => x - y)[20]!;
    return [p50(times[0]!), p50(times[1]!)];
  }

  test("p50 with a webhook that never answers stays close to p50 without a webhook", async () => {
    // accepts connections, never answers
    const dead = webhookReceiver({ answer: () => new Promise<number>(() => {}) });
    const without = await startGateway(yaml(false));
    const withHook = await startGateway(yaml(true), { env: { HOOK: dead.url } });
    try {
      await p50s(without, withHook); // warm-up of the SDK and the process (80 of each key's 100 requests in all)
      const [base, slowed] = await p50s(without, withHook);
      // the alerts were raised and are stuck behind the dead webhook
      expect(dead.hits).toBeGreaterThanOrEqual(1);
      expect(withHook.app.webhook.delivered).toBe(0);
      expect(withHook.app.webhook.pending()).toBeGreaterThan(10);
      expect(slowed).toBeLessThan(base * 3 + 25);
    } finally {
      await without.stop();
      await withHook.stop();
      dead.stop();
    }
  }, 60_000);
});

describe("fixing a hung webhook's URL (newuser15's tryout, N5)", () => {
  test("the alert already in delivery goes to the corrected URL after a reload; settings show the URL in force with its query redacted", async () => {
    // accepts connections, never answers (a hung service behind a load balancer)
    const hung = webhookReceiver({ answer: () => new Promise<number>(() => {}), path: "/hooks/alerts?token=sy-webhook-query-secret" });
    const good = webhookReceiver();
    const hungUrl = hung.url;
    const gw = await startGateway(`${DEFAULT_YAML}
keys:
  - { name: b, key: ${BUDGET_KEY}, limits: { budgets: [{ window: 1d, tokens: 20 }] } }
settings:
  alerts: { webhook: "${hungUrl}", quota_thresholds: [0.5] }
`);
    try {
      const client = new OpenAI({ apiKey: BUDGET_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      await client.chat.completions.create({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] });
      await until(() => hung.hits >= 1);
      const shown = async () => ((await (await fetch(`${gw.url}/admin/api/settings`)).json()) as any).settings.alerts.webhook;
      const before = await shown();
      const sha = (u: string) => new Bun.CryptoHasher("sha256").update(u).digest("hex").slice(0, 8);
      expect(before).toBe(`http://127.0.0.1:${new URL(hungUrl).port}/… (sha256 ${sha(hungUrl)})`);
      // the operator fixes the URL in the file and reloads while the alert is being delivered
      const { readFileSync, writeFileSync } = await import("node:fs");
      writeFileSync(gw.configPath, readFileSync(gw.configPath, "utf8").replace(hungUrl, good.url));
      const reload = await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST" });
      expect(reload.status).toBe(200);
      expect(await shown()).toBe(`${new URL(good.url).protocol}//${new URL(good.url).host}/… (sha256 ${sha(good.url)})`);
      const t = Date.now();
      await until(() => gw.app.webhook.delivered === 1);
      // re-aimed within a poll of the URL (250 ms) and the first backoff, not after the old URL's tries
      expect(Date.now() - t).toBeLessThan(5_000);
      expect(good.received[0]!.body).toMatchObject({ event: "quota_threshold", subject: "key:b", detail: { threshold: 0.5 } });
      expect(good.received).toHaveLength(1);
      expect(gw.app.webhook.dropped).toBe(0);
      expect(JSON.stringify(await (await fetch(`${gw.url}/admin/api/settings`)).json())).not.toContain("sy-webhook-query-secret");
    } finally {
      await gw.stop();
      hung.stop();
      good.stop();
    }
  }, 20_000);
});
