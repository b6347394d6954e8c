/**
 * Resolution and routing rules through the real gateway (SPEC, 2.4): an alias that shadows
 * a combo, the guess landing on a subscription provider when the API-key provider has no account,
 * sibling models tried when the upstream says a model does not exist, and `X-Switchyard-Cache`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
    models:
      house-model: { siblings: [house-b, house-c] }
      many-model: { siblings: [m1, m2, m3, m4] }
  - id: q
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
  - id: cc
    kind: claude-code
    base_url: "{{FAKE}}"
  - id: cx
    kind: codex
    base_url: "{{FAKE}}/v1"
  - id: solo
    kind: anthropic
    base_url: "{{FAKE}}/solo"
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
  - id: a2
    provider: p
    api_key: env:KEY_A2
  - id: cc-1
    provider: cc
    access_token: env:CC_TOKEN
  - id: cx-1
    provider: cx
    access_token: env:CX_TOKEN
  - id: s1
    provider: solo
    api_key: env:KEY_A1
combos:
  - name: duo
    targets:
      - model: q/combo-model
  - name: missing-then-q
    targets:
      - model: p/claude-opus-4-1-20250805
      - model: q/glm-x
  - name: no-affinity
    cache_affinity: false
    targets:
      - model: p/claude-x
aliases:
  duo: p/claude-aliased
`;
const ENV = { KEY_A1: "sk-test-account-one", KEY_A2: "sk-test-account-two", CC_TOKEN: "cc-oauth-access-token", CX_TOKEN: "cx-oauth-access-token" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  gw.fake.reset();
  gw.fake.handle(undefined);
  for (const a of ["a1", "a2", "s1"]) await gw.app.store.restoreModel(a);
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
});

/** Model calls the fake received (discovery's GET /models left out). */
const calls = () => gw.fake.requests.filter((r) => r.method === "POST");
const who = (r: ReceivedRequest) =>
  r.headers["x-api-key"] === ENV.KEY_A1 ? "a1" : r.headers["x-api-key"] === ENV.KEY_A2 ? "a2" : r.headers.authorization === `Bearer ${ENV.CC_TOKEN}` ? "cc" : r.headers.authorization === `Bearer ${ENV.CX_TOKEN}` ? "cx" : r.format === "openai-chat" ? "q" : "?";
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const msg = (model: string, text = "hi") => ({ model, max_tokens: 50, messages: [{ role: "user", content: text }] });
const notFound = (model: string): FakeReply => ({ status: 404, json: { type: "error", error: { type: "not_found_error", message: `model: ${model}` } } });
/** Models in `missing` answer 404 not_found_error; the others a text naming the model that served. */
function upstreamKnowsAllBut(missing: string[]) {
  gw.fake.handle((r) => (r.model && missing.includes(r.model) ? notFound(r.model) : simpleReply(r.format!, { text: `served by ${r.model}`, model: r.model }, r.stream)));
}

describe("SPEC R-2: an alias is looked up before a combo", () => {
  test("an alias named like a combo is accepted, wins, and the log warns that it shadows the combo", async () => {
    const res = await post("/v1/messages", msg("duo"));
    expect(res.status).toBe(200);
    expect(calls().map((r) => [r.format, r.model])).toEqual([["anthropic-messages", "claude-aliased"]]);
    const warning = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "config warning");
    expect(warning).toMatchObject({ level: "warn", path: "aliases.duo" });
    expect(warning.warning).toContain('alias "duo" shadows combo combos[0]');
  });
});

