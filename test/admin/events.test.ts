/**
 * `GET /admin/api/events` (SPEC 9.3, 9.4) through the real gateway: a request's `request_finished`
 * event, a 429's cooldown start and its end, client disconnects unsubscribing, the `types` filter;
 * and the stream's bounded queue (a reader that does not read is dropped, the publisher never waits).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventStream } from "../../src/admin/events-stream.ts";
import { EventBus } from "../../src/events/bus.ts";
import { openEvents } from "../support/admin-events.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"], ["q", "openai-compatible"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
  - id: a2
    provider: p
    api_key: env:KEY_A2
`;
const ENV = { KEY_A1: "sk-test-account-one", KEY_A2: "sk-test-account-two" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV });
});
afterAll(async () => {
  await gw?.stop();
});

const messages = (model: string) =>
  fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });

describe("GET /admin/api/events", () => {
  test("says hello, then a request_finished event for a request, with its route id and usage", async () => {
    const events = await openEvents(gw.url);
    try {
      const hello = await events.waitFor((e) => e.event === "hello");
      expect(hello.data.heartbeatMs).toBe(15000);
      const res = await messages("p/claude-x");
      expect(res.status).toBe(200);
      await res.text();
      const routeId = res.headers.get("x-switchyard-route-id");
      const e = await events.waitFor((x) => x.event === "request_finished" && x.data.routeId === routeId);
      expect(e.id).toMatch(/^\d+$/);
      expect(e.data).toMatchObject({
        type: "request_finished",
        routeId,
        requestId: res.headers.get("x-request-id"),
        model: "p/claude-x",
        served: "p/claude-x",
        provider: "p",
        outcome: "ok",
        status: 200,
        attempts: 1,
        fallback: false,
      });
      expect(["a1", "a2"]).toContain(e.data.account);
      expect(typeof e.data.latencyMs).toBe("number");
      expect(e.data.inputTokens).toBeGreaterThan(0);
    } finally {
      events.close();
    }
  });

  test("a 429 with Retry-After publishes cooldown_start with its end, then cooldown_end when it runs out", async () => {
    const events = await openEvents(gw.url, "?types=account_state");
    try {
      await events.waitFor((e) => e.event === "hello");
      // Both accounts answer 429 asking to wait one second.
      const limited = {
        status: 429,
        headers: { "retry-after": "1" },
        json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited, retry later" } },
      };
      gw.fake.enqueue(limited, limited);
      const before = Date.now();
      const res = await messages("p/claude-cool");
      expect(res.status).toBe(429);
      await res.text();
      const start = await events.waitFor((e) => e.data.change === "cooldown_start" && e.data.model === "claude-cool");
      expect(start.event).toBe("account_state");
      expect(start.data.provider).toBe("p");
      expect(["a1", "a2"]).toContain(start.data.account);
      expect(start.data.until).toBeGreaterThanOrEqual(before + 900);
      expect(start.data.reason).toBeString();
      // The countdown the dashboard shows ends with an event, without a request.
      const end = await events.waitFor((e) => e.data.change === "cooldown_end" && e.data.account === start.data.account && e.data.model === "claude-cool", 10_000);
      expect(end.data.at).toBeGreaterThanOrEqual(start.data.until);
      // The filter kept other types out.
      expect(events.events.filter((e) => e.event === "request_finished")).toEqual([]);
    } finally {
      events.close();
    }
  });

  test("a client that disconnects is unsubscribed", async () => {
    // The earlier tests' streams were closed by their clients.
    for (let i = 0; i < 100 && gw.app.bus.wants("request_finished"); i++) await Bun.sleep(20);
    expect(gw.app.bus.wants("request_finished")).toBe(false);
    const events = await openEvents(gw.url);
    await events.waitFor((e) => e.event === "hello");
    expect(gw.app.bus.wants("request_finished")).toBe(true);
    events.close();
    for (let i = 0; i < 100 && gw.app.bus.wants("request_finished"); i++) await Bun.sleep(20);
    expect(gw.app.bus.wants("request_finished")).toBe(false);
  });

  test("an unknown event type in the filter is a 400 naming the parameter", async () => {
    const res = await fetch(`${gw.url}/admin/api/events?types=nope`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.param).toBe("types");
    expect(body.error.message).toContain("request_finished");
  });
});

describe("the event stream's bounded queue", () => {
  test("a reader that does not read is dropped with a final event; publishing never waits", async () => {
    const bus = new EventBus();
    const res = eventStream(bus, { maxQueuedBytes: 4096, heartbeatMs: 60_000 });
    expect(bus.active).toBe(true);
    const big = { type: "alert" as const, event: "quota_threshold", at: 1, subject: "account:a1", detail: { pad: "x".repeat(500) } };
    for (let i = 0; i < 50; i++) bus.publish(big);
    // Dropped while ~8 frames were queued: unsubscribed at once.
    expect(bus.active).toBe(false);
    const text = await res.text();
    const frames = text.split("\n\n").filter((f) => f.trim() !== "");
    expect(frames[0]).toStartWith("event: hello");
    expect(frames.at(-1)).toStartWith("event: dropped");
    expect(frames.at(-1)).toContain('"reason":"slow reader"');
    const delivered = frames.filter((f) => f.includes("event: alert")).length;
    expect(delivered).toBeGreaterThan(0);
    expect(delivered).toBeLessThan(50);
  });
});

describe("the event stream's access re-check", () => {
  test("once the caller may no longer read it, the very next event is not sent: the stream ends with signed_out", async () => {
    const bus = new EventBus();
    let allowed = true;
    const res = eventStream(bus, { heartbeatMs: 60_000, allowed: () => allowed });
    const alert = (subject: string) => ({ type: "alert" as const, event: "circuit_open", at: 1, subject, detail: {} });
    bus.publish(alert("provider:before"));
    allowed = false; // e.g. the key was revoked a moment after the last event
    bus.publish(alert("provider:after"));
    expect(bus.active).toBe(false);
    const frames = (await res.text()).split("\n\n").filter((f) => f.trim() !== "");
    expect(frames.map((f) => /^(?:id: \d+\n)?event: (\w+)/.exec(f)?.[1])).toEqual(["hello", "alert", "signed_out"]);
    expect(frames.join("\n")).not.toContain("provider:after");
  });
});
