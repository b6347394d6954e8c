/**
 * The byte path under upstream quirks a real provider or proxy produces, through the real gateway
 * and read as the client would (SPEC 6.4, F-3): a cut-off reply never reads as a finished one, also
 * on the native passthrough lanes, and a reply with nothing in it is a failed attempt, not a 200.
 */
import { describe, expect, test } from "bun:test";
import Anthropic, { APIError as AnthropicError } from "@anthropic-ai/sdk";
import OpenAI, { APIError } from "openai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { ssePayloads } from "../support/openai-chat-helpers.ts";

const suite = gatewaySuite();

const base = { id: "chatcmpl-h", object: "chat.completion.chunk", created: 1750000000, model: "m" };
const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const chatClient = () => new OpenAI({ apiKey: "k", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });

/** The last request line the gateway logged. */
const lastOutcome = () => suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request").at(-1)?.outcome;

describe("a Chat stream that says [DONE] before any finish_reason (a proxy whose own upstream broke)", () => {
  test("native Chat lane: the client gets the text so far, then the truncation error, and the SDK raises; the reply is logged failed", async () => {
    suite.gw.fake.enqueue({ sse: chunk({ role: "assistant", content: "" }) + chunk({ content: "The answer is" }) + "data: [DONE]\n\n" });
    const res = await fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const payloads = ssePayloads(await res.text());
    expect(payloads.map((p) => (p === "[DONE]" ? p : p.error?.code ?? p.choices[0].delta.content))).toEqual(["", "The answer is", "upstream_truncated", "[DONE]"]);
    expect(lastOutcome()).toBe("upstream_error");

    suite.gw.fake.enqueue({ sse: chunk({ role: "assistant", content: "" }) + chunk({ content: "The answer is" }) + "data: [DONE]\n\n" });
    const stream = chatClient().chat.completions.stream({ model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] });
    await expect(stream.finalChatCompletion()).rejects.toBeInstanceOf(APIError);
  });

  // `[DONE]` alone is a 200 with nothing usable, not a cut stream (nothing was begun): SPEC 6.3's last
  // row (empty_reply: the next target, no same-account retry, no cooldown), as a stream of only
  // `choices: []` chunks then `[DONE]` is. It was the 5xx row (upstream_truncated, retried).
  test("native Chat lane, [DONE] and nothing else: an empty reply (not retried), then a 502 in Chat's error shape, as on the translated lanes", async () => {
    suite.gw.fake.handle(() => ({ sse: "data: [DONE]\n\n" }));
    for (const model of ["oai/gpt-x", "chat/gpt-x"]) {
      const before = suite.gw.fake.requests.length;
      const res = await fetch(`${suite.gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status, model).toBe(502);
      expect(await res.json(), model).toMatchObject({ error: { code: "upstream_empty_reply", type: "server_error" } });
      expect(suite.gw.fake.requests.length - before, model).toBe(1);
    }
    // Translated (an Anthropic client, the Chat decoder): the same row.
    const before = suite.gw.fake.requests.length;
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "oai/gpt-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("without any choice");
    expect(suite.gw.fake.requests.length - before).toBe(1);
  });
});

describe("an Anthropic stream whose message_stop comes without a stop reason (no message_delta)", () => {
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const start = ev("message_start", { type: "message_start", message: { id: "msg_h", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
  const text =
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The answer is" } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 0 });
  const stop = ev("message_stop", { type: "message_stop" });
  const messages = (stream = true) =>
    fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "anth/claude-x", max_tokens: 50, stream, messages: [{ role: "user", content: "hi" }] }),
    });

  test("native Messages lane: the text so far, then event: error instead of message_stop; the SDK throws; the reply is logged failed", async () => {
    suite.gw.fake.enqueue({ sse: start + text + stop });
    const res = await messages();
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toBe(start + text + 'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The upstream stream ended before the reply was complete."}}\n\n');
    expect(lastOutcome()).toBe("upstream_error");

    suite.gw.fake.enqueue({ sse: start + text + stop });
    const client = new Anthropic({ apiKey: "k", baseURL: suite.gw.url, maxRetries: 0 });
    await expect(client.messages.stream({ model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }).finalMessage()).rejects.toBeInstanceOf(AnthropicError);
  });

  test("native Messages lane, message_start and message_stop only: a failed attempt, then a 502 in Anthropic's error shape", async () => {
    suite.gw.fake.handle(() => ({ sse: start + stop }));
    const res = await messages();
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ type: "error", error: { type: "api_error", message: "The upstream stream ended before the reply was complete." } });
    expect(suite.gw.fake.requests.length).toBeGreaterThan(1);
  });
});