describe("SPEC R-2: the guess lands on the subscription that can serve a bare name", () => {
  test("Claude Code without a model choice: a bare claude- name with only a Claude Code login goes to cc", async () => {
    upstreamKnowsAllBut([]);
    const client = new Anthropic({ apiKey: "placeholder", baseURL: gw.url, maxRetries: 0 });
    const m = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(m.content[0]).toMatchObject({ type: "text", text: "served by claude-sonnet-4-5" });
    expect(calls().map((r) => [who(r), r.model])).toEqual([["cc", "claude-sonnet-4-5"]]);
  });

  test("Codex without a model choice: a bare gpt- name with only a Codex login goes to cx", async () => {
    upstreamKnowsAllBut([]);
    const client = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const r = await client.responses.create({ model: "gpt-5.1-codex", input: "hi" });
    expect(r.output_text).toBe("served by gpt-5.1-codex");
    expect(calls().map((c) => [who(c), c.format, c.model])).toEqual([["cx", "openai-responses", "gpt-5.1-codex"]]);
  });

  test("a bare name that exactly one provider with accounts advertises (configured models) goes there", async () => {
    upstreamKnowsAllBut([]);
    const res = await post("/v1/messages", msg("house-model"));
    expect(res.status).toBe(200);
    expect(calls().map((r) => [who(r), r.model])).toEqual([[expect.stringMatching(/^a[12]$/), "house-model"]]);
  });

  test("a gemini- name with no gemini account is still a 404 that says so", async () => {
    const res = await post("/v1/chat/completions", { model: "gemini-2.5-pro", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("model_not_found");
    expect(body.error.message).toContain("no gemini account is configured");
    expect(calls()).toEqual([]);
  });
});

describe("SPEC R-10: sibling models", () => {
  test("a dated Claude id the upstream does not know: its undated sibling serves, with the fallback header and a warning naming it", async () => {
    upstreamKnowsAllBut(["claude-opus-4-1-20250805"]);
    const res = await post("/v1/messages", msg("p/claude-opus-4-1-20250805"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("served by claude-opus-4-1");
    expect(calls().map((r) => r.model)).toEqual(["claude-opus-4-1-20250805", "claude-opus-4-1"]);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    const warnings = JSON.parse(res.headers.get("x-switchyard-warning")!) as Array<{ code: string; message: string }>;
    expect(warnings).toContainEqual({ code: "sibling_model", message: "The model claude-opus-4-1-20250805 does not exist at provider p; its sibling claude-opus-4-1 served this request." });
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts.map((a) => [a.model, a.status])).toEqual([["claude-opus-4-1-20250805", 404], ["claude-opus-4-1", 200]]);
  });

  test("configured siblings come first, in order, on the same provider", async () => {
    upstreamKnowsAllBut(["house-model", "house-b"]);
    const res = await post("/v1/messages", msg("p/house-model"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("served by house-c");
    expect(calls().map((r) => r.model)).toEqual(["house-model", "house-b", "house-c"]);
  });

  test("at most 3 siblings; when all are missing the client hears about the model it asked for", async () => {
    upstreamKnowsAllBut(["many-model", "m1", "m2", "m3", "m4"]);
    const res = await post("/v1/messages", msg("p/many-model"));
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.message).toBe("model: many-model");
    expect(calls().map((r) => r.model)).toEqual(["many-model", "m1", "m2", "m3"]);
  });

  test("siblings are tried before the combo's next target; when none exists the next target serves", async () => {
    upstreamKnowsAllBut(["claude-opus-4-1-20250805", "claude-opus-4-1", "claude-opus-4-2", "claude-opus-4"]);
    const res = await post("/v1/messages", msg("missing-then-q"));
    expect(res.status).toBe(200);
    const provider = (r: ReceivedRequest) => (who(r) === "a1" || who(r) === "a2" ? "p" : who(r));
    expect(calls().map((r) => `${provider(r)}:${r.model}`)).toEqual(["p:claude-opus-4-1-20250805", "p:claude-opus-4-1", "p:claude-opus-4-2", "p:claude-opus-4", "q:glm-x"]);
  });

  test("later requests for a model the upstream said does not exist: its siblings still serve, with no call for the missing model once every account knows", async () => {
    upstreamKnowsAllBut(["claude-opus-4-1-20250805"]);
    // Two accounts: each learns that the model is missing once (a model-scoped 404 moves on to the
    // siblings without trying the other account); from the third request on, none is asked for it.
    for (let i = 0; i < 4; i++) {
      const res = await post("/v1/messages", msg("p/claude-opus-4-1-20250805"));
      expect({ i, status: res.status }).toEqual({ i, status: 200 });
      expect(((await res.json()) as any).content[0].text).toBe("served by claude-opus-4-1");
      expect(JSON.parse(res.headers.get("x-switchyard-warning")!)).toContainEqual(expect.objectContaining({ code: "sibling_model" }));
    }
    expect(calls().map((r) => r.model)).toEqual(["claude-opus-4-1-20250805", "claude-opus-4-1", "claude-opus-4-1-20250805", "claude-opus-4-1", "claude-opus-4-1", "claude-opus-4-1"]);
  });

  test("a later request for a missing model without siblings is the 404 not found in the client's format, not a 503 overloaded that clients retry", async () => {
    upstreamKnowsAllBut(["llama-unknown"]);
    const first = await post("/v1/messages", msg("solo/llama-unknown"));
    expect(first.status).toBe(404);
    await first.text();
    const again = await post("/v1/messages", msg("solo/llama-unknown"));
    expect(again.status).toBe(404);
    expect(again.headers.get("retry-after")).toBeNull();
    const body = (await again.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("not_found_error");
    expect(body.error.message).toBe("The model llama-unknown is not available at provider solo: model removed for this account: 404 model not found.");
    const chat = await post("/v1/chat/completions", { model: "solo/llama-unknown", messages: [{ role: "user", content: "hi" }] });
    expect(chat.status).toBe(404);
    expect(((await chat.json()) as { error: { code: string; param: string } }).error).toMatchObject({ code: "model_not_found", param: "model" });
    expect(calls().map((r) => r.model)).toEqual(["llama-unknown"]);
  });

  test("a model of no known family without configured siblings goes straight to the next target's error", async () => {
    upstreamKnowsAllBut(["llama-unknown"]);
    const res = await post("/v1/messages", msg("p/llama-unknown"));
    expect(res.status).toBe(404);
    expect(calls().map((r) => r.model)).toEqual(["llama-unknown"]);
  });
});

describe("SPEC 2.4: X-Switchyard-Cache", () => {
  test("two accounts: a new conversation is a miss, its next turn goes back to the same account and is a hit", async () => {
    const first = await post("/v1/messages", msg("p/claude-x", "a conversation about caches"));
    expect(first.status).toBe(200);
    expect(first.headers.get("x-switchyard-cache")).toBe("miss");
    const served = who(calls()[0]);
    const second = await post("/v1/messages", { ...msg("p/claude-x", "a conversation about caches"), messages: [{ role: "user", content: "a conversation about caches" }, { role: "assistant", content: "ok" }, { role: "user", content: "more" }] });
    expect(second.headers.get("x-switchyard-cache")).toBe("hit");
    expect(who(calls()[1])).toBe(served);
  });

  test("one account: the first turn is a miss, the next a hit", async () => {
    const a = await post("/v1/messages", msg("solo/claude-x", "solo conversation"));
    expect(a.headers.get("x-switchyard-cache")).toBe("miss");
    const b = await post("/v1/messages", msg("solo/claude-x", "solo conversation"));
    expect(b.headers.get("x-switchyard-cache")).toBe("hit");
  });

  test("an explicit session header binds across different first messages", async () => {
    const h = { "x-session-id": "session-cache-test" };
    expect((await post("/v1/messages", msg("p/claude-x", "one"), h)).headers.get("x-switchyard-cache")).toBe("miss");
    expect((await post("/v1/messages", msg("p/claude-x", "two"), h)).headers.get("x-switchyard-cache")).toBe("hit");
  });

  test("a combo with cache_affinity: false is a bypass, also on its second turn", async () => {
    expect((await post("/v1/messages", msg("no-affinity", "bypassed"))).headers.get("x-switchyard-cache")).toBe("bypass");
    expect((await post("/v1/messages", msg("no-affinity", "bypassed"))).headers.get("x-switchyard-cache")).toBe("bypass");
  });

  test("an error reply (no account served) is never a hit", async () => {
    upstreamKnowsAllBut(["llama-unknown"]);
    expect((await post("/v1/messages", msg("p/llama-unknown", "err"))).headers.get("x-switchyard-cache")).toBe("miss");
  });
});
