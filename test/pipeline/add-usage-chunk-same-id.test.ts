/**
 * Regression test (found in session 47's review of session 46's lastChunkHead, commit 06c3d35d; fixed
 * in session 47).
 *
 * What failed: a native Chat stream whose upstream ignores `stream_options` (so the gateway adds the
 * usage chunk) and whose chunks keep one id but change `created`, `model` or `system_fingerprint` along
 * the way (servers that stamp `created` per chunk, e.g. llama.cpp and Ollama, over a reply longer than
 * a second; a fingerprint only on later chunks): the openai SDK's `finalChatCompletion()` read the
 * FIRST chunk's `created` / `model` / `system_fingerprint` (created 7, gpt-x, fp_1 below), and only when
 * the stream came in more than one read; read whole it got the last chunk's. The SDK copies every member
 * of each chunk with an id into its result, the last winning (openai lib/ChatCompletionStream.js
 * `accumulateChatCompletion`: `else if (chunk.id) assignOwnProperties(snapshot, rest)`), so the added
 * chunk overwrites what the upstream ended with.
 *
 * Why: formats/openai-chat/usage-chunk.ts lastChunkHead returned the `known` head unchanged whenever a
 * later line held the same `"id":"c-1"` member (a byte compare of the id only, in both `return known`
 * paths), without looking at the newer fields. Now the shortcut also needs the line to hold the known
 * `created`, `model` and `system_fingerprint` members as written (and none the known head lacked);
 * otherwise the line is parsed.
 */
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { runWithUsageChunk } from "../support/chat-usage-chunk.ts";
import { lastChunkHead } from "../../formats/openai-chat/usage-chunk.ts";

const enc = new TextEncoder();
const chunk = (choices: unknown[], extra: object = {}) =>
  `data: ${JSON.stringify({ id: "c-1", object: "chat.completion.chunk", created: 7, model: "gpt-x", system_fingerprint: "fp_1", choices, ...extra })}\n\n`;
const FIRST = chunk([{ index: 0, delta: { role: "assistant", content: "Hello there, friend" }, finish_reason: null }]);
// same id, a later second, another model snapshot and fingerprint
const LAST = chunk([{ index: 0, delta: {}, finish_reason: "stop" }], { created: 12, model: "gpt-x-2", system_fingerprint: "fp_2" });
const SSE = FIRST + LAST + "data: [DONE]\n\n";

const run = runWithUsageChunk;

async function sdkFinal(sse: string) {
  const client = new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1", fetch: (async () => new Response(sse, { headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch });
  const s = client.chat.completions.stream({ model: "gpt-x", messages: [{ role: "user", content: "hi" }], stream_options: { include_usage: true } });
  const f = await s.finalChatCompletion();
  return { id: f.id, created: f.created, model: f.model, system_fingerprint: f.system_fingerprint, prompt: f.usage?.prompt_tokens };
}

