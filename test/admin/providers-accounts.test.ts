/**
 * `GET /admin/api/providers` and `POST /admin/api/accounts/{id}/test` (SPEC 9.3) through the real
 * gateway: providers without credentials; an account test makes exactly one upstream call with the
 * account's own key and writes no cooldown, whatever the upstream says.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
    models:
      claude-x: { context_window: 200000, images: true }
  - id: q
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
  - id: g
    kind: gemini
    base_url: "{{FAKE}}"
  - id: r
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
  - id: s
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
  - id: u
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
  - id: pw
    kind: openai-compatible
    base_url: "http://proxy-user:BASEURL-PASSWORD@127.0.0.1:9/v1?api-key=BASEURL-QUERY-KEY&api-version=2024-10-21"
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
  - id: q1
    provider: q
    api_key: env:KEY_Q1
  - id: g1
    provider: g
    api_key: env:KEY_G1
  - id: r1
    provider: r
    api_key: env:KEY_Q1
  - id: s1
    provider: s
    api_key: env:KEY_Q1
  - id: u1
    provider: u
    api_key: env:KEY_Q1
combos:
  - name: pair
    targets:
      - model: p/claude-x
      - model: r/r-combo
aliases:
  quick: s/s-alias
  other: r/r-alias
`;
const ENV = { KEY_A1: "sk-test-account-one", KEY_Q1: "sk-test-account-q", KEY_G1: "gm-test-account-g" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV });
});
afterAll(async () => {
  await gw?.stop();
});

const post = (path: string, body?: unknown) =>
  fetch(`${gw.url}/admin/api${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

describe("GET /admin/api/providers", () => {
  test("lists configured and built-in providers with kinds, base URLs, models, accounts; no credential", async () => {
    const res = await fetch(`${gw.url}/admin/api/providers`);
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const secret of Object.values(ENV)) expect(text).not.toContain(secret);
    const { providers } = JSON.parse(text) as { providers: any[] };
    const p = providers.find((x) => x.id === "p");
    expect(p).toEqual({
      id: "p",
      kind: "anthropic",
      format: "anthropic-messages",
      baseUrl: gw.fake.url,
      source: "config",
      models: { "claude-x": { contextWindow: 200000, images: true } },
      discoveredModels: [],
      accounts: ["a1"],
      circuit: { state: "closed", consecutive5xx: 0 },
    });
    expect(providers.find((x) => x.id === "q")).toMatchObject({ kind: "openai-compatible", format: "openai-chat", baseUrl: `${gw.fake.url}/v1`, accounts: ["q1"] });
    // A base URL's own credentials (user info, a key in its query) are masked; a plain parameter is not (SPEC 9.3).
    expect(text).not.toContain("BASEURL-PASSWORD");
    expect(text).not.toContain("BASEURL-QUERY-KEY");
    expect(text).not.toContain("proxy-user");
    expect(providers.find((x) => x.id === "pw").baseUrl).toBe("http://***@127.0.0.1:9/v1?api-key=***&api-version=2024-10-21");
    // The built-ins are there too, without accounts here.
    expect(providers.find((x) => x.id === "cc")).toMatchObject({ kind: "claude-code", source: "builtin", accounts: [] });
  });
});

describe("POST /admin/api/accounts/{id}/test", () => {
  test("one minimal upstream call with the account's key; ok with status and latency", async () => {
    const before = gw.fake.requests.length;
    const res = await post("/accounts/a1/test");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ ok: true, status: 200, model: "claude-x", model_from: "the provider's models" });
    expect(typeof body.latency_ms).toBe("number");
    expect(body.error).toBeUndefined();
    const sent = gw.fake.requests.slice(before);
    expect(sent.length).toBe(1);
    expect(sent[0].path).toBe("/v1/messages");
    expect(sent[0].headers["x-api-key"]).toBe(ENV.KEY_A1);
    expect(sent[0].body).toEqual({ model: "claude-x", max_tokens: 1, messages: [{ role: "user", content: "ping" }] });
  });

  test("a 429 is reported, and no cooldown is written (the account stays eligible)", async () => {
    gw.fake.enqueue({ status: 429, headers: { "retry-after": "120" }, json: { error: { message: "Rate limit reached", type: "rate_limit_error" } } });
    const before = gw.fake.requests.length;
    const res = await post("/accounts/q1/test", { model: "glm-x" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ ok: false, status: 429, model: "glm-x" });
    expect(body.error).toContain("Rate limit reached");
    expect(gw.fake.requests.length - before).toBe(1);
    expect(gw.fake.requests.at(-1)!.body).toEqual({ model: "glm-x", messages: [{ role: "user", content: "ping" }], max_tokens: 1 });
    const status = (await (await fetch(`${gw.url}/admin/api/accounts`)).json()) as any;
    const q1 = status.accounts.find((a: any) => a.id === "q1");
    expect(q1.cooldowns).toEqual([]);
    expect(q1.eligible).toBe(true);
    // The very next request goes to the account the test saw limited.
    const next = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "q/glm-x", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(next.status).toBe(200);
    await next.text();
  });

  test("a Gemini account is tested in Gemini's format", async () => {
    const before = gw.fake.requests.length;
    const res = await post("/accounts/g1/test", { model: "gemini-x" });
    expect(((await res.json()) as any).ok).toBe(true);
    const sent = gw.fake.requests.slice(before);
    expect(sent.length).toBe(1);
    expect(sent[0].format).toBe("gemini");
    expect(sent[0].model).toBe("gemini-x");
  });

  test("unreachable upstream: status 0 and the reason", async () => {
    // A closed port (the discard port) through a second gateway.
    const dead = await startGateway(
      `
providers:
  - id: d
    kind: anthropic
    base_url: "http://127.0.0.1:9"
accounts:
  - id: d1
    provider: d
    api_key: env:KEY_A1
`,
      { env: ENV },
    );
    try {
      const res = await fetch(`${dead.url}/admin/api/accounts/d1/test`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude-x" }) });
      const body = (await res.json()) as any;
      expect(body).toMatchObject({ ok: false, status: 0, model: "claude-x" });
      expect(body.error).toContain("could not be reached");
      expect(JSON.stringify(body)).not.toContain(ENV.KEY_A1);
    } finally {
      await dead.stop();
    }
  });

  test("a provider that lists no models is tested with the model a combo target, else an alias, routes to it, and the answer says which", async () => {
    for (const [account, model, from] of [
      ["r1", "r-combo", "combo pair"],
      ["s1", "s-alias", "alias quick"],
    ]) {
      const before = gw.fake.requests.length;
      const res = await post(`/accounts/${account}/test`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, status: 200, model, model_from: from });
      const sent = gw.fake.requests.slice(before);
      expect(sent.map((r) => r.body.model)).toEqual([model]);
    }
    // a model in the request wins, and is named as the request's
    expect(await (await post("/accounts/r1/test", { model: "r-given" })).json()).toMatchObject({ ok: true, model: "r-given", model_from: "the request" });
  });

  test("unknown account 404; no known model 400 naming model; bad body 400", async () => {
    const r404 = await post("/accounts/nope/test");
    expect(r404.status).toBe(404);
    const before = gw.fake.requests.length;
    // (q1 served a request by now: its model is the default; u1 served none)
    const r400 = await post("/accounts/u1/test");
    expect(r400.status).toBe(400);
    expect(r400.headers.get("content-type")).toContain("application/json");
    expect(((await r400.json()) as any).error).toEqual({
      type: "invalid_request_error",
      param: "model",
      code: "model_required",
      message:
        'No model is known for provider u: its config entry lists no models, none were discovered, no combo or alias routes to it, and account u1 served none in the last 30 days. Its upstream lists one model (fake-model): name the one to test with, as {"model": "…"}.',
      // what the account's upstream lists, asked then (GET /v1/models with its key): offered, not tested
      models: ["fake-model"],
    });
    const asked = gw.fake.requests.slice(before);
    expect(asked.map((r) => [r.method, r.path, r.headers["authorization"]])).toEqual([["GET", "/v1/models", "Bearer sk-test-account-q"]]);
    // nothing stored: the account's models stay unlimited for routing, and discovery lists none
    const providers = (await (await fetch(`${gw.url}/admin/api/providers`)).json()) as { providers: Array<{ id: string; discoveredModels: string[] }> };
    expect(providers.providers.find((p) => p.id === "u")?.discoveredModels).toEqual([]);
    const bad = await post("/accounts/a1/test", { model: 5 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatchObject({ param: "model", message: "model must be a string" });
  });
});

test("POST /accounts/{id}/test: with no model configured or routed to the provider, the model the account last served is the default, named as such (a failed request's model is not)", async () => {
  const chat = async (model: string) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
    await res.arrayBuffer();
    return res.status;
  };
  expect(await chat("u/u-served")).toBe(200);
  gw.fake.handle((r) => (r.model === "u-broken" ? { status: 400, json: { error: { message: "bad", type: "invalid_request_error", param: null, code: null } } } : undefined));
  try {
    expect(await chat("u/u-broken")).toBe(400);
  } finally {
    gw.fake.handle(undefined);
  }
  const before = gw.fake.requests.length;
  const res = await post("/accounts/u1/test");
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ ok: true, status: 200, model: "u-served", model_from: "its last served request" });
  expect(gw.fake.requests.slice(before).map((r) => [r.body.model, r.headers["authorization"]])).toEqual([["u-served", `Bearer ${ENV.KEY_Q1}`]]);
});

describe("DELETE /admin/api/accounts/{id}", () => {
  test("an account of the config file is read-only here (409, it stays); an unknown id is a 404", async () => {
    const del = (id: string) => fetch(`${gw.url}/admin/api/accounts/${id}`, { method: "DELETE" });
    const cfg = await del("a1");
    expect(cfg.status).toBe(409);
    expect(((await cfg.json()) as any).error).toMatchObject({ type: "conflict_error", code: "read_only", message: expect.stringContaining("remove it from the file") });
    const status = (await (await fetch(`${gw.url}/admin/api/accounts`)).json()) as { accounts: { id: string }[] };
    expect(status.accounts.map((a) => a.id)).toContain("a1");
    const unknown = await del("nobody");
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error).toMatchObject({ type: "not_found_error", message: "No stored account nobody." });
  });
});
