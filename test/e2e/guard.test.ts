/**
 * The guard (SPEC G-1…G-5) through the real gateway bound to 127.0.0.1: forwarding headers make a
 * loopback caller remote, require_api_key (config and REQUIRE_API_KEY; setup's placeholder key told what it is), the `[1m]` suffix as the
 * upstream sees it, Claude Code probes answered without an upstream call, and count_tokens behind the
 * same guard (forwarded to an Anthropic-format provider, else estimated locally).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { MAX_COUNT_REPLY_BYTES } from "../../pipeline/count-tokens.ts";

const CLIENT_KEY = "sy-e2e-guard-client-key-3b8f0a";
const YAML = (extra = "") => `
server:
  host: 127.0.0.1
${extra}
${fakeProviders([["anth", "anthropic"], ["oai", "openai"]])}keys:
  - name: laptop
    key: env:CLIENT_KEY
`;

const post = (gw: TestGateway, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
const getJson = async (url: string): Promise<any> => (await fetch(url)).json();
const MSG = { model: "anth/claude-test", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };
const CHAT = { model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] };

describe("open gateway (require_api_key off)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(YAML(), { env: { CLIENT_KEY } });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test("a local caller needs no key; a placeholder key is ignored; a valid key is attributed", async () => {
    const anon = await post(gw, "/v1/messages", MSG);
    expect(anon.status).toBe(200);
    const placeholder = await post(gw, "/v1/messages", MSG, { "x-api-key": "sk-ant-placeholder" });
    expect(placeholder.status).toBe(200);
    const keyed = await post(gw, "/v1/chat/completions", CHAT, { authorization: `Bearer ${CLIENT_KEY}` });
    expect(keyed.status).toBe(200);
    const trace = await getJson(`${gw.url}/admin/api/route-traces/${keyed.headers.get("x-switchyard-route-id")}`);
    expect(trace.keyName).toBe("laptop");
    const anonTrace = await getJson(`${gw.url}/admin/api/route-traces/${placeholder.headers.get("x-switchyard-route-id")}`);
    expect(anonTrace.keyName).toBeUndefined();
    // The client's key never travels upstream.
    for (const r of gw.fake.requests) expect(JSON.stringify(r.headers)).not.toContain(CLIENT_KEY);
  });

  test("X-Forwarded-For from 127.0.0.1: 401 without a key, in the client's format; nothing goes upstream", async () => {
    const before = gw.fake.requests.length;
    const a = await post(gw, "/v1/messages", MSG, { "x-forwarded-for": "203.0.113.9" });
    expect(a.status).toBe(401);
    expect(await a.json()).toEqual({ type: "error", error: { type: "authentication_error", message: expect.any(String) } });
    const c = await post(gw, "/v1/chat/completions", CHAT, { "x-forwarded-for": "203.0.113.9" });
    expect(c.status).toBe(401);
    expect(((await c.json()) as any).error).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
    const r = await post(gw, "/v1/responses", { model: "oai/gpt-test", input: "hi" }, { "x-real-ip": "203.0.113.9", "x-api-key": "wrong" });
    expect(r.status).toBe(401);
    expect(((await r.json()) as any).error.type).toBe("authentication_error");
    const f = await post(gw, "/v1/messages", MSG, { forwarded: 'for="[2001:db8::7]";proto=https' });
    expect(f.status).toBe(401);
    expect(((await f.json()) as any).error.type).toBe("authentication_error");
    expect(gw.fake.requests.length).toBe(before);
  });

  test("X-Forwarded-For with a valid key (Bearer or x-api-key) is served", async () => {
    const a = await post(gw, "/v1/messages", MSG, { "x-forwarded-for": "203.0.113.9", "x-api-key": CLIENT_KEY });
    expect(a.status).toBe(200);
    const sdk = new OpenAI({ apiKey: CLIENT_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0, defaultHeaders: { "x-forwarded-for": "203.0.113.9" } });
    const c = await sdk.chat.completions.create(CHAT as never);
    expect((c as any).choices[0].message.content).toBe("Hello from the fake upstream.");
  });

  test("the SDKs see a typed 401 when a forwarded request has no valid key", async () => {
    const sdk = new Anthropic({ apiKey: "placeholder", baseURL: gw.url, maxRetries: 0, defaultHeaders: { "x-forwarded-for": "203.0.113.9" } });
    const err = await sdk.messages.create(MSG as never).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(err.status).toBe(401);
  });

  test("a spoofed Host: localhost with X-Forwarded-For does not help", async () => {
    const res = await post(gw, "/v1/messages", MSG, { host: "localhost", "x-forwarded-for": "203.0.113.9" });
    expect(res.status).toBe(401);
  });

  test("[1m] is stripped: the upstream sees the model without it", async () => {
    const msg = await new Anthropic({ apiKey: "x", baseURL: gw.url, maxRetries: 0 }).messages.create({ model: "anth/claude-sonnet-4-5[1m]", max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
    expect(msg.content[0]).toMatchObject({ type: "text" });
    expect(gw.fake.requests.at(-1)!.body.model).toBe("claude-sonnet-4-5");
  });
});

describe("require_api_key", () => {
  for (const [how, yaml, env] of [
    ["in the config", YAML("  require_api_key: true"), {}],
    ["through REQUIRE_API_KEY=true", YAML(), { REQUIRE_API_KEY: "true" }],
  ] as const) {
    test(`${how}: local callers need a valid key too`, async () => {
      const gw = await startGateway(yaml, { env: { CLIENT_KEY, ...env } });
      try {
        const none = await post(gw, "/v1/messages", MSG);
        expect(none.status).toBe(401);
        expect(((await none.json()) as any).type).toBe("error");
        const wrong = await post(gw, "/v1/chat/completions", CHAT, { authorization: "Bearer placeholder" });
        expect(wrong.status).toBe(401);
        expect(((await wrong.json()) as any).error.type).toBe("authentication_error");
        expect((await post(gw, "/v1/messages", MSG, { "x-api-key": CLIENT_KEY })).status).toBe(200);
        expect((await post(gw, "/v1/chat/completions", CHAT, { authorization: `Bearer ${CLIENT_KEY}` })).status).toBe(200);
        // count_tokens sits behind the same guard.
        expect((await post(gw, "/v1/messages/count_tokens", { model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] })).status).toBe(401);
        // Health stays open.
        expect((await fetch(`${gw.url}/health`)).status).toBe(200);
      } finally {
        await gw.stop();
      }
    });
  }

  test("setup's placeholder key is told that the gateway now requires a client key and how to get one; a wrong key is still not valid", async () => {
    const gw = await startGateway(YAML("  require_api_key: true"), { env: { CLIENT_KEY } });
    try {
      const NOW = "An API key is required: this gateway now requires a client key, and ";
      const HOW = "Ask the gateway's operator for a client key (switchyard keys create NAME makes one) and run switchyard setup claude-code|codex|gemini --client-key KEY, or send it as ";
      // `switchyard setup claude-code` without --client-key writes ANTHROPIC_AUTH_TOKEN: "switchyard" (sent as Bearer).
      const cc = await post(gw, "/v1/messages", MSG, { authorization: "Bearer switchyard" });
      expect(cc.status).toBe(401);
      expect((await cc.json()) as any).toEqual({
        type: "error",
        error: {
          type: "authentication_error",
          message: `${NOW}"switchyard" is the placeholder switchyard setup writes (and the README's examples send) when there is none. ${HOW}Authorization: Bearer KEY or x-api-key: KEY.`,
        },
      });
      const chat = await post(gw, "/v1/chat/completions", CHAT, { authorization: "Bearer placeholder" });
      expect(chat.status).toBe(401);
      expect(((await chat.json()) as any).error).toMatchObject({ type: "authentication_error", code: "invalid_api_key", message: expect.stringContaining(`${NOW}"placeholder" is the placeholder`) });
      const gem = await post(gw, "/v1beta/models/oai/gpt-test:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, { "x-goog-api-key": "switchyard" });
      expect(gem.status).toBe(401);
      expect(((await gem.json()) as any).error).toMatchObject({ code: 401, status: "UNAUTHENTICATED", message: expect.stringContaining(`${HOW}x-goog-api-key: KEY or ?key=KEY`) });
      // A key that is not a placeholder reads as before.
      const wrong = await post(gw, "/v1/messages", MSG, { "x-api-key": "sy-not-one-of-its-keys" });
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as any).error.message).toBe(
        "The API key is not valid for this gateway: it is not one of its client keys, or it was revoked (switchyard keys list shows them; switchyard keys create NAME makes one).",
      );
      expect(gw.fake.requests.length).toBe(0);
    } finally {
      await gw.stop();
    }
  });
});

describe("Claude Code probes (G-5)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(YAML(), { env: { CLIENT_KEY } });
  });
  afterAll(async () => {
    await gw?.stop();
  });
  const CC = { "user-agent": "claude-cli/2.0.76 (external, cli)", "x-app": "cli", "anthropic-version": "2023-06-01" };

  test("quota and warmup are answered without an upstream call and recorded as probes", async () => {
    const before = gw.fake.requests.length;
    const quota = await post(gw, "/v1/messages?beta=true", { model: "anth/claude-haiku-4-5", max_tokens: 1, messages: [{ role: "user", content: "quota" }] }, CC);
    expect(quota.status).toBe(200);
    expect(await quota.json()).toMatchObject({ type: "message", stop_reason: "max_tokens", content: [{ type: "text", text: "#" }] });

    const warm = await post(
      gw,
      "/v1/messages?beta=true",
      { model: "anth/claude-sonnet-4-5", max_tokens: 32000, stream: true, tools: [{ name: "Read", input_schema: { type: "object" } }], messages: [{ role: "user", content: [{ type: "text", text: "Warmup", cache_control: { type: "ephemeral" } }] }] },
      CC,
    );
    expect(warm.status).toBe(200);
    expect(warm.headers.get("content-type")).toContain("text/event-stream");
    const sse = await warm.text();
    expect(sse).toContain("event: message_stop");
    expect(gw.fake.requests.length).toBe(before);

    const calls = (await getJson(`${gw.url}/admin/api/calls?limit=5`)).calls as any[];
    const probes = calls.filter((c) => c.providerId === "switchyard");
    expect(probes.map((c) => c.model).sort()).toEqual(["probe:quota", "probe:warmup"]);
    for (const p of probes) expect(p).toMatchObject({ outcome: "ok", status: 200, attempts: 0 });
    const trace = await getJson(`${gw.url}/admin/api/route-traces/${quota.headers.get("x-switchyard-route-id")}`);
    expect(trace.decisions).toContainEqual({ subject: "guard", verdict: "out", reason: expect.stringContaining("quota probe answered locally") });
  });

  test("the same bodies from another client, and a normal Claude Code turn, go upstream", async () => {
    const before = gw.fake.requests.length;
    const other = await post(gw, "/v1/messages", { model: "anth/claude-haiku-4-5", max_tokens: 1, messages: [{ role: "user", content: "quota" }] }, { "user-agent": "my-script/1.0" });
    expect(other.status).toBe(200);
    const turn = await post(gw, "/v1/messages", { model: "anth/claude-sonnet-4-5", max_tokens: 1, messages: [{ role: "user", content: "hello" }] }, CC);
    expect(turn.status).toBe(200);
    expect(gw.fake.requests.length).toBe(before + 2);
  });
});

describe("count_tokens behind the guard", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(YAML(), { env: { CLIENT_KEY } });
  });
  afterAll(async () => {
    await gw?.stop();
  });
  const BODY = { model: "anth/claude-test[1m]", messages: [{ role: "user", content: "count these words please" }], system: "be brief" };

  test("an Anthropic-format target: forwarded to {base_url}/v1/messages/count_tokens with the account's key", async () => {
    gw.fake.enqueue({ json: { input_tokens: 4242 } });
    const res = await post(gw, "/v1/messages/count_tokens", BODY, { "anthropic-version": "2023-06-01", "anthropic-beta": "token-counting-2024-11-01" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ input_tokens: 4242 });
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const seen = gw.fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1/messages/count_tokens");
    expect(seen.headers["x-api-key"]).toBe("sk-fake-upstream-secret");
    expect(seen.headers["anthropic-beta"]).toBe("token-counting-2024-11-01");
    expect(seen.body).toEqual({ ...BODY, model: "claude-test" });
    // The SDK reads it too.
    gw.fake.enqueue({ json: { input_tokens: 17 } });
    const sdk = new Anthropic({ apiKey: "placeholder", baseURL: gw.url, maxRetries: 0 });
    expect((await sdk.messages.countTokens({ model: "anth/claude-test", messages: [{ role: "user", content: "hi" }] })).input_tokens).toBe(17);
  });

  test("the upstream failing (401 echoing the key): estimated locally, nothing of the upstream's body leaks", async () => {
    gw.fake.enqueue({ status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key sk-fake-upstream-secret" } } });
    const res = await post(gw, "/v1/messages/count_tokens", BODY);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("sk-fake-upstream-secret");
    expect(JSON.parse(text).input_tokens).toBeGreaterThan(0);
  });

  test("a reply that never ends: read no further than MAX_COUNT_REPLY_BYTES, then estimated locally (the trace says why)", async () => {
    gw.fake.enqueue({ text: '{"input_tokens": 1', endless: "0".repeat(64 * 1024) });
    const res = await post(gw, "/v1/messages/count_tokens", BODY);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).input_tokens).toBeGreaterThan(0);
    const trace = await getJson(`${gw.url}/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`);
    expect(trace.attempts.at(-1).error).toBe(`reply larger than ${MAX_COUNT_REPLY_BYTES} bytes`);
    expect(trace.decisions).toContainEqual({ subject: "count_tokens", verdict: "in", reason: "estimated locally: anth sent no token count" });
  });

  test("a non-Anthropic target is estimated locally without an upstream call", async () => {
    const before = gw.fake.requests.length;
    const res = await post(gw, "/v1/messages/count_tokens", { ...BODY, model: "oai/gpt-test" });
    expect(res.status).toBe(200);
    const n = ((await res.json()) as any).input_tokens;
    expect(n).toBeGreaterThan(5);
    expect(gw.fake.requests.length).toBe(before);
  });

  test("guarded like /v1/messages: a forwarded caller without a key gets 401; bad input gets 400/404 in Anthropic shape", async () => {
    const denied = await post(gw, "/v1/messages/count_tokens", BODY, { "x-forwarded-for": "203.0.113.9" });
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as any).error.type).toBe("authentication_error");
    const bad = await post(gw, "/v1/messages/count_tokens", "{nope");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.type).toBe("invalid_request_error");
    const unknown = await post(gw, "/v1/messages/count_tokens", { ...BODY, model: "nope/x" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error.type).toBe("not_found_error");
    const doubled = await post(gw, "/v1/v1/messages/count_tokens", { ...BODY, model: "oai/gpt-test" });
    expect(doubled.status).toBe(200);
  });

  test("count_tokens gets a route trace but no usage row", async () => {
    const res = await post(gw, "/v1/messages/count_tokens", { ...BODY, model: "oai/gpt-test" });
    const routeId = res.headers.get("x-switchyard-route-id")!;
    const trace = await getJson(`${gw.url}/admin/api/route-traces/${routeId}`);
    expect(trace.decisions).toContainEqual({ subject: "count_tokens", verdict: "in", reason: expect.stringContaining("estimated locally") });
    const calls = (await getJson(`${gw.url}/admin/api/calls?limit=100`)).calls as any[];
    expect(calls.some((c) => c.requestId === res.headers.get("x-request-id"))).toBe(false);
  });
});

describe("count_tokens against a slow upstream", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(YAML().replace('    base_url: "{{FAKE}}"\n', '    base_url: "{{FAKE}}"\n    header_timeout_ms: 300\n    idle_timeout_ms: 300\n'), { env: { CLIENT_KEY } });
  });
  afterAll(async () => {
    await gw?.stop();
  });
  const BODY = { model: "anth/claude-test", messages: [{ role: "user", content: "count these words please" }] };

  test("no headers within the provider's header timeout, or a reply that stalls: estimated locally, the attempt says why", async () => {
    for (const reply of [{ hang_before_headers: true }, { json: { input_tokens: 4242 }, stall_after_bytes: 3 }]) {
      gw.fake.enqueue(reply);
      const t0 = performance.now();
      const res = await post(gw, "/v1/messages/count_tokens", BODY);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).input_tokens).toBe(6); // the local estimate: 24 characters
      const trace = await getJson(`${gw.url}/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`);
      expect(trace.attempts).toEqual([expect.objectContaining({ accountId: "anth-1", error: "timeout or client gone" })]);
      expect(trace.decisions).toContainEqual({ subject: "count_tokens", verdict: "in", reason: "estimated locally: anth could not be reached" });
    }
  });
  test("a stalled count's idle timeout is a deadline on the gateway's shared sweep, not a timer", async () => {
    // Bun timers of the provider's idle timeout (300 ms) made while a count's reply stalls: none.
    const realSetTimeout = globalThis.setTimeout;
    let idleTimers = 0;
    globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
      if (ms === 300) idleTimers++;
      return realSetTimeout(fn, ms, ...rest);
    }) as typeof setTimeout;
    try {
      gw.fake.enqueue({ json: { input_tokens: 4242 }, stall_after_bytes: 3 });
      const res = await post(gw, "/v1/messages/count_tokens", BODY);
      expect(((await res.json()) as any).input_tokens).toBe(6);
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
    expect(idleTimers).toBe(0);
  });
});
