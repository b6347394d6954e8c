import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { FIXTURES, manifest, recordedBytes, regressionCase, type ManifestEntry } from "../../support/fixtures.ts";
import { decodePieces } from "../../support/openai-responses-helpers.ts";
import { expectSplitReadsDecodeAlike } from "../../support/split-reads.ts";
import { normalizeEvents, TRUNCATED_ERROR } from "../../../formats/normalize.ts";
import { accumulate } from "../../../formats/accumulate.ts";
import type { HubEvent, ThinkingPart, ToolCallPart } from "../../../formats/hub.ts";

const utf8 = new TextEncoder();
const entries = (await manifest()).filter((e) => e.format === "openai-responses" && e.kind === "sse");

function decodeAll(bytes: Uint8Array) {
  return accumulate(normalizeEvents(decodePieces([bytes])));
}

/** The encrypted_content of the reasoning items in `output_item.done` events, read from the raw file. */
function doneEncrypted(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (const line of new TextDecoder().decode(bytes).split("\n")) {
    if (!line.startsWith("data:")) continue;
    const d = JSON.parse(line.slice(5));
    if (d.type === "response.output_item.done" && d.item?.type === "reasoning" && d.item.encrypted_content) out.push(d.item.encrypted_content);
  }
  return out;
}

describe("decoder vs manifest: every recorded Responses stream", () => {
  test("the manifest covers every recorded .sse file of the format", async () => {
    const files: string[] = [];
    for await (const f of new Bun.Glob("*.sse").scan(join(FIXTURES, "recorded", "openai-responses"))) files.push(`openai-responses/${f}`);
    expect(entries.map((e) => e.file).sort()).toEqual(files.sort());
    expect(files.length).toBe(10);
  });

  for (const entry of entries) {
    test(entry.file, async () => {
      const bytes = await recordedBytes(entry.file);
      const { response, error } = decodeAll(bytes);
      const rec = entry.recorded!;
      const text = response.content.filter((p) => p.type === "text").map((p) => (p as { text: string }).text).join("");
      expect(text).toBe(rec.text);

      const calls = response.content.filter((p): p is ToolCallPart => p.type === "tool_call");
      expect(calls.map((c) => ({ call_id: c.id, name: c.name, arguments: JSON.parse(c.arguments) }))).toEqual(
        rec.function_calls.map((c: any) => ({ call_id: c.call_id, name: c.name, arguments: c.arguments })),
      );

      const thinking = response.content.filter((p): p is ThinkingPart => p.type === "thinking");
      if (rec.reasoning_summary) {
        expect(thinking.length).toBe(1);
        expect(thinking[0]!.summary).toEqual(rec.reasoning_summary);
        expect(thinking[0]!.raw).toBeUndefined();
      }
      if (rec.reasoning_text) {
        expect(thinking.length).toBe(1);
        expect(thinking[0]!.text).toBe(rec.reasoning_text);
        expect(thinking[0]!.raw).toBe(true);
      }
      if (rec.encrypted_reasoning_items !== undefined) {
        const signed = thinking.filter((t) => t.signature);
        expect(signed.length).toBe(rec.encrypted_reasoning_items);
        // taken from output_item.done, never from .added (they differ in the multi-summary recording)
        expect(signed.map((t) => t.signature!.value)).toEqual(doneEncrypted(bytes));
        expect(signed.every((t) => t.signature!.family === "openai")).toBe(true);
      }

      if (rec.status === "failed") {
        expect(response.stopReason).toBeNull();
        expect(error).toBeDefined();
        expect(error!.message).toBe(rec.error.message);
        expect(error!.code).toBe(rec.error.code);
      } else {
        expect(error).toBeUndefined();
        if (rec.status === "completed") expect(response.stopReason).toBe(calls.length > 0 ? "tool_use" : "end_turn");
        if (rec.status === "incomplete") expect(response.stopReason).toBe("max_tokens");
      }

      if (rec.usage) {
        const u = response.usage;
        const totalInput = (u.inputTokens ?? 0) + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
        expect(totalInput).toBe(rec.usage.input_tokens);
        expect(u.cacheReadTokens).toBe(rec.usage.cached_tokens);
        expect(u.inputTokens).toBe(rec.usage.input_tokens - rec.usage.cached_tokens);
        expect(u.outputTokens).toBe(rec.usage.output_tokens);
        expect(u.reasoningTokens).toBe(rec.usage.reasoning_tokens);
        expect(totalInput + u.outputTokens!).toBe(rec.usage.total_tokens);
      } else {
        expect(response.usage).toEqual({});
      }
    });
  }

  test("rotating ids: items are keyed by output_index, the reasoning keeps the id of its .added", async () => {
    const { response } = decodeAll(await recordedBytes("openai-responses/rotating-item-ids.sse"));
    expect(response.content.map((p) => p.type)).toEqual(["thinking", "text"]);
    expect((response.content[0] as ThinkingPart).itemId).toBe("capture-id-3");
    expect((response.content[1] as { phase?: string }).phase).toBe("final_answer");
    expect(response.id).toBe("capture-id-1");
  });

  test("function call without argument deltas: arguments come from .done, once", async () => {
    const evs = decodePieces([await recordedBytes("openai-responses/function-call-no-argument-deltas.sse")]);
    const args = evs.filter((e) => e.type === "block_delta" && e.delta.type === "tool_args");
    expect(args).toEqual([{ type: "block_delta", index: expect.any(Number), delta: { type: "tool_args", json: '{"location":"San Francisco"}' } }]);
  });

  test("no response.created: message_start still comes first; incomplete max_output_tokens → max_tokens", async () => {
    const out = normalizeEvents(decodePieces([await recordedBytes("openai-responses/incomplete-max-output-tokens.sse")]));
    expect(out.map((e) => e.type)).toEqual(["message_start", "finish", "usage"]);
    expect(out[1]).toEqual({ type: "finish", reason: "max_tokens", raw: "incomplete:max_output_tokens" });
  });

  test("error event then response.failed: exactly one hub error, insufficient_quota → quota_exhausted", async () => {
    const evs = decodePieces([await recordedBytes("openai-responses/error-event.sse")]);
    const errors = evs.filter((e) => e.type === "error");
    expect(errors.length).toBe(1);
    expect(errors[0]).toMatchObject({ error: { kind: "quota_exhausted", code: "insufficient_quota" } });
  });

  test("failed-only: rate_limit_exceeded → rate_limit", async () => {
    const evs = decodePieces([await recordedBytes("openai-responses/failed-only.sse")]);
    expect(evs.map((e) => e.type)).toEqual(["message_start", "error"]);
    expect(evs[1]).toMatchObject({ error: { kind: "rate_limit", code: "rate_limit_exceeded" } });
  });
});

