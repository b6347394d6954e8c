/**
 * pipeline/add-usage-chunk.ts through the native Chat passthrough driver: the usage chunk a client
 * that asked for `include_usage` gets before `data: [DONE]` when the upstream sent none, however the
 * reads split the stream; nothing added to a stream that had usage, failed, or was cut. The added
 * chunk carries the last non-empty `id` of a chunk wherever it comes and however the reads fell (a
 * new `chatcmpl-` id when none came): the official `openai` SDK's
 * ChatCompletionStream takes a chunk into its result only `if (chunk.id)`, so without one
 * `finalChatCompletion().usage` is undefined.
 */
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { runWithUsageChunk } from "../support/chat-usage-chunk.ts";

const chunk = (choices: unknown[], extra: object = {}) =>
  `data: ${JSON.stringify({ id: "c-1", object: "chat.completion.chunk", created: 7, model: "gpt-x", system_fingerprint: "fp_1", choices, ...extra })}\n\n`;
const TEXT = chunk([{ index: 0, delta: { role: "assistant", content: "Hello there, friend" }, finish_reason: null }]);
const FINISH = chunk([{ index: 0, delta: {}, finish_reason: "stop" }]);
const USAGE = '{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}';
const ADDED = `data: {"id":"c-1","object":"chat.completion.chunk","created":7,"model":"gpt-x","system_fingerprint":"fp_1","choices":[],"usage":${USAGE}}\n\n`;

const run = runWithUsageChunk;

