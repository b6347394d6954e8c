/**
 * Chat SSE encoder: every recorded openai-chat stream decoded → normalized → re-encoded must be
 * accepted by the official `openai` SDK's `chat.completions.stream(...).finalChatCompletion()` with the
 * recording's text, tool calls, finish reason and usage (usage chunk only when asked for), including the
 * two recordings the SDK rejects as they are. Plus the stream grammar of REFERENCE §7 item 2 and the
 * failure endings of SPEC 6.4.
 */
import { describe, expect, test } from "bun:test";
import { APIError } from "openai";
import type { HubEvent } from "../../../formats/hub.ts";
import { TRUNCATED_ERROR } from "../../../formats/normalize.ts";
import { parseRequest } from "../../../formats/openai-chat/parse.ts";
import { DUMMY_THOUGHT_SIGNATURE, gemini } from "../../../formats/gemini/index.ts";
import { manifest, recordedBytes } from "../../support/fixtures.ts";
import { encodeChat, reencodeChat, sdkChunks, sdkFinalChatCompletion, ssePayloads } from "../../support/openai-chat-helpers.ts";

const entries = (await manifest()).filter((e) => e.format === "openai-chat" && e.kind === "sse");

/** Chat finish_reason a hub client sees for the recording's own finish_reason (here: identity). */
const EXPECTED_FINISH: Record<string, string> = { stop: "stop", tool_calls: "tool_calls", length: "length" };

/** Checks the grammar every Chat stream we emit must follow (REFERENCE §7 item 2, SPEC F-5). */
function checkGrammar(text: string, includeUsage: boolean) {
  const payloads = ssePayloads(text);
  expect(payloads.at(-1)).toBe("[DONE]");
  expect(payloads.filter((p) => p === "[DONE]").length).toBe(1);
  const chunks = payloads.slice(0, -1);
  const ids = new Set(chunks.map((c) => c.id));
  const created = new Set(chunks.map((c) => c.created));
  expect(ids.size).toBe(1);
  expect([...ids][0]).toMatch(/^chatcmpl-[A-Za-z0-9_-]+$/);
  expect(created.size).toBe(1);
  // role exactly once, on the first chunk
  const roles = chunks.filter((c) => c.choices[0]?.delta?.role !== undefined);
  expect(roles.length).toBe(1);
  expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
  // each tool slot: id/type/name once, on its first fragment; slots 0..n-1 in order of appearance
  const seen: number[] = [];
  for (const c of chunks) {
    for (const tc of c.choices[0]?.delta?.tool_calls ?? []) {
      if (!seen.includes(tc.index)) {
        expect(tc.index).toBe(seen.length);
        seen.push(tc.index);
        expect(typeof tc.id).toBe("string");
        expect(tc.type).toBe("function");
        expect(typeof tc.function.name).toBe("string");
      } else {
        expect(Object.keys(tc).sort()).toEqual(["function", "index"]);
        expect(Object.keys(tc.function)).toEqual(["arguments"]);
      }
    }
  }
  // finish chunk once, then (only when asked) the usage chunk
  const finishAt = chunks.findIndex((c) => c.choices[0]?.finish_reason);
  expect(finishAt).toBeGreaterThan(0);
  expect(chunks.filter((c) => c.choices[0]?.finish_reason).length).toBe(1);
  expect(chunks[finishAt].choices[0].delta).toEqual({});
  const usageChunks = chunks.filter((c) => c.choices.length === 0);
  if (includeUsage) {
    expect(usageChunks.length).toBe(1);
    expect(chunks.indexOf(usageChunks[0])).toBe(chunks.length - 1);
    expect(chunks.length - 1).toBe(finishAt + 1);
  } else {
    expect(usageChunks.length).toBe(0);
    expect(finishAt).toBe(chunks.length - 1);
  }
  return chunks;
}

