/**
 * A request whose every target's provider has no account configured can only be served after an
 * operator adds one; its 503 made Claude Code retry in silence for 182 s and Gemini CLI for 218 s (a
 * new user's tryout with the README's own example model, `anthropic/claude-…`, on a gateway without an
 * Anthropic account). Now the 503 says `x-should-retry: false` (obeyed by the OpenAI and Anthropic SDKs
 * and Claude Code), and a Gemini client, whose CLI retries every 5xx, gets Google's 400
 * `FAILED_PRECONDITION` with the same message. When another target failed otherwise (an upstream 503
 * may pass a moment later) the answer stays retryable. Real gateway on 127.0.0.1:0 with the fake upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import type { ReceivedRequest } from "../support/fake-upstream.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `${DEFAULT_YAML}
aliases:
  fast: openai/gpt-5-mini
combos:
  - name: mixed
    targets:
      - model: anth/claude-x
      - model: openai/gpt-5-mini
  - name: mixed-first
    targets:
      - model: openai/gpt-5-mini
      - model: anth/claude-x
`,
  );
});
afterAll(() => gw?.stop());

const NO_ACCOUNT = "No account is configured for provider openai";

const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("Chat and Messages clients: 503 no_account with x-should-retry: false", async () => {
  const chat = await post("/v1/chat/completions", { model: "fast", messages: [{ role: "user", content: "hi" }] });
  const chatBody = (await chat.json()) as { error: { message: string; code: string } };
  expect({ status: chat.status, retry: chat.headers.get("x-should-retry"), code: chatBody.error.code }).toEqual({ status: 503, retry: "false", code: "no_account" });
  expect(chatBody.error.message).toStartWith(NO_ACCOUNT);

  const messages = await post("/v1/messages", { model: "openai/gpt-5-mini", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
  const messagesBody = (await messages.json()) as { type: string; error: { message: string } };
  expect({ status: messages.status, retry: messages.headers.get("x-should-retry"), type: messagesBody.type }).toEqual({ status: 503, retry: "false", type: "error" });
  expect(messagesBody.error.message).toStartWith(NO_ACCOUNT);
});

test("a Gemini client: 400 FAILED_PRECONDITION with the same message (Gemini CLI retries any 5xx)", async () => {
  for (const stream of [false, true]) {
    const r = await post(`/v1beta/models/fast:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    const body = (await r.json()) as { error: { code: number; status: string; message: string } };
    expect({ status: r.status, retry: r.headers.get("x-should-retry"), code: body.error.code, rpc: body.error.status }).toEqual({ status: 400, retry: "false", code: 400, rpc: "FAILED_PRECONDITION" });
    expect(body.error.message).toStartWith(NO_ACCOUNT);
  }
  // the calls list says what the client got
  const calls = (await (await fetch(`${gw.url}/admin/api/calls?limit=1`)).json()) as { calls: Array<{ status: number }> };
  expect(calls.calls[0]?.status).toBe(400);
});

test("a target that failed upstream beside one without an account: still retryable (no x-should-retry)", async () => {
  gw.fake.handle((r: ReceivedRequest) => ({ status: 503, json: { type: "error", error: { type: "api_error", message: `unavailable ${r.model}` } } }));
  try {
    for (const model of ["mixed", "mixed-first"]) {
      const r = await post("/v1/messages", { model, max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
      await r.text();
      expect({ model, status: r.status, retry: r.headers.get("x-should-retry") }).toEqual({ model, status: 503, retry: null });
    }
    expect(gw.fake.requests.length).toBeGreaterThan(0);
  } finally {
    gw.fake.handle(undefined);
  }
});

test("a target without an account beside one whose circuit is open: retryable (Retry-After, no x-should-retry; a Gemini client gets a 5xx)", async () => {
  const own = await startGateway(
    `${DEFAULT_YAML}${Array.from({ length: 10 }, (_, i) => `  - { id: oai-x${i}, provider: oai, api_key: env:FAKE_KEY }\n`).join("")}
combos:
  - name: later
    targets:
      - model: openai/gpt-5-mini
      - model: oai/gpt-x
`,
  );
  try {
    const ownPost = (path: string, body: unknown) => fetch(`${own.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const circuit = async () => {
      const r = await fetch(`${own.url}/admin/api/providers`, { headers: { authorization: `Bearer ${own.app.adminToken}` } });
      return ((await r.json()) as { providers: Array<{ id: string; circuit: { state: string } }> }).providers.find((p) => p.id === "oai")!.circuit.state;
    };
    // SPEC 6.3: consecutive 5xx open oai's circuit; it closes by itself (a retry later is served).
    own.fake.handle(() => ({ status: 500, json: { error: { type: "server_error", message: "boom" } } }));
    for (let i = 0; i < 12 && (await circuit()) !== "open"; i++) await (await ownPost("/v1/chat/completions", { model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] })).text();
    expect(await circuit()).toBe("open");
    own.fake.handle(undefined);
    const seen = own.fake.requests.length;
    const chat = await ownPost("/v1/chat/completions", { model: "later", messages: [{ role: "user", content: "hi" }] });
    await chat.text();
    expect({ status: chat.status, retry: chat.headers.get("x-should-retry"), after: Number(chat.headers.get("retry-after")) > 0 }).toEqual({ status: 503, retry: null, after: true });
    const gem = await ownPost("/v1beta/models/later:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    const gemBody = (await gem.json()) as { error: { status: string } };
    expect({ status: gem.status, retry: gem.headers.get("x-should-retry"), rpc: gemBody.error.status }).toEqual({ status: 503, retry: null, rpc: "UNAVAILABLE" });
    expect(own.fake.requests.length).toBe(seen); // no call: the circuit is open
  } finally {
    await own.stop();
  }
}, 60_000);

test("a target without an account beside one whose only account had no free concurrency slot in time: retryable (no x-should-retry)", async () => {
  const own = await startGateway(
    `${DEFAULT_YAML}  - { id: chat-1, provider: chat, api_key: env:FAKE_KEY, max_concurrency: 1 }
combos:
  - name: busy
    targets:
      - model: openai/gpt-5-mini
      - model: chat/gpt-x
`,
    { slotWaitMs: 50 },
  );
  try {
    const ask = () => fetch(`${own.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "busy", messages: [{ role: "user", content: "hi" }] }) });
    let release!: (v?: unknown) => void;
    const held = new Promise((done) => (release = done));
    own.fake.handle(() => ({ status: 200, headers_after: held, json: { id: "c1", object: "chat.completion", created: 1, model: "gpt-x", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] } }));
    const first = ask(); // takes chat-1's one slot until released
    while (own.fake.requests.length === 0) await Bun.sleep(5);
    const second = await ask();
    await second.text();
    release();
    expect({ status: second.status, retry: second.headers.get("x-should-retry") }).toEqual({ status: 503, retry: null });
    expect((await first).status).toBe(200);
  } finally {
    own.fake.handle(undefined);
    await own.stop();
  }
}, 60_000);
