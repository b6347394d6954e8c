/**
 * A streamed upstream reply gathered for a non-streaming client (SPEC F-9) that grows past what the
 * gateway gathers (pipeline/whole-reply-bound.ts gatheredChars: 64 Mi characters of content, README
 * "Not done yet" until this was fixed), through the real gateway: a base URL streaming content without
 * end is a failed attempt (the reply is gathered whole before the commit point), retried and served by
 * the retry when it answers, else a 502 in the client's format naming the cause; never a truncated
 * reply, never gathered until memory runs out.
 */
import { describe, expect, test } from "bun:test";
import { gatheredReplyTooLarge } from "../../pipeline/whole-reply-bound.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

/** Per-test timeout, ms: each attempt moves 64 MiB of content through the gateway (seconds on a loaded 2-core machine). */
const SLOW = 120_000;
const piece = "x".repeat(64 * 1024);
const tooLarge = gatheredReplyTooLarge().error.message;

describe("a streamed upstream reply without end, to a client that asked for no stream", () => {
  test("Chat client, OpenAI provider: the failed attempt is retried, and the retry's reply is what the client gets", async () => {
    const chunk = (delta: unknown) => `data: ${JSON.stringify({ id: "chatcmpl-h", object: "chat.completion.chunk", created: 1, model: "gpt-x", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    suite.gw.fake.enqueue({ sse: chunk({ role: "assistant", content: "" }), endless: chunk({ content: piece }) });
    const res = await fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBe("Hello from the fake upstream.");
    expect(suite.gw.fake.requests.length).toBe(2);
  }, SLOW);

  test("Messages client, Anthropic provider that always streams it: a 502 in Anthropic's error shape naming the cause", async () => {
    const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const head =
      ev("message_start", { type: "message_start", message: { id: "msg_h", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }) +
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    const more = ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: piece } });
    suite.gw.fake.handle(() => ({ sse: head, endless: more }));
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ type: "error", error: { type: "api_error", message: tooLarge } });
    expect(suite.gw.fake.requests.length).toBeGreaterThan(1);
    const line = suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request").at(-1);
    expect(line.status).toBe(502);
  }, SLOW);
});
