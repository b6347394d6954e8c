/**
 * Cache writes reach every client in its own format's usage field (newuser14 K4, K5). An Anthropic
 * upstream reports 100 uncached input tokens, 5,000 read from its prompt cache and 300 written to it
 * (all 300 with the one-hour lifetime: `cache_creation.ephemeral_1h_input_tokens`), 20 output tokens.
 *
 * - Chat client: `prompt_tokens` 5,400 (includes reads and writes, REFERENCE §5.10), `cached_tokens`
 *   5,000 and `prompt_tokens_details.cache_write_tokens` 300 (before: the 300 were only folded into
 *   `prompt_tokens`).
 * - Responses client: `input_tokens_details.cache_write_tokens` 300, the field Codex 0.171.0 reads into
 *   its `cache_write_input_tokens` (it showed 0 behind the gateway).
 * - Anthropic client: `cache_creation_input_tokens` 300 and the `cache_creation` breakdown (Claude Code
 *   prices one-hour writes from it), JSON, and streamed in `message_start` as Anthropic sends it.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { sseEvents } from "../support/client-reply.ts";
import type { FakeReply, ReceivedRequest } from "../support/fake-upstream.ts";
import { fakeProviders } from "../support/configs.ts";

const suite = gatewaySuite(`\n${fakeProviders([["anth", "anthropic"], ["anthc", "anthropic-compatible"]])}`);

const UPSTREAM_USAGE = {
  input_tokens: 100,
  cache_creation_input_tokens: 300,
  cache_read_input_tokens: 5000,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 300 },
  output_tokens: 20,
};

/** The Anthropic upstream's reply (JSON or SSE) with {@link UPSTREAM_USAGE}. */
function anthropicReply(r: ReceivedRequest): FakeReply {
  const message = { id: "msg_cw1", type: "message", role: "assistant", model: r.model, content: [] as unknown[], stop_reason: null, stop_sequence: null };
  if (!r.stream) return { json: { ...message, content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", usage: UPSTREAM_USAGE } };
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  return {
    sse:
      ev("message_start", { type: "message_start", message: { ...message, usage: { ...UPSTREAM_USAGE, output_tokens: 1 } } }) +
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } }) +
      ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
      ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 20 } }) +
      ev("message_stop", { type: "message_stop" }),
  };
}

async function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
  suite.gw.fake.handle(anthropicReply);
  const res = await fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

const MODEL = "anth/claude-cache";
const hi = [{ role: "user", content: "hi" }];

describe("Chat client, Anthropic upstream with cache writes (K4)", () => {
  const expected = {
    prompt_tokens: 5400,
    completion_tokens: 20,
    total_tokens: 5420,
    prompt_tokens_details: { cached_tokens: 5000, cache_write_tokens: 300 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  test("JSON: prompt_tokens_details.cache_write_tokens 300", async () => {
    const r = await post("/v1/chat/completions", { model: MODEL, messages: hi });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).usage).toEqual(expected);
  });
  test("stream: the usage chunk says the same", async () => {
    const r = await post("/v1/chat/completions", { model: MODEL, messages: hi, stream: true, stream_options: { include_usage: true } });
    expect(r.status).toBe(200);
    const usages = sseEvents(r.text).filter((e) => e.json?.usage).map((e) => e.json.usage);
    expect(usages).toEqual([expected]);
  });
});

describe("Responses client, Anthropic upstream with cache writes (K4)", () => {
  const expected = {
    input_tokens: 5400,
    input_tokens_details: { cached_tokens: 5000, cache_write_tokens: 300 },
    output_tokens: 20,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 5420,
  };
  test("JSON: input_tokens_details.cache_write_tokens 300", async () => {
    const r = await post("/v1/responses", { model: MODEL, input: "hi" });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).usage).toEqual(expected);
  });
  test("stream: response.completed says the same", async () => {
    const r = await post("/v1/responses", { model: MODEL, input: "hi", stream: true });
    expect(r.status).toBe(200);
    const done = sseEvents(r.text).find((e) => e.json?.type === "response.completed");
    expect(done?.json.response.usage).toEqual(expected);
  });
});

describe("no cache write: the usage objects keep OpenAI's documented shape (K4)", () => {
  test("Chat and Responses JSON have no cache_write_tokens when the upstream wrote nothing", async () => {
    suite.gw.fake.handle((r) => ({ json: { id: "msg_cw0", type: "message", role: "assistant", model: r.model, content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 20 } } }));
    const chat = await fetch(`${suite.gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, messages: hi }) });
    expect(((await chat.json()) as any).usage.prompt_tokens_details).toEqual({ cached_tokens: 0 });
    const resp = await fetch(`${suite.gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, input: "hi" }) });
    expect(((await resp.json()) as any).usage.input_tokens_details).toEqual({ cached_tokens: 0 });
  });
});

describe("Anthropic client: the cache_creation breakdown comes back (K5)", () => {
  // Anthropic's own usage object (Usage in @anthropic-ai/sdk): the breakdown in a message and in
  // message_start; message_delta's usage (MessageDeltaUsage) has no cache_creation member.
  const expected = {
    input_tokens: 100,
    cache_creation_input_tokens: 300,
    cache_read_input_tokens: 5000,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 300 },
    output_tokens: 20,
  };
  for (const model of ["anth/claude-cache", "anthc/claude-cache"]) {
    test(`${model} JSON: usage.cache_creation as the upstream said`, async () => {
      const r = await post("/v1/messages", { model, max_tokens: 50, messages: hi });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text).usage).toMatchObject(expected);
    });
    test(`${model} stream: message_start's usage has cache_creation`, async () => {
      const r = await post("/v1/messages", { model, max_tokens: 50, messages: hi, stream: true });
      expect(r.status).toBe(200);
      const start = sseEvents(r.text).find((e) => e.json?.type === "message_start");
      expect(start?.json.message.usage).toMatchObject({ ...expected, output_tokens: 1 });
      const delta = sseEvents(r.text).find((e) => e.json?.type === "message_delta");
      expect(delta?.json.usage.output_tokens).toBe(20);
    });
  }
});
