/**
 * Found in review (2026-12-07): the usage chunk pipeline/add-usage-chunk.ts adds to a native Chat
 * stream takes its `id`, `created` and `model` from the first data line of the FIRST NON-EMPTY OUTPUT
 * only (or from a prompt-filter chunk whose id is ""). When that output holds only an SSE comment
 * (": OPENROUTER PROCESSING", a keep-alive) the added chunk has no `id`; after Azure's prompt-filter
 * chunk it has `"id":""`. The official `openai` SDK's ChatCompletionStream assigns a chunk's fields to
 * its snapshot only `if (chunk.id)`, so `finalChatCompletion().usage` is undefined: the client that
 * asked for `include_usage` loses the very usage the chunk was added for.
 */
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { codecFor } from "../../formats/index.ts";
import type { PassthroughTap } from "../../formats/codec.ts";
import { passthroughDriver } from "../../pipeline/re-translate.ts";
import { UsageChunkAdder } from "../../pipeline/add-usage-chunk.ts";
import { byteSample } from "../../pipeline/output-estimate.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const chunk = (choices: unknown[], extra: object = {}) =>
  `data: ${JSON.stringify({ id: "c-1", object: "chat.completion.chunk", created: 7, model: "gpt-x", choices, ...extra })}\n\n`;
const TEXT = chunk([{ index: 0, delta: { role: "assistant", content: "Hello there, friend" }, finish_reason: null }]);
const FINISH = chunk([{ index: 0, delta: {}, finish_reason: "stop" }]);

/** The client's bytes for the upstream `sse` read in pieces at `cuts` (adder on, input estimate 3). */
function run(sse: string, cuts: number[] = []): string {
  const codec = codecFor("openai-chat");
  const d = passthroughDriver(codec.createTap({ family: "openai", includeUsage: true }) as PassthroughTap, byteSample(codec, { family: "openai" }), undefined, new UsageChunkAdder({ estimatedInputTokens: () => 3 }));
  const bytes = enc.encode(sse);
  let out = "";
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    out += dec.decode(d.push(bytes.subarray(from, c)));
    from = c;
  }
  return out + dec.decode(d.end());
}

/** The added usage chunk's JSON (the data line before [DONE]). */
function added(out: string): Record<string, unknown> {
  const lines = out.split("\n").filter((l) => l.startsWith("data: {"));
  return JSON.parse(lines[lines.length - 1]!.slice(6));
}

/** What the official SDK's `chat.completions.stream(...).finalChatCompletion()` reads from `sse`. */
async function sdkFinal(sse: string) {
  const client = new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1", fetch: (async () => new Response(sse, { headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch });
  const s = client.chat.completions.stream({ model: "gpt-x", messages: [{ role: "user", content: "hi" }], stream_options: { include_usage: true } });
  return s.finalChatCompletion();
}

describe("the added usage chunk carries the reply's id however the reads fall", () => {
  test("a first read of only an SSE comment: same bytes as the stream read whole, id c-1, the SDK's final usage set", async () => {
    const comment = ": OPENROUTER PROCESSING\n\n";
    const sse = comment + TEXT + FINISH + "data: [DONE]\n\n";
    const whole = run(sse);
    expect(added(whole).id).toBe("c-1");
    const split = run(sse, [comment.length]);
    expect(added(split).id).toBe("c-1"); // actual: no id member
    expect(split).toBe(whole);
    expect((await sdkFinal(split)).usage?.prompt_tokens).toBe(3); // actual: usage undefined
  });

  test("after a prompt-filter chunk with id \"\" (Azure's first chunk): the reply's id, the SDK's final usage set", async () => {
    const filter = `data: ${JSON.stringify({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] })}\n\n`;
    const out = run(filter + TEXT + FINISH + "data: [DONE]\n\n");
    expect(added(out).id).toBe("c-1"); // actual: ""
    expect((await sdkFinal(out)).usage?.prompt_tokens).toBe(3); // actual: usage undefined
  });
});
