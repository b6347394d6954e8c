/**
 * The characters of text, reasoning and tool-call arguments a reply carried to the client
 * (ReplyDriver.outputChars, pipeline/output-estimate.ts): what the output of a reply without usage is
 * estimated from. A passthrough keeps what it forwarded and counts it only when asked, with its
 * provider format's decoder: the same count whatever the reads' split, for every format's tap and the
 * Responses event tap, the same as a translating driver counts from its events; past the kept 64 KiB
 * the rest is extrapolated by its size. A JSON escape counts as one character.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { passthroughDriver, TranslatedStreamDriver } from "../../pipeline/re-translate.ts";
import { byteSample, estimateOutputTokens, eventSample } from "../../pipeline/output-estimate.ts";

const enc = new TextEncoder();
const SPLITS = [1, 7, 64, 100_000];

/** Runs `sse` through a passthrough driver of `format` in reads of `size` bytes, cut (ended with a failure) when `cut`. */
function passthroughChars(format: WireFormat, sse: string, size: number, cut = false): number {
  const codec = codecFor(format);
  const d = passthroughDriver(codec.createTap({ family: "openai", includeUsage: true }), byteSample(codec, { family: "openai" }));
  const bytes = enc.encode(sse);
  for (let i = 0; i < bytes.length; i += size) d.push(bytes.subarray(i, i + size));
  d.end(cut ? { kind: "api_error", status: 502, message: "cut" } : undefined);
  return d.outputChars;
}

const base = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const text = ['Say "hi"\n', "naïve 日本", "!"];
const chatStream =
  chunk({ role: "assistant", content: "" }) +
  text.map((t) => chunk({ content: t })).join("") +
  chunk({ reasoning_content: "think" }) +
  chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: '{"a":' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }) +
  chunk({}, "tool_calls") +
  "data: [DONE]\n\n";
const chatChars = text.join("").length + "think".length + '{"a":1}'.length;

const rev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const responsesStream =
  rev("response.created", { sequence_number: 0, response: { id: "r", object: "response", status: "in_progress", output: [] } }) +
  rev("response.output_item.added", { sequence_number: 1, output_index: 0, item: { id: "m1", type: "message", role: "assistant", status: "in_progress", content: [] } }) +
  rev("response.content_part.added", { sequence_number: 2, output_index: 0, content_index: 0, item_id: "m1", part: { type: "output_text", text: "" } }) +
  rev("response.output_text.delta", { sequence_number: 3, output_index: 0, content_index: 0, item_id: "m1", delta: 'a "b"' }) +
  rev("response.output_text.delta", { sequence_number: 4, output_index: 0, content_index: 0, item_id: "m1", delta: " c" });
const responsesChars = 'a "b" c'.length;

const aev = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
const anthropicStream =
  aev("message_start", { message: { id: "msg", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } }) +
  aev("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "" } }) +
  aev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "hmm" } }) +
  aev("content_block_stop", { index: 0 }) +
  aev("content_block_start", { index: 1, content_block: { type: "text", text: "" } }) +
  aev("content_block_delta", { index: 1, delta: { type: "text_delta", text: "Hello there" } });
const anthropicChars = "hmm".length + "Hello there".length;

const geminiStream =
  `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Hello" }] } }] })}\n\n` +
  `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ functionCall: { name: "f", args: { q: 1 } } }] } }] })}\n\n`;
const geminiChars = "Hello".length + '{"q":1}'.length;

describe("outputChars of a passthrough", () => {
  test("Chat: content, reasoning and tool arguments, whatever the reads' split; escapes count once", () => {
    for (const size of SPLITS) expect(passthroughChars("openai-chat", chatStream, size)).toBe(chatChars);
  });

  test("Chat cut before its finish and usage: what was forwarded counts", () => {
    const cut = chatStream.slice(0, chatStream.indexOf("think"));
    for (const size of SPLITS) expect(passthroughChars("openai-chat", cut, size, true)).toBe(text.join("").length);
  });

  test("Responses, Anthropic and Gemini taps, cut mid-reply", () => {
    for (const size of SPLITS) {
      expect(passthroughChars("openai-responses", responsesStream, size, true)).toBe(responsesChars);
      expect(passthroughChars("anthropic-messages", anthropicStream, size, true)).toBe(anthropicChars);
      expect(passthroughChars("gemini", geminiStream, size, true)).toBe(geminiChars);
    }
  });

  test("the Responses event tap (the WebSocket's passthrough) counts the same from its events", () => {
    const codec = codecFor("openai-responses");
    const d = passthroughDriver(codec.createEventTap!({ family: "openai" }), eventSample(codec, { family: "openai" }));
    const bytes = enc.encode(responsesStream);
    for (let i = 0; i < bytes.length; i += 50) d.push(bytes.subarray(i, i + 50));
    d.end({ kind: "api_error", status: 502, message: "cut" });
    expect(d.outputChars).toBe(responsesChars);
  });

  test("a translating driver counts the same characters from its events", () => {
    const d = new TranslatedStreamDriver(codecFor("openai-chat"), codecFor("anthropic-messages"), { family: "openai" }, { model: "m" });
    d.push(enc.encode(chatStream));
    d.end();
    expect(d.outputChars).toBe(chatChars);
  });

  test("a long reply past the kept 64 KiB is extrapolated by its size (within 1 %)", () => {
    const words = Array.from({ length: 3000 }, (_, i) => `word${String(i).padStart(4, "0")} `);
    const sse = chunk({ role: "assistant", content: "" }) + words.map((w) => chunk({ content: w })).join("");
    expect(sse.length).toBeGreaterThan(4 * 64 * 1024);
    const exact = words.join("").length;
    const got = passthroughChars("openai-chat", sse, 16 * 1024, true);
    expect(Math.abs(got - exact) / exact).toBeLessThan(0.01);
  });

  test("tokens are characters / 4, rounded up", () => {
    expect([0, 1, 4, 5, 800].map(estimateOutputTokens)).toEqual([0, 1, 1, 2, 200]);
  });
});