describe("recorded streams re-encoded for a Chat client", () => {
  for (const entry of entries) {
    for (const includeUsage of [true, false]) {
      test(`${entry.file} (include_usage ${includeUsage}): the SDK accumulates the recording's answer`, async () => {
        const rec = entry.recorded!;
        const text = reencodeChat(await recordedBytes(entry.file), { includeUsage });
        const chunks = checkGrammar(text, includeUsage);

        const done = await sdkFinalChatCompletion(text, includeUsage);
        const msg = done.choices[0].message;
        expect(msg.content ?? "").toBe(rec.text);
        expect(done.choices[0].finish_reason).toBe(EXPECTED_FINISH[rec.finish_reason] as never);
        expect((msg.tool_calls ?? []).map((c: any) => ({ id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) }))).toEqual(
          rec.tool_calls.map((c: any) => ({ id: c.id, name: c.name, arguments: c.arguments })),
        );
        // reasoning travels in delta.reasoning_content, never inside content
        const reasoning = chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? "").join("");
        expect(reasoning).toBe(rec.reasoning_content ?? "");

        if (!includeUsage) {
          expect(done.usage).toBeUndefined();
        } else if (rec.usage === null) {
          expect(done.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
        } else {
          const u = rec.usage;
          const outside = u.reasoning_tokens > 0 && u.total_tokens === u.prompt_tokens + u.completion_tokens + u.reasoning_tokens;
          const completion = u.completion_tokens + (outside ? u.reasoning_tokens : 0);
          expect(done.usage).toEqual({
            prompt_tokens: u.prompt_tokens,
            completion_tokens: completion,
            total_tokens: u.prompt_tokens + completion,
            prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
            completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
          });
        }
      });
    }
  }

  test("the two recordings the SDK rejects as they are come out valid", async () => {
    for (const file of ["openai-chat/tool-call-index-1.sse", "openai-chat/tool-call-empty-name-continuation.sse"]) {
      const raw = await recordedBytes(file);
      await expect(sdkFinalChatCompletion(raw)).rejects.toThrow();
      const done = await sdkFinalChatCompletion(reencodeChat(raw));
      expect(done.choices[0].message.tool_calls?.length).toBe(1);
      expect(done.choices[0].finish_reason).toBe("tool_calls");
    }
  });
});

// A small canonical stream used by the failure tests.
const start: HubEvent = { type: "message_start", id: "msg_1", model: "up" };
const text = (t: string, index = 0): HubEvent[] => [
  { type: "block_start", index, block: { type: "text" } },
  { type: "block_delta", index, delta: { type: "text", text: t } },
];

describe("failures after commit (SPEC 6.4)", () => {
  test("an error after content: one error frame, then [DONE], no finish chunk; the SDK raises it", async () => {
    const sse = encodeChat([start, ...text("Hel"), { type: "error", error: { kind: "overloaded", status: 529, message: "Overloaded, try later" } }]);
    const payloads = ssePayloads(sse);
    expect(payloads.slice(-2)).toEqual([{ error: { message: "Overloaded, try later", type: "server_error", param: null, code: "overloaded" } }, "[DONE]"]);
    expect(payloads.some((p) => p !== "[DONE]" && p.choices?.[0]?.finish_reason)).toBe(false);
    const err = await sdkFinalChatCompletion(sse).catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(String(err.message)).toContain("Overloaded, try later");
    await expect(sdkChunks(sse)).rejects.toBeInstanceOf(APIError);
  });

  test("a stream that ends without a finish gets the truncation error; the SDK never sees a finished completion", async () => {
    const sse = encodeChat([start, ...text("partial")]);
    const payloads = ssePayloads(sse);
    expect(payloads.at(-2)).toEqual({ error: { message: TRUNCATED_ERROR.message, type: "server_error", param: null, code: "upstream_truncated" } });
    await expect(sdkFinalChatCompletion(sse)).rejects.toBeInstanceOf(APIError);
  });

  test("an error before any content is just the error frame and [DONE] (no role chunk)", () => {
    const sse = encodeChat([{ type: "error", error: { kind: "rate_limit", status: 429, message: "slow down" } }]);
    expect(sse).toBe(`data: {"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}\n\ndata: [DONE]\n\n`);
  });

  test("an error after the finish only adds the missing closing frames", async () => {
    const sse = encodeChat(
      [start, ...text("done"), { type: "block_stop", index: 0 }, { type: "finish", reason: "end_turn" }, { type: "error", error: TRUNCATED_ERROR }],
      { includeUsage: true },
    );
    const payloads = ssePayloads(sse);
    expect(payloads.some((p) => p !== "[DONE]" && p.error)).toBe(false);
    const done = await sdkFinalChatCompletion(sse, true);
    expect(done.choices[0].message.content).toBe("done");
    expect(done.choices[0].finish_reason).toBe("stop");
  });

  test("B12-chat shape: a finish with no closing frames from upstream still ends in [DONE] exactly once", () => {
    const sse = encodeChat([start, ...text("Done."), { type: "block_stop", index: 0 }, { type: "finish", reason: "end_turn" }, { type: "usage", usage: { outputTokens: 3 } }]);
    const payloads = ssePayloads(sse);
    expect(payloads.filter((p) => p === "[DONE]").length).toBe(1);
    expect(payloads.at(-2).choices[0].finish_reason).toBe("stop");
  });
});

