/**
 * Chat SSE decoder: every recorded openai-chat stream (text, reasoning, tool calls with parsed
 * arguments, finish reason, usage vs manifest.json), adversarial framing (one byte per read; reads cut
 * around every line end, multi-byte character and escape, test/support/split-reads.ts), and the
 * upstream quirks of REFERENCE §2.3 on small synthetic streams.
 */
import { describe, expect, test } from "bun:test";
import { normalizeEvents, TRUNCATED_ERROR } from "../../../formats/normalize.ts";
import { accumulate } from "../../../formats/accumulate.ts";
import type { HubEvent, StopReason } from "../../../formats/hub.ts";
import { manifest, recordedBytes } from "../../support/fixtures.ts";
import { decodeChat } from "../../support/openai-chat-helpers.ts";
import { expectSplitReadsDecodeAlike } from "../../support/split-reads.ts";

const utf8 = new TextEncoder();
const entries = (await manifest()).filter((e) => e.format === "openai-chat" && e.kind === "sse");

/** Compact label per event, for exact sequence assertions. */
const types = (evs: HubEvent[]) =>
  evs.map((e) =>
    e.type === "block_start" ? `start:${e.block.type}` : e.type === "block_delta" ? `delta:${e.delta.type}` : e.type === "block_stop" ? "stop" : e.type,
  );

/** The hub stop reason a Chat finish_reason means (REFERENCE §5.1), for the manifest's vocabulary. */
const FINISH_MEANS: Record<string, StopReason> = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens" };

function decodeWhole(bytes: Uint8Array) {
  return accumulate(normalizeEvents(decodeChat([bytes])));
}

