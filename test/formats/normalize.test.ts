import { describe, expect, test } from "bun:test";
import { normalizeEvents, TRUNCATED_ERROR } from "../../formats/normalize.ts";
import { accumulate, responseToEvents } from "../../formats/accumulate.ts";
import type { HubEvent } from "../../formats/hub.ts";

const types = (evs: HubEvent[]) =>
  evs.map((e) => (e.type === "block_start" ? `start:${e.index}:${e.block.type}` : e.type === "block_stop" ? `stop:${e.index}` : e.type === "block_delta" ? `delta:${e.index}` : e.type));

describe("EventNormalizer", () => {
  test("interleaved parallel tool calls are serialised, the later one buffered until the earlier closes", () => {
    const out = normalizeEvents([
      { type: "message_start", id: "m1" },
      { type: "block_start", index: 10, block: { type: "tool_call", id: "call_a", name: "a" } },
      { type: "block_start", index: 11, block: { type: "tool_call", id: "call_b", name: "b" } },
      { type: "block_delta", index: 10, delta: { type: "tool_args", json: '{"x":' } },
      { type: "block_delta", index: 11, delta: { type: "tool_args", json: '{"y":2}' } },
      { type: "block_delta", index: 10, delta: { type: "tool_args", json: "1}" } },
      { type: "finish", reason: "end_turn" },
    ]);
    expect(types(out)).toEqual([
      "message_start",
      "start:0:tool_call",
      "delta:0",
      "delta:0",
      "stop:0",
      "start:1:tool_call",
      "delta:1",
      "stop:1",
      "finish",
    ]);
    const fin = out.at(-1)!;
    expect(fin.type === "finish" && fin.reason).toBe("tool_use");
    const acc = accumulate(out).response;
    expect(acc.content).toEqual([
      { type: "tool_call", id: "call_a", name: "a", arguments: '{"x":1}' },
      { type: "tool_call", id: "call_b", name: "b", arguments: '{"y":2}' },
    ]);
  });

  test("empty text blocks are never opened; empty deltas are dropped; missing message_start is added", () => {
    const out = normalizeEvents([
      { type: "block_start", index: 0, block: { type: "text" } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "text" } },
      { type: "block_delta", index: 1, delta: { type: "text", text: "" } },
      { type: "block_delta", index: 1, delta: { type: "text", text: "hi" } },
      { type: "finish", reason: "end_turn" },
      { type: "usage", usage: { outputTokens: 3 } },
    ]);
    expect(types(out)).toEqual(["message_start", "start:0:text", "delta:0", "stop:0", "finish", "usage"]);
  });

  test("text after a live text block closes it; duplicate message_start becomes usage; content after finish is dropped", () => {
    const out = normalizeEvents([
      { type: "message_start", usage: { inputTokens: 5 } },
      { type: "message_start", usage: { inputTokens: 7 } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "hmm" } },
      { type: "block_delta", index: 1, delta: { type: "text", text: "ok" } },
      { type: "finish", reason: "end_turn" },
      { type: "block_delta", index: 1, delta: { type: "text", text: "late" } },
    ]);
    expect(types(out)).toEqual(["message_start", "usage", "start:0:thinking", "delta:0", "stop:0", "start:1:text", "delta:1", "stop:1", "finish"]);
  });

  test("a stream that ends without a finish ends with one truncation error, nothing invented", () => {
    const out = normalizeEvents([
      { type: "message_start" },
      { type: "block_delta", index: 0, delta: { type: "text", text: "partial" } },
    ]);
    expect(types(out)).toEqual(["message_start", "start:0:text", "delta:0", "error"]);
    expect(out.at(-1)).toEqual({ type: "error", error: TRUNCATED_ERROR });
  });

  test("nothing follows an error", () => {
    const out = normalizeEvents([
      { type: "message_start" },
      { type: "error", error: { kind: "overloaded", status: 529, message: "Overloaded" } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "x" } },
      { type: "finish", reason: "end_turn" },
    ]);
    expect(types(out)).toEqual(["message_start", "error"]);
  });

  test("max_tokens with a tool call stays max_tokens", () => {
    const out = normalizeEvents([
      { type: "block_start", index: 0, block: { type: "tool_call", id: "t", name: "n" } },
      { type: "finish", reason: "max_tokens" },
    ]);
    const fin = out.find((e) => e.type === "finish");
    expect(fin).toEqual({ type: "finish", reason: "max_tokens" });
  });

  test("responseToEvents then accumulate round-trips a reply", () => {
    const resp = {
      id: "msg_1",
      model: "m",
      content: [
        { type: "thinking" as const, text: "ab", summary: ["a", "b"], signature: { family: "openai" as const, value: "enc" }, itemId: "rs_1" },
        { type: "text" as const, text: "hello" },
        { type: "tool_call" as const, id: "c1", name: "f", arguments: '{"a":1}' },
      ],
      stopReason: "tool_use" as const,
      usage: { inputTokens: 3, outputTokens: 9 },
    };
    const evs = normalizeEvents(responseToEvents(resp));
    expect(accumulate(evs).response).toEqual({ ...resp, stopSequence: undefined, rawStopReason: undefined } as never);
  });
});