describe("the added usage chunk of a stream whose id stays but whose created/model/fingerprint change", () => {
  test("the SDK's final completion is the last chunk's, read whole or in two reads", async () => {
    const want = { id: "c-1", created: 12, model: "gpt-x-2", system_fingerprint: "fp_2", prompt: 3 };
    expect(await sdkFinal(run(SSE))).toEqual(want);
    expect(await sdkFinal(run(SSE, [FIRST.length]))).toEqual(want); // before the fix: created 7, gpt-x, fp_1
  });

  test("a fingerprint only from the second chunk on, read chunk by chunk: fp_2 in the added chunk", async () => {
    const bare = (choices: unknown[], extra: object = {}) => `data: ${JSON.stringify({ id: "c-1", object: "chat.completion.chunk", created: 7, model: "gpt-x", choices, ...extra })}\n\n`;
    const a = bare([{ index: 0, delta: { role: "assistant", content: "Hello" }, finish_reason: null }]);
    const b = bare([{ index: 0, delta: {}, finish_reason: "stop" }], { system_fingerprint: "fp_2" });
    const sse = a + b + "data: [DONE]\n\n";
    const split = run(sse, [a.length]);
    expect(split).toBe(run(sse));
    expect((await sdkFinal(split)).system_fingerprint).toBe("fp_2");
  });

  test("llama.cpp's member order (choices first, created per chunk 71 → 710): the last created, read line by line", () => {
    const llama = (created: number, choices: unknown[]) => `data: ${JSON.stringify({ choices, created, id: "chatcmpl-L", model: "qwen", system_fingerprint: "b6000-x", object: "chat.completion.chunk" })}\n\n`;
    const lines = [llama(71, [{ index: 0, delta: { role: "assistant", content: "a" }, finish_reason: null }]), llama(71, [{ index: 0, delta: { content: "b" }, finish_reason: null }]), llama(710, [{ index: 0, delta: {}, finish_reason: "stop" }])];
    const sse = lines.join("") + "data: [DONE]\n\n";
    const cuts = [lines[0]!.length, lines[0]!.length + lines[1]!.length];
    const out = run(sse, cuts);
    expect(out).toBe(run(sse));
    expect(out).toContain(`data: {"id":"chatcmpl-L","object":"chat.completion.chunk","created":710,"model":"qwen","system_fingerprint":"b6000-x","choices":[],"usage":`);
  });

  test("Python json.dumps spacing (\"id\": \"c-1\"): a changed model is seen split, an unchanged line costs no parse", () => {
    const py = (model: string, content: string) => `data: ${JSON.stringify({ id: "c-1", object: "chat.completion.chunk", created: 7, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] }, null, 0).replaceAll('":', '": ').replaceAll(',"', ', "')}\n\n`;
    const first = enc.encode(py("gpt-x", "a"));
    const known = lastChunkHead(first)!;
    expect(known.model).toBe("gpt-x");
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = ((t: string) => (parses++, parse(t))) as typeof JSON.parse;
    try {
      expect(lastChunkHead(enc.encode(py("gpt-x", "b")), known)).toBe(known);
      expect(parses).toBe(0);
      expect(lastChunkHead(enc.encode(py("gpt-x-2", "c")), known)?.model).toBe("gpt-x-2");
      expect(parses).toBe(1);
    } finally {
      JSON.parse = parse;
    }
  });

  test("choices between the head members (created first, then choices, then id and model): an unchanged line costs no parse, a changed model is read", () => {
    const odd = (model: string, content: string) => `data: {"created":7,"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}],"id":"c-1","model":${JSON.stringify(model)}}\n\n`;
    const known = lastChunkHead(enc.encode(odd("gpt-x", "a")))!;
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = ((t: string) => (parses++, parse(t))) as typeof JSON.parse;
    try {
      expect(lastChunkHead(enc.encode(odd("gpt-x", "b")), known)).toBe(known);
      expect(parses).toBe(0);
      expect(lastChunkHead(enc.encode(odd("gpt-x-2", "c")), known)?.model).toBe("gpt-x-2");
      expect(parses).toBe(1);
    } finally {
      JSON.parse = parse;
    }
  });

  test("the usual stream (nothing changes): no parse after the first line, whatever the reads; a changed created is parsed once", () => {
    const known = lastChunkHead(enc.encode(FIRST))!;
    const same = enc.encode(chunk([{ index: 0, delta: { content: "more" }, finish_reason: null }]).repeat(3));
    const call = enc.encode(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }, finish_reason: null }]));
    const later = enc.encode(chunk([], { created: 71 }));
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = ((t: string) => (parses++, parse(t))) as typeof JSON.parse;
    try {
      expect(lastChunkHead(same, known)).toBe(known);
      expect(lastChunkHead(call, known)).toBe(known);
      expect(parses).toBe(0);
      expect(lastChunkHead(later, known)?.created).toBe(71); // "created":7 is not "created":71
      expect(parses).toBe(1);
    } finally {
      JSON.parse = parse;
    }
  });
});
