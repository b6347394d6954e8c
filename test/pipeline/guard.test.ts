/**
 * guard (SPEC 3, G-1…G-5) as a unit: who may call, body limits, JSON, the `[1m]` suffix and the
 * Claude Code housekeeping probes. The same rules through the real server are in test/e2e/guard.test.ts.
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { bodyBytes, isLoopback, isRemote, newContext, vouchForOrigin, type Endpoint, type ReceivedBody, type RequestContext } from "../../pipeline/context.ts";
import {
  authenticate,
  guard,
  parseJsonObject,
  presentedKey,
  readBody,
  stripClientModelSuffix,
  type GuardSettings,
} from "../../pipeline/guard.ts";
import { isClaudeCodeClient, localTitle, recogniseProbe } from "../../pipeline/probes.ts";
import { TEST_IDS } from "../support/context.ts";
import type { ClientKey, KeyLookup } from "../../pipeline/ports.ts";
import { decodeRequestBody } from "../../src/http/request-encoding.ts";
import { zstdCompressSync } from "node:zlib";

const VALID = "sy-valid-client-key-0123456789";
const laptop: ClientKey = { name: "laptop", scopes: [], source: "db" };
const keys: KeyLookup = { lookup: (s) => (s === VALID ? laptop : undefined), any: () => true };
const open: GuardSettings = { requireApiKey: false, maxBodyBytes: 1024 };
const strict: GuardSettings = { requireApiKey: true, maxBodyBytes: 1024 };
const PATHS: Record<Endpoint, string> = { chat: "/v1/chat/completions", responses: "/v1/responses", messages: "/v1/messages", count_tokens: "/v1/messages/count_tokens", gemini: "/v1beta/models/m:generateContent", gemini_count_tokens: "/v1beta/models/m:countTokens" };

/** A context as the gateway builds it, for `endpoint`, from `peer`, with `body` and headers. */
function ctxFor(endpoint: Endpoint, peer: string | undefined, body: string | Uint8Array | null, headers: Record<string, string> = {}): RequestContext {
  const request = new Request(`http://127.0.0.1:20128${PATHS[endpoint]}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
  return newContext({ request, endpoint, peer }, 0, TEST_IDS);
}

const hello = JSON.stringify({ model: "anth/claude-test", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
const run = (ctx: RequestContext, settings = open) => guard(ctx, { keys, settings: () => settings });

async function expectAnthropicError(res: RequestContext | Response, status: number, type: string): Promise<any> {
  expect(res).toBeInstanceOf(Response);
  const r = res as Response;
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toContain("application/json");
  expect(r.headers.get("x-request-id")).toBe("req_test");
  const body: any = await r.json();
  expect(body).toEqual({ type: "error", error: { type, message: expect.any(String) } });
  return body;
}

async function expectOpenAIError(res: RequestContext | Response, status: number, type: string): Promise<any> {
  expect(res).toBeInstanceOf(Response);
  const r = res as Response;
  expect(r.status).toBe(status);
  const body: any = await r.json();
  // No asymmetric matchers inside toMatchObject here: Bun 1.4.5 writes them into the received object.
  expect(body.error.type).toBe(type);
  expect(typeof body.error.message).toBe("string");
  expect(body.type).toBeUndefined();
  return body;
}

describe("loopback and remote (G-1, G-3)", () => {
  test("loopback addresses: 127.0.0.0/8, ::1 and IPv4-mapped loopback; nothing else", () => {
    for (const a of ["127.0.0.1", "127.42.0.9", "::1", "::ffff:127.0.0.1"]) expect(isLoopback(a)).toBe(true);
    for (const a of ["10.0.0.1", "192.168.1.5", "::ffff:10.0.0.1", "fe80::1", "128.0.0.1", "", undefined]) expect(isLoopback(a)).toBe(false);
  });

  test("a loopback peer is remote once it carries X-Forwarded-For, X-Real-IP or Forwarded", () => {
    expect(isRemote("127.0.0.1", new Headers())).toBe(false);
    expect(isRemote("127.0.0.1", new Headers({ forwarded: "for=203.0.113.7;proto=https" }))).toBe(true);
    expect(isRemote("127.0.0.1", new Headers({ "x-forwarded-for": "203.0.113.7" }))).toBe(true);
    expect(isRemote("::1", new Headers({ "x-real-ip": "203.0.113.7" }))).toBe(true);
  });

  test("G-6: a loopback request with an Origin is remote until the HTTP layer vouches for that origin", () => {
    const headers = new Headers({ origin: "https://evil.example" });
    expect(isRemote("127.0.0.1", headers)).toBe(true);
    const own = new Headers({ origin: "http://127.0.0.1:20128" });
    vouchForOrigin(own);
    expect(isRemote("127.0.0.1", own)).toBe(false);
    // Vouching is per request (per header set), and does not make a remote peer local.
    expect(isRemote("127.0.0.1", new Headers({ origin: "http://127.0.0.1:20128" }))).toBe(true);
    const far = new Headers({ origin: "http://127.0.0.1:20128" });
    vouchForOrigin(far);
    expect(isRemote("203.0.113.7", far)).toBe(true);
  });

  test("G-3: Host: localhost from a remote peer does not make it local", () => {
    expect(isRemote("203.0.113.7", new Headers({ host: "localhost", origin: "http://localhost" }))).toBe(true);
  });

  test("the presented key is read from Authorization: Bearer, else x-api-key", () => {
    expect(presentedKey(new Headers({ authorization: `Bearer ${VALID}` }))).toBe(VALID);
    expect(presentedKey(new Headers({ authorization: `bearer   ${VALID}  ` }))).toBe(VALID);
    expect(presentedKey(new Headers({ "x-api-key": VALID }))).toBe(VALID);
    expect(presentedKey(new Headers({ authorization: "Basic abc" }))).toBeUndefined();
    expect(presentedKey(new Headers())).toBeUndefined();
  });
});

describe("authentication (G-1, G-2)", () => {
  test("local without a key passes; no key is attributed", async () => {
    const ctx = ctxFor("messages", "127.0.0.1", hello);
    const out = await run(ctx);
    expect(out).toBe(ctx);
    expect(ctx.key).toBeUndefined();
    expect(ctx.requestedModel).toBe("anth/claude-test");
  });

  test("local with a valid key: the key is used for attribution (context and trace)", async () => {
    const ctx = ctxFor("chat", "127.0.0.1", hello, { authorization: `Bearer ${VALID}` });
    expect(await run(ctx)).toBe(ctx);
    expect(ctx.key?.name).toBe("laptop");
    expect(ctx.trace.keyName).toBe("laptop");
  });

  test("local with a placeholder key: ignored, the request passes unattributed", async () => {
    for (const headers of [{ authorization: "Bearer placeholder" }, { "x-api-key": "sk-ant-dummy" }] as Record<string, string>[]) {
      const ctx = ctxFor("messages", "::1", hello, headers);
      expect(await run(ctx)).toBe(ctx);
      expect(ctx.key).toBeUndefined();
      expect(ctx.trace.keyName).toBeUndefined();
    }
  });

  test("require_api_key: local without a key gets 401 in the client's format", async () => {
    await expectAnthropicError(await run(ctxFor("messages", "127.0.0.1", hello), strict), 401, "authentication_error");
    await expectOpenAIError(await run(ctxFor("chat", "127.0.0.1", hello), strict), 401, "authentication_error");
    await expectOpenAIError(await run(ctxFor("responses", "127.0.0.1", hello), strict), 401, "authentication_error");
  });

  test("require_api_key: local with a placeholder key gets 401; with a valid key passes", async () => {
    await expectAnthropicError(await run(ctxFor("messages", "127.0.0.1", hello, { "x-api-key": "placeholder" }), strict), 401, "authentication_error");
    const ok = ctxFor("messages", "127.0.0.1", hello, { "x-api-key": VALID });
    expect(await run(ok, strict)).toBe(ok);
    expect(ok.key?.name).toBe("laptop");
  });

  test("a remote peer needs a valid key: none or a wrong one is 401 in the client's format", async () => {
    const body = await expectAnthropicError(await run(ctxFor("messages", "203.0.113.7", hello)), 401, "authentication_error");
    expect(body.error.message).toContain("API key is required");
    const wrong = await expectOpenAIError(await run(ctxFor("chat", "203.0.113.7", hello, { authorization: "Bearer nope" })), 401, "authentication_error");
    expect(wrong.error.code).toBe("invalid_api_key");
    expect(JSON.stringify(wrong)).not.toContain("nope");
    await expectOpenAIError(await run(ctxFor("responses", "10.1.2.3", hello)), 401, "authentication_error");
  });

  test("a remote peer with a valid key passes, as Bearer or as x-api-key", async () => {
    for (const headers of [{ authorization: `Bearer ${VALID}` }, { "x-api-key": VALID }] as Record<string, string>[]) {
      const ctx = ctxFor("responses", "203.0.113.7", hello, headers);
      expect(await run(ctx)).toBe(ctx);
      expect(ctx.key?.name).toBe("laptop");
    }
  });

  test("loopback peer with X-Forwarded-For or X-Real-IP is treated as remote", async () => {
    await expectAnthropicError(await run(ctxFor("messages", "127.0.0.1", hello, { "x-forwarded-for": "203.0.113.7" })), 401, "authentication_error");
    await expectOpenAIError(await run(ctxFor("chat", "127.0.0.1", hello, { "x-real-ip": "203.0.113.7" })), 401, "authentication_error");
    const keyed = ctxFor("chat", "127.0.0.1", hello, { "x-forwarded-for": "203.0.113.7", authorization: `Bearer ${VALID}` });
    expect(await run(keyed)).toBe(keyed);
  });

  test("G-3: a spoofed Host: localhost from a remote peer still needs a key", async () => {
    const ctx = ctxFor("messages", "203.0.113.7", hello, { host: "localhost", "x-forwarded-host": "localhost" });
    await expectAnthropicError(await run(ctx), 401, "authentication_error");
  });

  test("no socket address at all is not trusted as local", async () => {
    await expectAnthropicError(await run(ctxFor("messages", undefined, hello)), 401, "authentication_error");
  });

  test("authentication is decided before the body is read: an unauthenticated oversized body is a 401", async () => {
    const res = await run(ctxFor("messages", "203.0.113.7", "x".repeat(5000)));
    await expectAnthropicError(res, 401, "authentication_error");
  });

  test("authenticate() on its own", () => {
    expect(authenticate(false, new Headers(), keys, open)).toEqual({ ok: true, key: undefined });
    expect(authenticate(true, new Headers({ "x-api-key": VALID }), keys, open)).toEqual({ ok: true, key: laptop });
    const denied = authenticate(true, new Headers(), keys, open);
    expect(denied.ok).toBe(false);
  });
});

describe("body limits and JSON (G-4)", () => {
  test("a body over the limit is 413 request_too_large in the client's format", async () => {
    const big = JSON.stringify({ model: "anth/x", messages: [{ role: "user", content: "x".repeat(2000) }] });
    await expectAnthropicError(await run(ctxFor("messages", "127.0.0.1", big)), 413, "request_too_large");
    const chat = await expectOpenAIError(await run(ctxFor("chat", "127.0.0.1", big)), 413, "invalid_request_error");
    expect(chat.error.code).toBe("request_too_large");
    const resp = await expectOpenAIError(await run(ctxFor("responses", "127.0.0.1", big)), 413, "invalid_request_error");
    expect(resp.error.code).toBe("request_too_large");
  });

  test("a streamed body without Content-Length is cut off at the limit too", async () => {
    const chunk = new TextEncoder().encode("x".repeat(300));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ < 10) c.enqueue(chunk);
        else c.close();
      },
    });
    const r = await readBody(new Request("http://127.0.0.1/", { method: "POST", body, duplex: "half" } as RequestInit), 1024);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.status).toBe(413);
    expect(sent).toBeLessThan(10);
  });

  test("a body exactly at the limit is read", async () => {
    const r = await readBody(new Request("http://127.0.0.1/", { method: "POST", body: "y".repeat(1024) }), 1024);
    expect(r.ok && r.value.byteLength).toBe(1024);
  });

  test("a body an event transport handed over is serialised only when read, or when its bound is over the limit", async () => {
    // SPEC 2.5 / G-4: the Responses socket hands the parsed frame with an upper bound of its size; its
    // bytes are what a native passthrough sends and the flight recorder keeps, and a translated request
    // never reads them.
    const received = (value: Record<string, unknown>, maxBytes: number) => {
      const body = { value, maxBytes, reads: 0, get bytes() {
        body.reads++;
        return new TextEncoder().encode(JSON.stringify(value));
      } };
      return body;
    };
    const head = { url: "http://127.0.0.1:20128/v1/responses", headers: new Headers({ "content-type": "application/json" }), signal: new AbortController().signal };
    const ctxOf = (body: ReceivedBody) => newContext({ request: head, body, endpoint: "responses", peer: "127.0.0.1", transport: "websocket" }, 0, TEST_IDS);
    const small = received({ model: "resp/gpt-test", input: "hi" }, 1000);
    const ctx = await run(ctxOf(small));
    expect(ctx).not.toBeInstanceOf(Response);
    expect(small.reads).toBe(0);
    expect(new TextDecoder().decode(bodyBytes(ctx as RequestContext))).toBe('{"model":"resp/gpt-test","input":"hi"}');
    // A bound over the limit: the bytes decide (under it: served; over it: 413).
    const loose = received({ model: "resp/gpt-test", input: "hi" }, 5000);
    expect(await run(ctxOf(loose))).not.toBeInstanceOf(Response);
    expect(loose.reads).toBe(1);
    const big = received({ model: "resp/gpt-test", input: "x".repeat(2000) }, 12_000);
    const refused = await expectOpenAIError(await run(ctxOf(big)), 413, "invalid_request_error");
    expect(refused.error.code).toBe("request_too_large");
  });

  test("malformed JSON is 400 in the client's format", async () => {
    const a = await expectAnthropicError(await run(ctxFor("messages", "127.0.0.1", '{"model": "x",')), 400, "invalid_request_error");
    expect(a.error.message).toContain("not valid JSON");
    await expectOpenAIError(await run(ctxFor("chat", "127.0.0.1", "{nope")), 400, "invalid_request_error");
    await expectOpenAIError(await run(ctxFor("responses", "127.0.0.1", "")), 400, "invalid_request_error");
  });

  test("invalid UTF-8, a non-object body and a missing model are 400s", async () => {
    const bad = new Uint8Array([0x7b, 0x22, 0x6d, 0xff, 0xfe, 0x22, 0x7d]);
    expect(parseJsonObject(bad)).toMatchObject({ ok: false, error: { status: 400, message: expect.stringContaining("UTF-8") } });
    for (const body of ["[1,2]", "null", "42", '"model"']) {
      await expectAnthropicError(await run(ctxFor("messages", "127.0.0.1", body)), 400, "invalid_request_error");
    }
    const missing = await expectOpenAIError(await run(ctxFor("chat", "127.0.0.1", JSON.stringify({ messages: [{ role: "user", content: "hi" }] }))), 400, "invalid_request_error");
    expect(missing.error.param).toBe("model");
    await expectOpenAIError(await run(ctxFor("chat", "127.0.0.1", JSON.stringify({ model: "  " }))), 400, "invalid_request_error");
  });
});

describe("client quirks (G-5)", () => {
  test("Claude Code's [1m] suffix is stripped from the requested model", async () => {
    expect(stripClientModelSuffix("claude-sonnet-4-5[1m]")).toBe("claude-sonnet-4-5");
    expect(stripClientModelSuffix("anth/claude-opus[1m]")).toBe("anth/claude-opus");
    expect(stripClientModelSuffix("claude-[1m]-x")).toBe("claude-[1m]-x");
    const ctx = ctxFor("messages", "127.0.0.1", JSON.stringify({ model: "anth/claude-sonnet-4-5[1m]", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }));
    expect(await run(ctx)).toBe(ctx);
    expect(ctx.requestedModel).toBe("anth/claude-sonnet-4-5");
    expect(ctx.trace.requestedModel).toBe("anth/claude-sonnet-4-5");
  });

  test("stream is on only when the client says stream: true; include_usage only for Chat", async () => {
    const s = ctxFor("chat", "127.0.0.1", JSON.stringify({ model: "m", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] }));
    await run(s);
    expect([s.stream, s.includeUsage]).toEqual([true, true]);
    const n = ctxFor("chat", "127.0.0.1", JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }));
    await run(n);
    expect([n.stream, n.includeUsage]).toEqual([false, false]);
  });
});

// ---------------------------------------------------------------------------------------------
// Claude Code housekeeping probes (G-5)
// ---------------------------------------------------------------------------------------------

const CC = { "user-agent": "claude-cli/2.0.76 (external, cli)", "x-app": "cli", "anthropic-beta": "oauth-2025-04-20" };
const QUOTA = { model: "claude-haiku-4-5-20251001", max_tokens: 1, messages: [{ role: "user", content: "quota" }], metadata: { user_id: "user_x" } };
const WARMUP = {
  model: "claude-sonnet-4-5-20250929",
  max_tokens: 32000,
  stream: true,
  system: [{ type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." }],
  tools: [{ name: "Read", description: "Read a file", input_schema: { type: "object", properties: {} } }],
  messages: [{ role: "user", content: [{ type: "text", text: "Warmup", cache_control: { type: "ephemeral" } }] }],
};
const TOPIC = {
  model: "claude-haiku-4-5-20251001",
  max_tokens: 512,
  stream: true,
  system: [
    { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
    {
      type: "text",
      text: "Analyze if this message indicates a new conversation topic. If it does, extract a 2-3 word title that captures the new topic. Format your response as a JSON object with two fields: 'isNewTopic' (boolean) and 'title' (string, or null if isNewTopic is false). Only include these fields, no other text.",
    },
  ],
  messages: [{ role: "user", content: "fix the flaky login test" }],
};
const TITLE = {
  model: "claude-haiku-4-5-20251001",
  max_tokens: 512,
  system: [
    { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
    { type: "text", text: 'Generate a concise, sentence-case title (3-7 words) that captures the main topic or goal of this coding session. Return JSON with a single "title" field.' },
  ],
  tools: [],
  output_config: { format: { type: "json_schema", schema: { type: "object", properties: { title: { type: "string" } } } } },
  messages: [{ role: "user", content: [{ type: "text", text: "<session-context>ignored</session-context> refactor the payment retry queue so it backs off properly" }] }],
};

describe("probe recognition", () => {
  test("each known shape from Claude Code is recognised", () => {
    const h = new Headers(CC);
    expect(recogniseProbe(QUOTA, h)).toBe("quota");
    expect(recogniseProbe(WARMUP, h)).toBe("warmup");
    expect(recogniseProbe({ ...WARMUP, messages: [{ role: "user", content: "Warmup" }] }, h)).toBe("warmup");
    expect(recogniseProbe(TOPIC, h)).toBe("topic");
    expect(recogniseProbe(TITLE, h)).toBe("title");
  });

  test("only Claude Code's own requests are probes (user agent claude-cli/ or x-app: cli)", () => {
    expect(isClaudeCodeClient(new Headers({ "user-agent": "claude-cli/2.1.3 (external, cli)" }))).toBe(true);
    expect(isClaudeCodeClient(new Headers({ "x-app": "cli" }))).toBe(true);
    expect(isClaudeCodeClient(new Headers({ "user-agent": "Anthropic/JS 0.60.0" }))).toBe(false);
    for (const body of [QUOTA, WARMUP, TOPIC, TITLE]) expect(recogniseProbe(body, new Headers({ "user-agent": "Anthropic/JS 0.60.0" }))).toBeUndefined();
  });

  test("near misses are normal requests and go upstream", () => {
    const h = new Headers(CC);
    const near: Array<[string, Record<string, unknown>]> = [
      ["quota with max_tokens 2", { ...QUOTA, max_tokens: 2 }],
      ["max_tokens 1 with another word", { ...QUOTA, messages: [{ role: "user", content: "hello" }] }],
      ["quota with tools", { ...QUOTA, tools: [{ name: "x", input_schema: { type: "object" } }] }],
      ["quota with a system prompt", { ...QUOTA, system: "be brief" }],
      ["quota as the second turn", { ...QUOTA, messages: [{ role: "user", content: "quota" }, { role: "assistant", content: "#" }, { role: "user", content: "quota" }] }],
      ["Warmup among other blocks", { ...WARMUP, messages: [{ role: "user", content: [{ type: "text", text: "<system-reminder>ctx</system-reminder>" }, { type: "text", text: "Warmup" }] }] }],
      ["warmup in lower case", { ...WARMUP, messages: [{ role: "user", content: "warmup" }] }],
      ["Warmup with a follow-up turn", { ...WARMUP, messages: [...WARMUP.messages, { role: "assistant", content: "ok" }, { role: "user", content: "go" }] }],
      ["a user asking about the word Warmup", { ...WARMUP, messages: [{ role: "user", content: "Warmup exercises for my team?" }] }],
      ["topic prompt but tools present", { ...TOPIC, tools: WARMUP.tools }],
      ["title prompt but tools present", { ...TITLE, tools: WARMUP.tools }],
      ["title words quoted inside a user message", { ...WARMUP, messages: [{ role: "user", content: "Generate a concise, sentence-case title for my blog post" }] }],
      ["a normal Claude Code turn", { model: "claude-sonnet-4-5", max_tokens: 32000, system: WARMUP.system, tools: WARMUP.tools, messages: [{ role: "user", content: "fix the bug in auth.ts" }] }],
    ];
    for (const [name, body] of near) expect([name, recogniseProbe(body, h)]).toEqual([name, undefined]);
  });

  test("the local title comes from the first words of the user's text, tags dropped", () => {
    expect(localTitle(TITLE)).toBe("Refactor the payment retry queue so");
    expect(localTitle({ messages: [{ role: "user", content: "" }] })).toBe("New session");
    expect(localTitle({ messages: [] })).toBe("New session");
  });
});

describe("probes answered by the guard", () => {
  const answer = async (body: unknown, headers = CC) => {
    const ctx = ctxFor("messages", "127.0.0.1", JSON.stringify(body), headers);
    const res = await run(ctx);
    return { ctx, res: res as Response };
  };

  test("quota: a one-token message stopped at max_tokens, non-streaming, marked as a probe", async () => {
    const { ctx, res } = await answer(QUOTA);
    expect(res).toBeInstanceOf(Response);
    expect(ctx.probe).toBe("quota");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("req_test");
    const msg: any = await res.json();
    expect(msg).toMatchObject({ type: "message", role: "assistant", model: "claude-haiku-4-5-20251001", stop_reason: "max_tokens", content: [{ type: "text", text: "#" }] });
    expect(msg.id).toMatch(/^msg_/);
    expect(msg.usage).toMatchObject({ input_tokens: 0, output_tokens: 1 });
    expect(ctx.trace.decisions.at(-1)).toMatchObject({ subject: "guard", reason: expect.stringContaining("quota probe") });
  });

  test("warmup (streamed): a complete SSE message that the Anthropic SDK accumulates", async () => {
    const { ctx, res } = await answer(WARMUP);
    expect(ctx.probe).toBe("warmup");
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const sse = await res.text();
    const fetchStub = (async () => new Response(sse, { status: 200, headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch;
    const client = new Anthropic({ apiKey: "x", baseURL: "http://127.0.0.1:9", fetch: fetchStub, maxRetries: 0 });
    const msg = await client.messages.stream({ model: "claude-test", max_tokens: 10, messages: [{ role: "user", content: "Warmup" }] }).finalMessage();
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.content.map((b) => (b.type === "text" ? b.text : b.type))).toEqual(["Ready."]);
  });

  test("topic: the JSON Claude Code expects, saying no new topic", async () => {
    const { ctx, res } = await answer({ ...TOPIC, stream: false });
    expect(ctx.probe).toBe("topic");
    const msg: any = await res.json();
    expect(JSON.parse(msg.content[0].text)).toEqual({ isNewTopic: false, title: null });
  });

  test("title: JSON with a title made locally", async () => {
    const { ctx, res } = await answer(TITLE);
    expect(ctx.probe).toBe("title");
    const msg: any = await res.json();
    expect(JSON.parse(msg.content[0].text)).toEqual({ title: "Refactor the payment retry queue so" });
  });

  test("probes are recognised only on /v1/messages, after authentication", async () => {
    const chat = ctxFor("chat", "127.0.0.1", JSON.stringify(QUOTA), CC);
    expect(await run(chat)).toBe(chat);
    const remote = ctxFor("messages", "203.0.113.7", JSON.stringify(QUOTA), CC);
    await expectAnthropicError(await run(remote), 401, "authentication_error");
    expect(remote.probe).toBeUndefined();
  });
});

describe("a disabled key's 403 names the model of a compressed body (Content-Encoding, SPEC G-4)", () => {
  const OFF = "sy-disabled-client-key-0123456789";
  const withDisabled: KeyLookup = { ...keys, disabled: (s) => (s === OFF ? { name: "bob", scopes: [], source: "db" } : undefined) };
  const refuseOff = (body: Uint8Array | string, headers: Record<string, string>) => {
    const ctx = ctxFor("messages", "127.0.0.1", body, { authorization: `Bearer ${OFF}`, ...headers });
    return { ctx, res: guard(ctx, { keys: withDisabled, settings: () => open, decodeBody: decodeRequestBody }) };
  };

  test("gzip and zstd bodies are decoded as the guard decodes them: the refusal is recorded with the body's model; the body was read whole (no Connection: close)", async () => {
    for (const [encoding, bytes] of [["gzip", Bun.gzipSync(Buffer.from(hello))], ["zstd", zstdCompressSync(Buffer.from(hello))]] as const) {
      const { ctx, res } = refuseOff(new Uint8Array(bytes), { "content-encoding": encoding });
      const r = (await res) as Response;
      expect([r.status, ((await r.json()) as any).error.type, r.headers.get("connection")]).toEqual([403, "permission_error", null]);
      expect([ctx.trace.keyName, ctx.requestedModel, ctx.trace.requestedModel]).toEqual(["bob", "anth/claude-test", "anth/claude-test"]);
    }
  });

  test("a body that does not decode, or a coding the gateway does not know, gets the same 403 without a model", async () => {
    for (const [encoding, body] of [["gzip", "not gzip"], ["compress", hello]] as const) {
      const { ctx, res } = refuseOff(body, { "content-encoding": encoding });
      expect(((await res) as Response).status).toBe(403);
      expect([ctx.trace.keyName, ctx.requestedModel]).toEqual(["bob", ""]);
    }
    // and an uncompressed one as before
    const { ctx, res } = refuseOff(hello, {});
    expect(((await res) as Response).status).toBe(403);
    expect(ctx.requestedModel).toBe("anth/claude-test");
  });
});