describe("encoder details", () => {
  test("a no-argument tool call gets arguments {} once; two calls get slots 0 and 1; stop reason tool_calls", async () => {
    const sse = encodeChat([
      start,
      { type: "block_start", index: 0, block: { type: "tool_call", id: "toolu_a", name: "ls" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "toolu_b", name: "read" } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"p":' } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: '"x"}' } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "tool_use" },
    ]);
    checkGrammar(sse, false);
    const done = await sdkFinalChatCompletion(sse);
    expect(done.choices[0].message.tool_calls).toEqual([
      { id: "toolu_a", type: "function", function: { name: "ls", arguments: "{}" } },
      { id: "toolu_b", type: "function", function: { name: "read", arguments: '{"p":"x"}' } },
    ] as never);
    expect(done.choices[0].finish_reason).toBe("tool_calls");
  });

  test("thinking → reasoning_content with summary parts separated; each signed block whole, and redacted thinking, in one reasoning_details delta before the finish with the state tagged", () => {
    const sig = { family: "anthropic" as const, value: "sig" };
    const sse = encodeChat([
      start,
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "block_delta", index: 0, delta: { type: "thinking_part" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "First." } },
      { type: "block_delta", index: 0, delta: { type: "thinking_part" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "Second." } },
      { type: "block_delta", index: 0, delta: { type: "signature", signature: sig } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "redacted_thinking", data: sig } },
      { type: "block_stop", index: 1 },
      ...text("Answer", 2),
      { type: "block_stop", index: 2 },
      { type: "finish", reason: "end_turn" },
    ]);
    const deltas = ssePayloads(sse).slice(0, -1).map((c) => c.choices[0]?.delta);
    expect(deltas.map((d) => d.reasoning_content).filter((x) => x !== undefined).join("")).toBe("First.\n\nSecond.");
    expect(deltas.map((d) => d.content).filter((x) => x).join("")).toBe("Answer");
    expect(deltas.filter((d) => d.reasoning_details).map((d) => d.reasoning_details)).toEqual([
      [
        { type: "reasoning.text", text: "First.\n\nSecond.", signature: "sy|anthropic|sig", index: 0 },
        { type: "reasoning.encrypted", data: "sy|anthropic|sig", index: 1 },
      ],
    ]);
    // Once, right before the finish chunk.
    expect(deltas.at(-2).reasoning_details).toBeDefined();
    expect(sse).not.toContain('"sig"'); // never untagged
  });

  test("signed thinking + redacted thinking + a tool call through the SDK's stream helper: the final message keeps both entries, and the next turn's parse gives both blocks in order", async () => {
    const sse = encodeChat([
      start,
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "First." } },
      { type: "block_delta", index: 0, delta: { type: "signature", signature: { family: "anthropic", value: "sig" } } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "redacted_thinking", data: { family: "anthropic", value: "red" } } },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, block: { type: "tool_call", id: "call_1", name: "f" } },
      { type: "block_delta", index: 2, delta: { type: "tool_args", json: '{"a":1}' } },
      { type: "block_stop", index: 2 },
      { type: "finish", reason: "tool_use" },
    ]);
    const done = await sdkFinalChatCompletion(sse);
    const message = done.choices[0].message;
    expect((message as any).reasoning_details).toEqual([
      { type: "reasoning.text", text: "First.", signature: "sy|anthropic|sig", index: 0 },
      { type: "reasoning.encrypted", data: "sy|anthropic|red", index: 1 },
    ]);
    const next = parseRequest({
      model: "m",
      messages: [{ role: "user", content: "q" }, message as never, { role: "tool", tool_call_id: "call_1", content: "r" }],
    });
    expect(next.messages[1].content).toEqual([
      { type: "thinking", text: "First.", signature: { family: "anthropic", value: "sig" } },
      { type: "redacted_thinking", data: { family: "anthropic", value: "red" } },
      { type: "tool_call", id: "call_1", name: "f", arguments: '{"a":1}' },
    ]);
  });

  test("Gemini function-call signatures: each signed call's in reasoning_details with its id (from the block start or a later signature delta), after the thinking, in the one delta before the finish; through the SDK's stream helper the next turn's parse puts each back on its call and Gemini gets it instead of the placeholder", async () => {
    const g = (value: string) => ({ family: "gemini" as const, value });
    const sse = encodeChat([
      start,
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "Plan." } },
      { type: "block_delta", index: 0, delta: { type: "signature", signature: g("T1") } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "call_a", name: "f", signature: g("S1") } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"a":1}' } },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, block: { type: "tool_call", id: "call_b", name: "f" } },
      { type: "block_delta", index: 2, delta: { type: "tool_args", json: '{"a":2}' } },
      { type: "block_stop", index: 2 },
      { type: "block_start", index: 3, block: { type: "tool_call", id: "call_c", name: "g" } },
      { type: "block_delta", index: 3, delta: { type: "signature", signature: g("S3") } },
      { type: "block_delta", index: 3, delta: { type: "tool_args", json: "{}" } },
      { type: "block_stop", index: 3 },
      { type: "finish", reason: "tool_use" },
    ]);
    checkGrammar(sse, false);
    const deltas = ssePayloads(sse).slice(0, -1).map((c) => c.choices[0]?.delta);
    const details = [
      { type: "reasoning.text", text: "Plan.", signature: "sy|gemini|T1", index: 0 },
      { type: "reasoning.encrypted", data: "sy|gemini|S1", id: "call_a", format: "google-gemini-v1", index: 1 },
      { type: "reasoning.encrypted", data: "sy|gemini|S3", id: "call_c", format: "google-gemini-v1", index: 2 },
    ];
    expect(deltas.filter((d) => d.reasoning_details).map((d) => d.reasoning_details)).toEqual([details]);
    expect(deltas.at(-2).reasoning_details).toBeDefined();
    const message = (await sdkFinalChatCompletion(sse)).choices[0].message;
    expect((message as any).reasoning_details).toEqual(details);
    const next = parseRequest({
      model: "m",
      messages: [
        { role: "user", content: "q" },
        message as never,
        { role: "tool", tool_call_id: "call_a", content: "1" },
        { role: "tool", tool_call_id: "call_b", content: "2" },
        { role: "tool", tool_call_id: "call_c", content: "3" },
      ],
    });
    expect(next.messages[1].content).toEqual([
      { type: "thinking", text: "Plan.", signature: g("T1") },
      { type: "tool_call", id: "call_a", name: "f", arguments: '{"a":1}', signature: g("S1") },
      { type: "tool_call", id: "call_b", name: "f", arguments: '{"a":2}' },
      { type: "tool_call", id: "call_c", name: "g", arguments: "{}", signature: g("S3") },
    ]);
    const body = gemini.buildRequest(next, { model: "gemini-3-pro-preview", kind: "gemini", family: "gemini", stream: true }).body as any;
    expect(body.contents[1].parts.map((p: any) => [p.functionCall?.name ?? "thought", p.thoughtSignature])).toEqual([
      ["thought", "T1"],
      ["f", "S1"],
      ["f", undefined],
      ["g", "S3"],
    ]);
    expect(JSON.stringify(body)).not.toContain(DUMMY_THOUGHT_SIGNATURE);
  });

  test("reasoning_details: a block's own text (not the blank line before a second block); an unsigned block gets none", () => {
    const sse = encodeChat([
      start,
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "Unsigned." } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "thinking" } },
      { type: "block_delta", index: 1, delta: { type: "thinking", text: "Signed " } },
      { type: "block_delta", index: 1, delta: { type: "thinking", text: "one." } },
      { type: "block_delta", index: 1, delta: { type: "signature", signature: { family: "gemini", value: "g1" } } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "end_turn" },
    ]);
    const deltas = ssePayloads(sse).slice(0, -1).map((c) => c.choices[0]?.delta);
    expect(deltas.map((d) => d.reasoning_content).filter((x) => x !== undefined).join("")).toBe("Unsigned.\n\nSigned one.");
    expect(deltas.filter((d) => d.reasoning_details).map((d) => d.reasoning_details)).toEqual([[{ type: "reasoning.text", text: "Signed one.", signature: "sy|gemini|g1", index: 0 }]]);
  });

  test("usage chunk maps hub usage back: prompt = input + cache read + cache write", () => {
    const sse = encodeChat(
      [
        { type: "message_start", usage: { inputTokens: 20, cacheReadTokens: 100, cacheWriteTokens: 5 } },
        ...text("ok"),
        { type: "finish", reason: "max_tokens" },
        { type: "usage", usage: { outputTokens: 30, reasoningTokens: 10 } },
      ],
      { includeUsage: true },
    );
    const chunks = ssePayloads(sse);
    expect(chunks.at(-3).choices[0].finish_reason).toBe("length");
    expect(chunks.at(-2)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 125, completion_tokens: 30, total_tokens: 155, prompt_tokens_details: { cached_tokens: 100 }, completion_tokens_details: { reasoning_tokens: 10 } },
    });
  });

  test("id, created and model come from the options; strings are JSON-escaped", () => {
    const sse = encodeChat([start, ...text('a "quote"\n'), { type: "finish", reason: "refusal" }], { model: 'my"model', newId: () => "chatcmpl-xyz", now: () => 2_000_000 });
    const chunks = ssePayloads(sse).slice(0, -1);
    expect(chunks.every((c) => c.id === "chatcmpl-xyz" && c.created === 2000 && c.model === 'my"model' && c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[1].choices[0].delta.content).toBe('a "quote"\n');
    expect(chunks.at(-1).choices[0].finish_reason).toBe("content_filter");
  });
});
