/**
 * Client key limits (SPEC 9.6, 2.4) through the real gateway with the official SDKs of each client
 * format: the request after a limit is reached is refused (429 + Retry-After, or 403 for a model
 * outside the allow-list) in the client's own error shape with a message naming the limit and when it
 * resets; the upstream sees none of the refused requests; other keys are unaffected. Also keys created
 * through the admin API with limits, and their budget use there.
 *
 * Every reply of the fake upstream reports 11 input + 7 output tokens (18 counted tokens).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import { refusal } from "../support/sdk-refusal.ts";

const KEYS = {
  rpm: "sy-test-limits-rpm-0000000001",
  tpm: "sy-test-limits-tpm-0000000002",
  conc: "sy-test-limits-conc-000000003",
  tokens: "sy-test-limits-tokens-0000004",
  usd: "sy-test-limits-usd-0000000005",
  models: "sy-test-limits-models-000006",
  free: "sy-test-limits-free-00000007",
};

const YAML = `${DEFAULT_YAML}
server: { require_api_key: true }
aliases:
  fast: oai/gpt-test
  careful: anth/claude-test
keys:
  - { name: rpm, key: ${KEYS.rpm}, limits: { rpm: 3 } }
  - { name: tpm, key: ${KEYS.tpm}, limits: { tpm: 40 } }
  - { name: conc, key: ${KEYS.conc}, limits: { concurrency: 1 } }
  - { name: tokens, key: ${KEYS.tokens}, limits: { budgets: [{ window: 5h, tokens: 50 }] } }
  - { name: usd, key: ${KEYS.usd}, limits: { budgets: [{ window: 1d, usd: 0.05 }] } }
  - { name: models, key: ${KEYS.models}, limits: { models: ["oai/*", fast] } }
  - { name: free, key: ${KEYS.free} }
  - { name: admin, key: sy-test-limits-admin-0000008, scopes: [admin] }
settings:
  pricing:
    # 11 × $1000 + 7 × $1000 per million tokens = $0.018 per request
    anth/claude-test: { input: 1000, output: 1000 }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const ask = {
  messages: (key: string, model = "anth/claude-test") => anthropic(key).messages.create({ model, max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
  chat: (key: string, model = "oai/gpt-test") => openai(key).chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }),
  responses: (key: string, model = "resp/gpt-test") => openai(key).responses.create({ model, input: "hi" }),
};

const upstreamCalls = () => gw.fake.requests.length;

describe("rpm", () => {
  test("the 4th request in a minute is refused in each client's format; upstream saw 3; another key is unaffected", async () => {
    for (let i = 0; i < 3; i++) await ask.messages(KEYS.rpm);
    const before = upstreamCalls();

    const a = await refusal(ask.messages(KEYS.rpm));
    expect(a).toBeInstanceOf(Anthropic.RateLimitError);
    expect(a.status).toBe(429);
    expect(a.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(a.error.error.message).toMatch(/^Client key "rpm" is over its limit of 3 requests per minute \(rpm\); retry in \d+ s \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\.$/);
    const retryAfter = Number(a.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(50);
    expect(retryAfter).toBeLessThanOrEqual(60);

    const c = await refusal(ask.chat(KEYS.rpm));
    expect(c).toBeInstanceOf(OpenAI.RateLimitError);
    expect(c.error).toMatchObject({ type: "rate_limit_error", code: "key_rate_limit_exceeded" });
    expect(c.error.message).toContain("(rpm)");
    expect(Number(c.headers.get("retry-after"))).toBeGreaterThanOrEqual(50);

    const r = await refusal(ask.responses(KEYS.rpm));
    expect(r).toBeInstanceOf(OpenAI.RateLimitError);
    expect(r.error.message).toContain("(rpm)");

    expect(upstreamCalls()).toBe(before);
    // another key, and requests without limits, go on
    const ok = await ask.messages(KEYS.free);
    expect(ok.content[0]).toMatchObject({ type: "text" });
    expect(upstreamCalls()).toBe(before + 1);
  });
});

describe("tpm", () => {
  test("refused once the last minute holds 40 tokens: 3 requests (54 tokens) pass, the 4th is refused", async () => {
    const start = upstreamCalls();
    for (let i = 0; i < 3; i++) await ask.chat(KEYS.tpm);
    const e = await refusal(ask.chat(KEYS.tpm));
    expect(e.status).toBe(429);
    expect(e.error.message).toMatch(/^Client key "tpm" used 54 of its 40 tokens per minute \(tpm\); retry in \d+ s/);
    expect(Number(e.headers.get("retry-after"))).toBeGreaterThanOrEqual(55);
    expect(Number(e.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(upstreamCalls()).toBe(start + 3);
  });
});

describe("concurrency", () => {
  test("a second request while one is in flight is refused with Retry-After 1; after it ends the key works again", async () => {
    // The upstream holds the first request (its default answer) until the second has been refused, so
    // the first is really in flight however slowly a loaded machine runs either of them.
    const arrived = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    let held = 0;
    gw.fake.handle(async () => {
      if (held++ > 0) return undefined; // only the first is held (a second let through answers at once)
      arrived.resolve();
      await release.promise;
      return undefined;
    });
    const start = upstreamCalls();
    const slow = ask.chat(KEYS.conc);
    await arrived.promise;
    const e = await refusal(ask.messages(KEYS.conc, "anth/claude-test")).finally(() => release.resolve());
    expect(e).toBeInstanceOf(Anthropic.RateLimitError);
    expect(e.headers.get("retry-after")).toBe("1");
    expect(e.error.error.message).toContain('already has 1 request in flight, its concurrency limit of 1; retry when one finishes (in about ');
    await slow;
    gw.fake.handle(undefined);
    expect(upstreamCalls()).toBe(start + 1);
    await ask.chat(KEYS.conc);
    expect(upstreamCalls()).toBe(start + 2);
  });
});

describe("budgets", () => {
  test("a token budget: the request after the one that spent it is refused until the 5h window ends", async () => {
    const start = upstreamCalls();
    for (let i = 0; i < 3; i++) await ask.responses(KEYS.tokens); // 54 ≥ 50 after the third
    const e = await refusal(ask.responses(KEYS.tokens));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.error).toMatchObject({ code: "key_budget_exceeded" });
    expect(e.error.message).toMatch(/^Client key "tokens" has used its 5h budget of 50 tokens \(54 tokens used\); the window resets in 5h 0m \(at .+Z\)\.$/);
    const retryAfter = Number(e.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(5 * 3600 - 30);
    expect(retryAfter).toBeLessThanOrEqual(5 * 3600);
    expect(upstreamCalls()).toBe(start + 3);
  });

  test("a USD budget counts each request's cost ($0.018 under the pricing override)", async () => {
    const start = upstreamCalls();
    for (let i = 0; i < 3; i++) await ask.messages(KEYS.usd); // $0.054 ≥ $0.05 after the third
    const e = await refusal(ask.messages(KEYS.usd));
    expect(e.status).toBe(429);
    expect(e.error.error.message).toMatch(/^Client key "usd" has used its 1d budget of \$0\.0500 \(\$0\.0540 used\); the window resets in \d+h \d+m/);
    expect(Number(e.headers.get("retry-after"))).toBeGreaterThan(86_400 - 30);
    expect(upstreamCalls()).toBe(start + 3);
  });
});

describe("models allow-list", () => {
  test("a model outside the list is a 403 naming the list; provider/* and aliases in it pass", async () => {
    const start = upstreamCalls();
    const a = await refusal(ask.messages(KEYS.models, "anth/claude-test"));
    expect(a).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(a.error).toMatchObject({ type: "error", error: { type: "permission_error" } });
    expect(a.error.error.message).toBe('Client key "models" may not use the model "anth/claude-test"; its models limit allows: oai/*, fast.');
    expect(a.headers.get("retry-after")).toBeNull();
    const c = await refusal(ask.chat(KEYS.models, "resp/gpt-test"));
    expect(c).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(c.error).toMatchObject({ code: "model_not_allowed", param: "model" });
    expect(upstreamCalls()).toBe(start);
    await ask.chat(KEYS.models, "oai/gpt-test");
    await ask.chat(KEYS.models, "fast");
    expect(upstreamCalls()).toBe(start + 2);
  });
});

describe("GET /v1/models lists what the key may use (SPEC 2.1)", () => {
  test("a key with an allow-list sees only the names it may use; others see everything", async () => {
    const ids = async (key: string) => ((await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { id: string }[] }).data.map((m) => m.id);
    // the test config lists two aliases and no provider models
    expect((await ids(KEYS.free)).sort()).toEqual(["careful", "fast"]);
    expect(await ids(KEYS.models)).toEqual(["fast"]);
    const one = await fetch(`${gw.url}/v1/models/fast`, { headers: { authorization: `Bearer ${KEYS.models}` } });
    expect(one.status).toBe(200);
    const hidden = await fetch(`${gw.url}/v1/models/careful`, { headers: { authorization: `Bearer ${KEYS.models}` } });
    expect(hidden.status).toBe(404);
    // the Gemini list, with the key as Gemini clients send it
    const gemini = async (key: string) => ((await (await fetch(`${gw.url}/v1beta/models`, { headers: { "x-goog-api-key": key } })).json()) as { models: { name: string }[] }).models.map((m) => m.name);
    expect(await gemini(KEYS.models)).toEqual(["models/fast"]);
    expect((await gemini(KEYS.free)).sort()).toEqual(["models/careful", "models/fast"]);
    expect((await fetch(`${gw.url}/v1beta/models/careful?key=${KEYS.models}`)).status).toBe(404);
  });
});

describe("the admin API", () => {
  const adminKey = "sy-test-limits-admin-0000008";
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${gw.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

  test("POST /keys with limits creates a limited key; GET /keys shows limits and budget use", async () => {
    const res = await call("POST", "/keys", { name: "made", limits: { rpm: 1, budgets: [{ window: "7d", tokens: 1000 }] } });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { secret: string; key: { limits: unknown } };
    expect(created.key.limits).toEqual({ rpm: 1, budgets: [{ window: "7d", tokens: 1000 }] });
    await ask.chat(created.secret);
    const e = await refusal(ask.chat(created.secret));
    expect(e.status).toBe(429);

    const keys = ((await (await call("GET", "/keys")).json()) as { keys: any[] }).keys;
    const made = keys.find((k) => k.name === "made");
    expect(made.limits).toEqual({ rpm: 1, budgets: [{ window: "7d", tokens: 1000 }] });
    expect(made.use.inFlight).toBe(0);
    expect(made.use.budgets).toHaveLength(1);
    expect(made.use.budgets[0]).toMatchObject({ budget: { window: "7d", tokens: 1000 }, used: 18 });
    expect(made.use.budgets[0].resetsAt - made.use.budgets[0].startedAt).toBe(7 * 86_400_000);
    expect(keys.find((k) => k.name === "rpm").limits).toEqual({ rpm: 3 });
  });

  test("malformed limits are a 400 naming the field", async () => {
    const res = await call("POST", "/keys", { name: "bad", limits: { budgets: [{ window: "2h", tokens: 5 }] } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain("window");
  });

  test("GET /usage?by=key: tokens, cost and budget use per key", async () => {
    const body = (await (await call("GET", "/usage?by=key")).json()) as { rows: any[] };
    const usd = body.rows.find((r) => r.group === "usd");
    expect(usd.costUsd).toBeCloseTo(0.054, 10);
    expect(usd.budgets[0]).toMatchObject({ budget: { window: "1d", usd: 0.05 } });
    expect(usd.budgets[0].used).toBeCloseTo(0.054, 10);
  });
});
