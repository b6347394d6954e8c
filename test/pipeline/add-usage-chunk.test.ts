/**
 * pipeline/add-usage-chunk.ts through the native Chat passthrough driver: the usage chunk a client
 * that asked for `include_usage` gets before `data: [DONE]` when the upstream sent none, however the
 * reads split the stream; nothing added to a stream that had usage, failed, or was cut.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { PassthroughTap } from "../../formats/codec.ts";
import { passthroughDriver } from "../../pipeline/re-translate.ts";
import { UsageChunkAdder } from "../../pipeline/add-usage-chunk.ts";
import { byteSample } from "../../pipeline/output-estimate.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const chunk = (choices: unknown[], extra: object = {}) =>
  `data: ${JSON.stringify({ id: "c-1", object: "chat.completion.chunk", created: 7, model: "gpt-x", system_fingerprint: "fp_1", choices, ...extra })}\n\n`;
const TEXT = chunk([{ index: 0, delta: { role: "assistant", content: "Hello there, friend" }, finish_reason: null }]);
const FINISH = chunk([{ index: 0, delta: {}, finish_reason: "stop" }]);
const USAGE = '{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}';
const ADDED = `data: {"id":"c-1","object":"chat.completion.chunk","created":7,"model":"gpt-x","system_fingerprint":"fp_1","choices":[],"usage":${USAGE}}\n\n`;

/** The client's bytes for the upstream `sse` read in pieces at `cuts`, the adder on (input estimate 3). */
function run(sse: string, cuts: number[] = [], failure = false): string {
  const codec = codecFor("openai-chat");
  const d = passthroughDriver(codec.createTap({ family: "openai", includeUsage: true }) as PassthroughTap, byteSample(codec, { family: "openai" }), undefined, new UsageChunkAdder({ estimatedInputTokens: () => 3 }));
  const bytes = enc.encode(sse);
  let out = "";
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    out += dec.decode(d.push(bytes.subarray(from, c)));
    from = c;
  }
  return out + dec.decode(failure ? d.end({ kind: "api_error", status: 502, message: "broke" }) : d.end());
}

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
});