describe("decoder framing: split reads give the same events", () => {
  // The reads: test/support/split-reads.ts says why they cover every state a read boundary can leave
  // the decoder in (a cut at every offset near each line end, in and around each multi-byte character
  // and escape, each checked with everything before it decoded; a seeded sample of two-piece splits);
  // one byte per read makes every offset a read boundary as well.
  for (const entry of entries) {
    test(`${entry.file}: reads cut around every line end, character and escape, and one byte per read`, async () => {
      const bytes = await recordedBytes(entry.file);
      const whole = decodePieces([bytes]);
      expect(whole.length).toBeGreaterThan(1);
      const plan = expectSplitReadsDecodeAlike(bytes, (reads) => decodePieces(reads));
      if (/[^\x00-\x7f]/.test(new TextDecoder().decode(bytes))) expect(plan.utf8Cuts).toBeGreaterThan(0);
      const single: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i++) single.push(bytes.subarray(i, i + 1));
      expect(decodePieces(single)).toEqual(whole);
    }, 60_000);
  }

  test("a multi-byte character split across reads is not corrupted", () => {
    const sse =
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"“r”😀"}\n\n' +
      'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed","output":[]}}\n\n';
    const bytes = utf8.encode(sse);
    const at = bytes.indexOf(0xf0) + 2; // inside the emoji
    const { response } = accumulate(normalizeEvents(decodePieces([bytes.subarray(0, at), bytes.subarray(at)])));
    expect(response.content).toEqual([{ type: "text", text: "“r”😀" }]);
  });
});