describe("the usage chunk of a native Chat stream without one", () => {
  test("before [DONE], the first chunk's id, created, model and fingerprint, the estimate (19 characters: 5 tokens)", () => {
    expect(run(TEXT + FINISH + "data: [DONE]\n\n")).toBe(TEXT + FINISH + ADDED + "data: [DONE]\n\n");
  });

  test("[DONE] split across reads, and in a read of its own", () => {
    const sse = TEXT + FINISH + "data: [DONE]\n\n";
    const at = sse.indexOf("[DO");
    expect(run(sse, [at])).toBe(TEXT + FINISH + ADDED + "data: [DONE]\n\n");
    expect(run(sse, [sse.indexOf("data: [DONE]")])).toBe(TEXT + FINISH + ADDED + "data: [DONE]\n\n");
  });

  test("CRLF framing and data:[DONE] without the space", () => {
    const crlf = (TEXT + FINISH).replaceAll("\n", "\r\n") + "data:[DONE]\r\n\r\n";
    expect(run(crlf)).toBe((TEXT + FINISH).replaceAll("\n", "\r\n") + ADDED + "data:[DONE]\r\n\r\n");
  });

  test("a finish without [DONE]: the chunk before the [DONE] the end adds", () => {
    expect(run(TEXT + FINISH)).toBe(TEXT + FINISH + ADDED + "data: [DONE]\n\n");
  });

  test("a stream with its usage chunk goes through byte for byte", () => {
    const sse = TEXT + FINISH + chunk([], { usage: { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 } }) + "data: [DONE]\n\n";
    expect(run(sse)).toBe(sse);
  });

  test("a cut stream (no finish) and an in-band error get nothing added", () => {
    expect(run(TEXT, [], true)).not.toContain('"choices":[]');
    const err = TEXT + `data: {"error":{"message":"overloaded","type":"server_error"}}\n\n` + "data: [DONE]\n\n";
    expect(run(err)).toBe(err);
  });

  test("a text that holds \\ndata: [DONE] escaped is no [DONE] line", () => {
    const tricky = chunk([{ index: 0, delta: { role: "assistant", content: "\ndata: [DONE]\n" }, finish_reason: null }]);
    const out = run(tricky + FINISH + "data: [DONE]\n\n");
    expect(out.startsWith(tricky + FINISH + "data: {")).toBe(true);
    expect(out.endsWith('"choices":[],' + `"usage":${USAGE.replace('"completion_tokens":5', '"completion_tokens":4').replace('"total_tokens":8', '"total_tokens":7')}}\n\ndata: [DONE]\n\n`)).toBe(true);
  });

  test("a usage chunk with only total_tokens goes through as it came, no second usage chunk", () => {
    const sse = TEXT + FINISH + chunk([], { usage: { total_tokens: 11 } }) + "data: [DONE]\n\n";
    const out = run(sse);
    expect(out.match(/"choices":\[\],"usage"/g)?.length).toBe(1);
    expect(out).toBe(sse);
  });
});

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
    expect(whole).toBe(comment + TEXT + FINISH + ADDED + "data: [DONE]\n\n");
    const split = run(sse, [comment.length]);
    expect(split).toBe(whole);
    expect((await sdkFinal(split)).usage?.prompt_tokens).toBe(3);
  });

  test("a first chunk over 16 KiB: its id (c-1), read whole or split after it", async () => {
    const big = chunk([{ index: 0, delta: { role: "assistant", content: "x".repeat(17 * 1024) }, finish_reason: null }]);
    const sse = big + TEXT + FINISH + "data: [DONE]\n\n";
    const whole = run(sse);
    expect(added(whole).id).toBe("c-1");
    expect(run(sse, [big.length])).toBe(whole);
    expect(run(sse, [big.length, big.length + TEXT.length])).toBe(whole);
    expect((await sdkFinal(whole)).usage?.prompt_tokens).toBe(3);
  });

  test("after a prompt-filter chunk with id \"\" (Azure's first chunk): the reply's id, read whole or split, the SDK's final usage set", async () => {
    const filter = `data: ${JSON.stringify({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] })}\n\n`;
    const sse = filter + TEXT + FINISH + "data: [DONE]\n\n";
    const out = run(sse);
    expect(out).toBe(filter + TEXT + FINISH + ADDED + "data: [DONE]\n\n");
    expect(run(sse, [filter.length])).toBe(out);
    expect((await sdkFinal(out)).usage?.prompt_tokens).toBe(3);
  });

  test("after 20 chunks without an id (\"\", none, a tool call's id only): the first id that comes, read whole or line by line, the SDK's final usage set", async () => {
    const emptyId = `data: ${JSON.stringify({ choices: [], id: "", object: "" })}\n\n`;
    const noId = `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "id" }, finish_reason: null }] })}\n\n`;
    const callIdOnly = `data: ${JSON.stringify({ id: "", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }, finish_reason: null }] })}\n\n`;
    const lead = emptyId.repeat(9) + noId.repeat(10) + callIdOnly;
    const sse = lead + TEXT + FINISH + "data: [DONE]\n\n";
    const whole = run(sse);
    expect(whole).toBe(lead + TEXT + FINISH + ADDED.replace('"completion_tokens":5,"total_tokens":8', '"completion_tokens":10,"total_tokens":13') + "data: [DONE]\n\n");
    const cuts: number[] = [];
    for (let at = sse.indexOf("\n\n") + 2; at < sse.length; at = sse.indexOf("\n\n", at) + 2) cuts.push(at);
    expect(run(sse, cuts)).toBe(whole);
    expect((await sdkFinal(whole)).usage?.prompt_tokens).toBe(3);
  });

  test("no chunk with an id: a new chatcmpl- id, the SDK's final usage and text set", async () => {
    const plain = (choices: unknown[]) => `data: ${JSON.stringify({ object: "chat.completion.chunk", created: 7, model: "gpt-x", choices })}\n\n`;
    const sse = plain([{ index: 0, delta: { role: "assistant", content: "Hello there, friend" }, finish_reason: null }]) + plain([{ index: 0, delta: {}, finish_reason: "stop" }]) + "data: [DONE]\n\n";
    const out = run(sse);
    expect(Object.keys(added(out))).toEqual(["id", "object", "choices", "usage"]);
    expect(String(added(out).id)).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(added(run(sse, [sse.indexOf("data: [DONE]")])).id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    const final = await sdkFinal(out);
    expect(final.usage).toEqual({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
    expect(final.choices[0]?.message.content).toBe("Hello there, friend");
  });
});

/**
 * Found in session 45's list ("Not done yet"; fixed in session 46): the added chunk took the stream's
 * first id, where the openai SDK keeps the last (its ChatCompletionStream copies every chunk's `id`,
 * `model`, … that has an id into its result, the last one read winning). A stream whose id changed (c-1,
 * then c-2) got a usage chunk with c-1's head: the SDK's `finalChatCompletion()` then said id c-1 and
 * model gpt-x, though the upstream ended with c-2 and gpt-y. Expected: the last chunk's id, created,
 * model and fingerprint, however the reads fall.
 */
describe("the added usage chunk carries the last id when the chunks' ids change", () => {
  const second = (choices: unknown[]) => chunk(choices, { id: "c-2", created: 9, model: "gpt-y", system_fingerprint: "fp_2" });
  const TEXT2 = second([{ index: 0, delta: { content: " again" }, finish_reason: null }]);
  const FINISH2 = second([{ index: 0, delta: {}, finish_reason: "stop" }]);
  const sse = TEXT + TEXT2 + FINISH2 + "data: [DONE]\n\n";
  const ADDED2 = ADDED.replace('"id":"c-1","object":"chat.completion.chunk","created":7,"model":"gpt-x","system_fingerprint":"fp_1"', '"id":"c-2","object":"chat.completion.chunk","created":9,"model":"gpt-y","system_fingerprint":"fp_2"').replace('"completion_tokens":5,"total_tokens":8', '"completion_tokens":7,"total_tokens":10');

  test("read whole, line by line, or with [DONE] alone: the last chunk's head (c-2, 9, gpt-y, fp_2)", () => {
    const whole = run(sse);
    expect(whole).toBe(TEXT + TEXT2 + FINISH2 + ADDED2 + "data: [DONE]\n\n");
    expect(run(sse, [TEXT.length, TEXT.length + TEXT2.length, sse.indexOf("data: [DONE]")])).toBe(whole);
    expect(run(sse, [TEXT.length])).toBe(whole);
    expect(run(sse, [sse.indexOf("data: [DONE]")])).toBe(whole);
  });

  test("the SDK's final completion has the id the upstream ended with (c-2), all the text and the usage", async () => {
    const final = await sdkFinal(run(sse));
    expect({ id: final.id, model: final.model, text: final.choices[0]?.message.content, prompt: final.usage?.prompt_tokens }).toEqual({ id: "c-2", model: "gpt-y", text: "Hello there, friend again", prompt: 3 });
  });

  test("chunks without an id of their own after c-2 (an empty id, a tool call's id only) leave c-2", () => {
    const emptyId = `data: ${JSON.stringify({ choices: [], id: "", object: "" })}\n\n`;
    const callIdOnly = `data: ${JSON.stringify({ id: "", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }, finish_reason: null }] })}\n\n`;
    const withTail = TEXT + TEXT2 + callIdOnly + emptyId + chunk([{ index: 0, delta: {}, finish_reason: "stop" }], { id: "" });
    const out = run(withTail + "data: [DONE]\n\n");
    expect(added(out).id).toBe("c-2");
    expect(added(run(withTail + "data: [DONE]\n\n", [TEXT.length + TEXT2.length]))).toEqual(added(out));
  });
});
