/**
 * An upstream whose stream has an event without end (formats/sse.ts MAX_SSE_EVENT_BYTES), through the
 * real gateway and read as the client would (SPEC 6.4): a base URL serving a huge body as
 * `text/event-stream` is a failed attempt before the commit point and the format's in-band error after
 * it, never a silent truncation and never a finished reply; the gateway holds no more of it than the bound.
 */
import { describe, expect, test } from "bun:test";
import { MAX_SSE_EVENT_BYTES } from "../../formats/sse.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { ssePayloads } from "../support/openai-chat-helpers.ts";

const suite = gatewaySuite();

/** Per-test timeout, ms: each attempt moves 64 MiB through the gateway (seconds on a loaded 2-core machine). */
const SLOW = 120_000;

const base = { id: "chatcmpl-h", object: "chat.completion.chunk", created: 1750000000, model: "m" };
const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The last request line the gateway logged. */
const lastOutcome = () => suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request").at(-1)?.outcome;

describe("an upstream event that never ends (a base URL serving a huge body as text/event-stream)", () => {
  // An event that never ends: after `prefix`, 64 KiB pieces of it for as long as the gateway reads.
  const piece = "x".repeat(64 * 1024);
  const tooLarge = `The upstream sent a stream event larger than ${MAX_SSE_EVENT_BYTES} bytes without ending it; it is not a server-sent event stream the gateway can relay.`;
  const chatStream = () =>
    fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });

  test("native Chat lane: the failed attempt is retried, and the retry's reply is what the client gets", async () => {
    suite.gw.fake.enqueue({ sse: "data: ", endless: piece });
    const res = await chatStream();
    expect(res.status).toBe(200);
    const payloads = ssePayloads(await res.text());
    expect(payloads.at(-1)).toBe("[DONE]");
    expect(payloads.map((p) => (p === "[DONE]" ? "" : p.choices?.[0]?.delta?.content ?? "")).join("")).toBe("Hello from the fake upstream.");
    expect(suite.gw.fake.requests.length).toBe(2);
  }, SLOW);

  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const start = ev("message_start", { type: "message_start", message: { id: "msg_h", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
  const text =
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The answer is" } });

  test("native Messages lane, after the commit: the text so far, then exactly one event: error naming the cause; logged failed", async () => {
    const head = start + text;
    suite.gw.fake.enqueue({ sse: head + "event: content_block_delta\ndata: ", endless: piece });
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "anth/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(head + `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "api_error", message: tooLarge } })}\n\n`);
    expect(lastOutcome()).toBe("upstream_error");
    expect(suite.gw.fake.requests.length).toBe(1);
  }, SLOW);

  test("translated lane (Messages client, Chat upstream), after the commit: the text so far, then Anthropic's event: error; no message_stop", async () => {
    const head = chunk({ role: "assistant", content: "" }) + chunk({ content: "The answer is" });
    suite.gw.fake.enqueue({ sse: head + "data: ", endless: piece });
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "oai/gpt-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('"text":"The answer is"');
    expect(body.endsWith(`event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "api_error", message: tooLarge } })}\n\n`)).toBe(true);
    expect(body).not.toContain("message_stop");
    expect(lastOutcome()).toBe("upstream_error");
  }, SLOW);

  test("native Gemini lane, an endless body of lines that are no events: held no further than one event's bound, a failed attempt, the retry served", async () => {
    const line = "<p>not an event stream</p>\n";
    suite.gw.fake.enqueue({ sse: "", endless: line.repeat(2048) });
    const res = await fetch(`${suite.gw.url}/v1beta/models/gem/gemini-x:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).not.toContain("<p>");
    expect(body).toContain('"text":"upstream."');
    expect(suite.gw.fake.requests.length).toBe(2);
  }, SLOW);

  // Last: the account cools down after it (SPEC 6.3), which the tests above must not meet.
  test("native Chat lane, before any content: a failed attempt each time, then a 502 in Chat's error shape naming the cause (no 200, no relayed bytes)", async () => {
    suite.gw.fake.handle(() => ({ sse: "data: {", endless: piece }));
    const res = await chatStream();
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: { message: tooLarge, type: "server_error", param: null, code: "upstream_event_too_large" } });
    expect(suite.gw.fake.requests.length).toBeGreaterThan(1);
  }, SLOW);
});