describe("decoder: shapes not in the recordings", () => {
  const frame = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

  test("B09: text deltas without output_item.added/content_part.added open a text block; the completed output does not repeat it", async () => {
    const c = await regressionCase("B09");
    const out = normalizeEvents(decodePieces([utf8.encode(c.upstream.response.sse)]));
    expect(out.map((e) => e.type)).toEqual(["message_start", "block_start", "block_delta", "block_stop", "finish", "usage"]);
    expect(accumulate(out).response.content).toEqual([{ type: "text", text: "Hello" }]);
  });

  test("text only in output_item.done, or only in response.completed output, is emitted once", () => {
    const viaDone =
      frame("response.output_item.added", { output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", content: [] } }) +
      frame("response.output_item.done", { output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", content: [{ type: "output_text", text: "Hi there" }] } }) +
      frame("response.completed", { response: { status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "Hi there" }] }] } });
    expect(accumulate(normalizeEvents(decodePieces([utf8.encode(viaDone)]))).response.content).toEqual([{ type: "text", text: "Hi there" }]);

    const onlyCompleted = frame("response.completed", {
      response: {
        status: "completed",
        output: [
          { type: "message", content: [{ type: "output_text", text: "A" }] },
          { type: "function_call", id: "fc_9", call_id: "call_9", name: "f", arguments: '{"x":1}' },
        ],
      },
    });
    const acc = accumulate(normalizeEvents(decodePieces([utf8.encode(onlyCompleted)])));
    expect(acc.response.content).toEqual([
      { type: "text", text: "A" },
      { type: "tool_call", id: "call_9", name: "f", arguments: '{"x":1}', itemId: "fc_9" },
    ]);
    expect(acc.response.stopReason).toBe("tool_use");
  });

  test("namespaced function call keeps its namespace; content_filter → refusal", () => {
    const sse =
      frame("response.output_item.added", { output_index: 0, item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "close_agent", namespace: "multi_agent_v1", arguments: "" } }) +
      frame("response.function_call_arguments.delta", { output_index: 0, delta: '{"target":"a1"}' }) +
      frame("response.output_item.done", { output_index: 0, item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "close_agent", namespace: "multi_agent_v1", arguments: '{"target":"a1"}' } }) +
      frame("response.incomplete", { response: { status: "incomplete", incomplete_details: { reason: "content_filter" }, output: [] } });
    const acc = accumulate(normalizeEvents(decodePieces([utf8.encode(sse)])));
    expect(acc.response.content).toEqual([
      { type: "tool_call", id: "call_1", name: "close_agent", arguments: '{"target":"a1"}', itemId: "fc_1", namespace: "multi_agent_v1" },
    ]);
    expect(acc.response.stopReason).toBe("refusal");
  });

  test("custom (freeform) tool call becomes JSON arguments {input}, streamed fragment by fragment", () => {
    const sse =
      frame("response.output_item.added", { output_index: 0, item: { type: "custom_tool_call", id: "ctc_1", call_id: "call_p", name: "apply_patch", input: "" } }) +
      frame("response.custom_tool_call_input.delta", { output_index: 0, delta: '*** Begin Patch\n"quoted"' }) +
      frame("response.custom_tool_call_input.delta", { output_index: 0, delta: "\n*** End Patch" }) +
      frame("response.output_item.done", { output_index: 0, item: { type: "custom_tool_call", id: "ctc_1", call_id: "call_p", name: "apply_patch", input: '*** Begin Patch\n"quoted"\n*** End Patch' } }) +
      frame("response.completed", { response: { status: "completed" } });
    const acc = accumulate(normalizeEvents(decodePieces([utf8.encode(sse)])));
    const call = acc.response.content[0] as ToolCallPart;
    expect(JSON.parse(call.arguments)).toEqual({ input: '*** Begin Patch\n"quoted"\n*** End Patch' });
    expect(acc.response.stopReason).toBe("tool_use");
  });

  test("nested error object and data-only framing (no event: lines) are understood", () => {
    const sse = `data: ${JSON.stringify({ type: "error", sequence_number: 0, error: { type: "tokens", code: "rate_limit_exceeded", message: "Rate limit reached. Please try again in 1.5s." } })}\n\n`;
    const evs = decodePieces([utf8.encode(sse)]);
    expect(evs.at(-1)).toMatchObject({ type: "error", error: { kind: "rate_limit", retryAfterSeconds: 1.5 } });
  });

  test("EOF without a terminal event: the normalizer ends with the truncation error, no finish", async () => {
    const bytes = await recordedBytes("openai-responses/text.sse");
    const text = new TextDecoder().decode(bytes);
    const cut = utf8.encode(text.slice(0, text.indexOf("event: response.output_text.done")));
    const out = normalizeEvents(decodePieces([cut]));
    expect(out.some((e) => e.type === "finish")).toBe(false);
    expect(out.at(-1)).toEqual({ type: "error", error: TRUNCATED_ERROR });
    expect(accumulate(out).response.content).toEqual([{ type: "text", text: "Dummy PDF file" }]);
  });

  test("a terminal event without its final blank line still finishes the reply; a cut-off last event is a truncation", async () => {
    const bytes = await recordedBytes("openai-responses/text.sse");
    const out = normalizeEvents(decodePieces([bytes.subarray(0, bytes.length - 2)]));
    expect(out.at(-2)).toEqual({ type: "finish", reason: "end_turn", raw: "completed" });
    const cut = normalizeEvents(decodePieces([bytes.subarray(0, bytes.length - 40)]));
    expect(cut.at(-1)).toEqual({ type: "error", error: TRUNCATED_ERROR });
  });

  test("a malformed data line becomes one api_error event and decoding stops", () => {
    const evs: HubEvent[] = decodePieces([utf8.encode('data: {"type":"response.created","response":{"id":"r"}}\n\ndata: {not json\n\ndata: {"type":"response.completed","response":{"status":"completed"}}\n\n')]);
    expect(evs.map((e) => e.type)).toEqual(["message_start", "error"]);
    expect(evs[1]).toMatchObject({ error: { kind: "api_error", code: "upstream_malformed" } });
  });
});

// Keep the type import used (ManifestEntry documents the shape of `entries`).
export type { ManifestEntry };