/** SSE data lines of a synthetic stream → bytes. */
function sse(...payloads: Array<object | string>): Uint8Array {
  return utf8.encode(payloads.map((p) => `data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`).join(""));
}
const chunk = (delta: object, finish: string | null = null, extra: object = {}) => ({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

describe("recorded openai-chat streams", () => {
  expect(entries.length).toBeGreaterThanOrEqual(8);

  for (const entry of entries) {
    test(`${entry.file}: text, reasoning, tool calls, finish reason and usage match the recording`, async () => {
      const rec = entry.recorded!;
      const { response, error } = decodeWhole(await recordedBytes(entry.file));
      expect(error).toBeUndefined();

      const text = response.content.filter((p) => p.type === "text").map((p) => (p.type === "text" ? p.text : "")).join("");
      expect(text).toBe(rec.text);
      const thinking = response.content.filter((p) => p.type === "thinking").map((p) => (p.type === "thinking" ? p.text : "")).join("");
      expect(thinking).toBe(rec.reasoning_content ?? "");

      const calls = response.content.filter((p) => p.type === "tool_call");
      expect(calls.map((c) => (c.type === "tool_call" ? { id: c.id, name: c.name, arguments: JSON.parse(c.arguments || "{}") } : null))).toEqual(
        rec.tool_calls.map((c: any) => ({ id: c.id, name: c.name, arguments: c.arguments })),
      );

      expect(response.stopReason).toBe(FINISH_MEANS[rec.finish_reason]);
      expect(response.rawStopReason).toBe(rec.finish_reason);

      if (rec.usage === null) {
        expect(response.usage).toEqual({});
      } else {
        const u = rec.usage;
        const cached = u.cached_tokens ?? 0;
        expect(response.usage.inputTokens).toBe(u.prompt_tokens - cached);
        expect(response.usage.cacheReadTokens).toBe(cached);
        expect(response.usage.reasoningTokens).toBe(u.reasoning_tokens);
        // Output includes reasoning; providers that count reasoning outside completion_tokens (total =
        // prompt + completion + reasoning) get it added back.
        const outside = u.reasoning_tokens > 0 && u.total_tokens === u.prompt_tokens + u.completion_tokens + u.reasoning_tokens;
        expect(response.usage.outputTokens).toBe(u.completion_tokens + (outside ? u.reasoning_tokens : 0));
      }
    });
  }

  test("tool-call-index-1: text block, then one tool block whose arguments skip the empty fragments", async () => {
    const out = normalizeEvents(decodeChat([await recordedBytes("openai-chat/tool-call-index-1.sse")]));
    expect(types(out)).toEqual([
      "message_start",
      "start:text",
      "delta:text",
      "delta:text",
      "stop",
      "start:tool_call",
      "delta:tool_args",
      "delta:tool_args",
      "stop",
      "finish",
    ]);
    const start = out.find((e) => e.type === "block_start" && e.block.type === "tool_call");
    expect(start).toEqual({ type: "block_start", index: 1, block: { type: "tool_call", id: "toolu_sanitized", name: "read_file" } });
  });

  test("tool-call-empty-name-continuation: the empty name and repeated type do not change the call", async () => {
    const { response } = decodeWhole(await recordedBytes("openai-chat/tool-call-empty-name-continuation.sse"));
    expect(response.content).toEqual([
      { type: "tool_call", id: "chatcmpl-tool-9f149c74c42f265b", name: "webSearchTool", arguments: '{"query": "current Berlin weather"}' },
    ]);
  });

  test("reasoning-content-tool-call: thinking block first, kept apart from the (empty) visible text", async () => {
    const out = normalizeEvents(decodeChat([await recordedBytes("openai-chat/reasoning-content-tool-call.sse")]));
    const starts = out.filter((e) => e.type === "block_start").map((e) => (e.type === "block_start" ? e.block.type : ""));
    expect(starts).toEqual(["thinking", "tool_call"]);
    // usage rides on the finish chunk: it is emitted before the finish, so the finish closes the reply
    expect(out.at(-1)?.type).toBe("finish");
    expect(out.findIndex((e) => e.type === "usage")).toBeGreaterThan(out.findIndex((e) => e.type === "block_start" && e.block.type === "tool_call"));
  });

  test("azure-prompt-filter-results: the empty-choices first chunk opens nothing; message_start takes the real id", async () => {
    const evs = decodeChat([await recordedBytes("openai-chat/azure-prompt-filter-results.sse")]);
    expect(evs[0]).toEqual({ type: "message_start", id: "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt", model: "gpt-5-nano-2025-08-07" });
  });
});

describe("adversarial framing", () => {
  for (const entry of entries) {
    test(`${entry.file}: one byte per read equals the unsplit decode`, async () => {
      const bytes = await recordedBytes(entry.file);
      const whole = decodeChat([bytes]);
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i++) pieces.push(bytes.subarray(i, i + 1));
      expect(decodeChat(pieces)).toEqual(whole);
    });
  }

  // The reads: test/support/split-reads.ts says why they cover every state a read boundary can leave
  // the decoder in (a cut at every offset near each line end, in and around each multi-byte character
  // and escape, each checked with everything before it decoded; a seeded sample of two-piece splits);
  // the test above (one byte per read) makes every offset a read boundary as well.
  for (const entry of entries) {
    test(`${entry.file}: reads cut around every line end, character and escape equal the unsplit decode`, async () => {
      const bytes = await recordedBytes(entry.file);
      const plan = expectSplitReadsDecodeAlike(bytes, (reads) => decodeChat(reads));
      if (/[^\x00-\x7f]/.test(new TextDecoder().decode(bytes))) expect(plan.utf8Cuts).toBeGreaterThan(0);
    });
  }

  test("CRLF and CR line ends, comments, data: without a space, multi-line data are all read", () => {
    const a = JSON.stringify(chunk({ role: "assistant", content: "He" }));
    const b = JSON.stringify(chunk({ content: "llo" }));
    const c = JSON.stringify(chunk({}, "stop"));
    const text = `: keep-alive\r\n\r\ndata:${a}\r\n\r\ndata: ${b.slice(0, 20)}\ndata: ${b.slice(20)}\r\rdata: ${c}\n\ndata: [DONE]\n\n`;
    // (multi-line data joins with "\n", which JSON allows between tokens only: split at a token gap)
    const bsplit = b.indexOf('"choices"');
    const text2 = text.replace(`${b.slice(0, 20)}\ndata: ${b.slice(20)}`, `${b.slice(0, bsplit)}\ndata: ${b.slice(bsplit)}`);
    const { response, error } = accumulate(normalizeEvents(decodeChat([utf8.encode(text2)])));
    expect(error).toBeUndefined();
    expect(response.content).toEqual([{ type: "text", text: "Hello" }]);
    expect(response.stopReason).toBe("end_turn");
  });

  test("a multi-byte character split across reads is not corrupted", () => {
    const bytes = sse(chunk({ role: "assistant", content: "naïve 🙂 日本" }), chunk({}, "stop"), "[DONE]");
    const emoji = bytes.indexOf(0xf0);
    const { response } = accumulate(normalizeEvents(decodeChat([bytes.subarray(0, emoji + 2), bytes.subarray(emoji + 2)])));
    expect(response.content).toEqual([{ type: "text", text: "naïve 🙂 日本" }]);
  });
});

describe("upstream quirks", () => {
  test("B36: a name arriving after the id starts the call then; argument fragments sent before are kept", () => {
    const bytes = sse(
      chunk({ role: "assistant", content: "Reading." }),
      chunk({ tool_calls: [{ index: 0, id: "call_r", type: "function", function: { arguments: '{"file' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: "Read" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '_path":"a.cs"}' } }] }),
      chunk({}, "tool_calls"),
      "[DONE]",
    );
    const out = normalizeEvents(decodeChat([bytes]));
    expect(types(out)).toEqual(["message_start", "start:text", "delta:text", "stop", "start:tool_call", "delta:tool_args", "delta:tool_args", "stop", "finish"]);
    const { response } = accumulate(out);
    expect(response.content[1]).toEqual({ type: "tool_call", id: "call_r", name: "Read", arguments: '{"file_path":"a.cs"}' });
    expect(response.stopReason).toBe("tool_use");
  });

  test("id, type and name repeated on every fragment are taken once, never concatenated", () => {
    const frag = (args: string) => chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read", arguments: args } }] });
    const { response } = accumulate(normalizeEvents(decodeChat([sse(frag('{"a"'), frag(":1}"), chunk({}, "tool_calls"))])));
    expect(response.content).toEqual([{ type: "tool_call", id: "call_1", name: "read", arguments: '{"a":1}' }]);
  });

  test("whole arguments sent twice (fragments, then the full text again) are not doubled", () => {
    const tc = (o: object) => chunk({ tool_calls: [{ index: 0, ...o }] });
    const bytes = sse(
      tc({ id: "call_1", type: "function", function: { name: "f", arguments: '{"x":' } }),
      tc({ function: { arguments: "1}" } }),
      tc({ function: { arguments: '{"x":1}' } }),
      tc({ function: { arguments: '{"x": 1}' } }),
      chunk({}, "tool_calls"),
    );
    const { response } = accumulate(normalizeEvents(decodeChat([bytes])));
    expect(response.content).toEqual([{ type: "tool_call", id: "call_1", name: "f", arguments: '{"x":1}' }]);
  });

  test("interleaved parallel calls come out serialised with their own arguments; stop after calls → tool_use", () => {
    const tc = (o: object) => chunk({ tool_calls: [o] });
    const bytes = sse(
      tc({ index: 0, id: "call_a", type: "function", function: { name: "a", arguments: "" } }),
      tc({ index: 1, id: "call_b", type: "function", function: { name: "b", arguments: "" } }),
      tc({ index: 0, function: { arguments: '{"p":' } }),
      tc({ index: 1, function: { arguments: '{"q":2}' } }),
      tc({ index: 0, function: { arguments: "1}" } }),
      chunk({}, "stop"),
      "[DONE]",
    );
    const out = normalizeEvents(decodeChat([bytes]));
    const { response } = accumulate(out);
    expect(response.content).toEqual([
      { type: "tool_call", id: "call_a", name: "a", arguments: '{"p":1}' },
      { type: "tool_call", id: "call_b", name: "b", arguments: '{"q":2}' },
    ]);
    expect(response.stopReason).toBe("tool_use");
    expect(response.rawStopReason).toBe("stop");
  });

  test("tool calls without index and without id: new ids start new calls; a missing id is synthesised", () => {
    const bytes = sse(
      chunk({ tool_calls: [{ id: "call_a", type: "function", function: { name: "a", arguments: "{}" } }] }),
      chunk({ tool_calls: [{ id: "call_b", type: "function", function: { name: "b", arguments: '{"k":' } }] }),
      chunk({ tool_calls: [{ function: { arguments: "1}" } }] }),
      chunk({ tool_calls: [{ index: 5, function: { name: "c", arguments: { z: true } } }] }),
      chunk({}, "tool_calls"),
    );
    const { response } = accumulate(normalizeEvents(decodeChat([bytes])));
    const calls = response.content.map((p) => (p.type === "tool_call" ? [p.name, p.arguments] : null));
    expect(calls).toEqual([
      ["a", "{}"],
      ["b", '{"k":1}'],
      ["c", '{"z":true}'],
    ]);
    const synth = response.content[2];
    expect(synth.type === "tool_call" && synth.id).toMatch(/^call_[A-Za-z0-9_-]+$/);
  });

  test("parallel calls that all say index 0 but carry distinct ids stay separate calls", () => {
    const bytes = sse(
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "a", arguments: '{"x":1}' } }] }),
      chunk({ tool_calls: [{ index: 0, id: "call_b", type: "function", function: { name: "b", arguments: '{"y":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "2}" } }] }),
      chunk({}, "tool_calls"),
    );
    const { response } = accumulate(normalizeEvents(decodeChat([bytes])));
    expect(response.content).toEqual([
      { type: "tool_call", id: "call_a", name: "a", arguments: '{"x":1}' },
      { type: "tool_call", id: "call_b", name: "b", arguments: '{"y":2}' },
    ]);
  });

  test("a finish_reason then EOF without [DONE] is a complete reply", () => {
    const { response, error } = accumulate(normalizeEvents(decodeChat([sse(chunk({ content: "ok" }), chunk({}, "length"))])));
    expect(error).toBeUndefined();
    expect(response.stopReason).toBe("max_tokens");
  });

  test("EOF without any finish_reason ends in the truncation error, never a finish", () => {
    const out = normalizeEvents(decodeChat([sse(chunk({ role: "assistant", content: "partial" }))]));
    expect(types(out)).toEqual(["message_start", "start:text", "delta:text", "error"]);
    expect(out.at(-1)).toEqual({ type: "error", error: TRUNCATED_ERROR });
  });

  test("[DONE] without a finish_reason is not a finish either", () => {
    const out = normalizeEvents(decodeChat([sse(chunk({ content: "partial" }), "[DONE]")]));
    expect(out.some((e) => e.type === "finish")).toBe(false);
    expect(out.at(-1)?.type).toBe("error");
  });

  test("an in-band error frame becomes a hub error with its kind; nothing after it", () => {
    const bytes = sse(
      chunk({ content: "par" }),
      { error: { message: "Rate limit reached. Please try again in 1.5s.", type: "requests", code: "rate_limit_exceeded", param: null } },
      chunk({ content: "tial" }, "stop"),
    );
    const evs = decodeChat([bytes]);
    const err = evs.at(-1);
    expect(err?.type).toBe("error");
    if (err?.type === "error") {
      expect(err.error.kind).toBe("rate_limit");
      expect(err.error.code).toBe("rate_limit_exceeded");
      expect(err.error.retryAfterSeconds).toBe(1.5);
    }
    expect(evs.filter((e) => e.type === "finish")).toEqual([]);
  });

  test("vLLM error object and OpenRouter finish_reason error are errors, not finishes", () => {
    const a = decodeChat([sse({ object: "error", message: "This model's maximum context length is 4096 tokens", type: "BadRequestError", code: 400 })]);
    expect(a.at(-1)).toMatchObject({ type: "error", error: { kind: "context_length_exceeded", status: 400 } });
    const b = normalizeEvents(decodeChat([sse(chunk({ content: "x" }), chunk({}, "error"))]));
    expect(b.some((e) => e.type === "finish")).toBe(false);
    expect(b.at(-1)?.type).toBe("error");
  });

  test("a data line that is not JSON is an error event, not an exception", () => {
    const evs = decodeChat([utf8.encode(`data: ${JSON.stringify(chunk({ content: "a" }))}\n\ndata: {oops\n\n`)]);
    expect(evs.at(-1)).toMatchObject({ type: "error", error: { kind: "api_error" } });
  });

  test("reasoning: reasoning_content, reasoning, and OpenRouter reasoning_details with a signature", () => {
    const bytes = sse(
      chunk({ role: "assistant", reasoning: "think ", reasoning_details: [{ type: "reasoning.text", text: "think " }] }),
      chunk({ reasoning_details: [{ type: "reasoning.text", text: "more", signature: "sig123" }] }),
      chunk({ content: "answer" }),
      chunk({}, "stop"),
    );
    const { response } = accumulate(normalizeEvents(decodeChat([bytes], "provider:openrouter")));
    expect(response.content).toEqual([
      { type: "thinking", text: "think more", signature: { family: "provider:openrouter", value: "sig123" } },
      { type: "text", text: "answer" },
    ]);
  });

  test("usage on every chunk, usage: null, x_groq.usage: the last snapshot wins", () => {
    const u = (p: number, c: number) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c });
    const bytes = sse(
      chunk({ content: "a" }, null, { usage: null }),
      chunk({ content: "b" }, null, { usage: u(10, 1) }),
      chunk({}, "stop", { x_groq: { usage: u(10, 2) } }),
    );
    const { response } = accumulate(normalizeEvents(decodeChat([bytes])));
    expect(response.usage).toEqual({ inputTokens: 10, outputTokens: 2 });
  });

  test("vLLM stop_reason naming the matched string → stop_sequence; a refusal → refusal", () => {
    const a = sse(chunk({ content: "x" }), { ...chunk({}, "stop"), choices: [{ index: 0, delta: {}, finish_reason: "stop", stop_reason: "</answer>" }] });
    const fa = normalizeEvents(decodeChat([a])).find((e) => e.type === "finish");
    expect(fa).toEqual({ type: "finish", reason: "stop_sequence", raw: "stop", stopSequence: "</answer>" });
    const b = sse(chunk({ refusal: "I can't help with that." }), chunk({}, "stop"));
    const { response } = accumulate(normalizeEvents(decodeChat([b])));
    expect(response.stopReason).toBe("refusal");
    expect(response.content).toEqual([{ type: "text", text: "I can't help with that.", refusal: true }]);
  });

  test("choices of other indices (n > 1) are ignored; content after the finish is ignored", () => {
    const bytes = sse(
      { ...chunk({}), choices: [{ index: 1, delta: { content: "other" }, finish_reason: null }, { index: 0, delta: { content: "mine" }, finish_reason: null }] },
      chunk({}, "stop"),
      chunk({ content: "late" }),
    );
    const { response } = accumulate(normalizeEvents(decodeChat([bytes])));
    expect(response.content).toEqual([{ type: "text", text: "mine" }]);
  });
});
