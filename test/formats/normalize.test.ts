import { describe, expect, test } from "bun:test";
import { cutToolCallOf, EventNormalizer, normalizeEvents, TRUNCATED_ERROR } from "../../formats/normalize.ts";
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

  describe("a client given tool calls only whole (wholeToolCalls: Gemini, Responses)", () => {
    const text: HubEvent[] = [
      { type: "block_start", index: 0, block: { type: "text" } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "Checking." } },
    ];
    /** A Chat-decoder-shaped call to `name` with `args` in fragments, stopped at the finish with `reason`. */
    const reply = (args: string[], reason: "max_tokens" | "tool_use" | "context_window_exceeded", name = "get_weather"): HubEvent[] => [
      ...text,
      { type: "block_start", index: -1, block: { type: "tool_call", id: "call_w", name } },
      ...args.map((json): HubEvent => ({ type: "block_delta", index: -1, delta: { type: "tool_args", json } })),
      { type: "block_stop", index: 0 },
      { type: "block_stop", index: -1 },
      { type: "finish", reason },
      { type: "usage", usage: { outputTokens: 20 } },
    ];
    const whole = { wholeToolCalls: true };

    test("a call whose arguments the token limit cut: the error instead of the finish, the call never stopped", () => {
      for (const reason of ["max_tokens", "context_window_exceeded"] as const) {
        const out = normalizeEvents(reply(['{"city": ', '"Os'], reason), whole);
        expect(types(out)).toEqual(["message_start", "start:0:text", "delta:0", "stop:0", "start:1:tool_call", "delta:1", "delta:1", "error"]);
        const err = out.at(-1)!;
        expect(err.type === "error" && err.error).toMatchObject({ code: "upstream_tool_call_cut", status: 502 });
        expect(err.type === "error" && err.error.message).toContain("a call to get_weather");
      }
      // Without the option (Chat, Anthropic clients): the cut call as the provider sent it, then max_tokens.
      expect(types(normalizeEvents(reply(['{"city": ', '"Os'], "max_tokens")))).toEqual(["message_start", "start:0:text", "delta:0", "stop:0", "start:1:tool_call", "delta:1", "delta:1", "stop:1", "finish", "usage"]);
    });

    test("complete arguments at a token-limit finish, broken ones at another finish, and no arguments at tool_use: the call closes as it came", () => {
      const closed = ["message_start", "start:0:text", "delta:0", "stop:0", "start:1:tool_call", "delta:1", "delta:1", "stop:1", "finish", "usage"];
      expect(types(normalizeEvents(reply(['{"city": ', '"Oslo"}'], "max_tokens"), whole))).toEqual(closed);
      expect(types(normalizeEvents(reply(['{"city": ', '"Os'], "tool_use"), whole))).toEqual(closed);
      expect(types(normalizeEvents(reply([], "tool_use"), whole))).toEqual(["message_start", "start:0:text", "delta:0", "stop:0", "start:1:tool_call", "stop:1", "finish", "usage"]);
      expect(types(normalizeEvents(reply([""], "tool_use"), whole))).toEqual(["message_start", "start:0:text", "delta:0", "stop:0", "start:1:tool_call", "stop:1", "finish", "usage"]);
    });

    test("a call the token limit cut right after its name (no arguments yet): the error, naming it, not a call without arguments", () => {
      for (const args of [[], [""]]) {
        for (const reason of ["max_tokens", "context_window_exceeded"] as const) {
          const out = normalizeEvents(reply(args, reason), whole);
          expect(types(out)).toEqual(["message_start", "start:0:text", "delta:0", "stop:0", "start:1:tool_call", "error"]);
          const err = out.at(-1)!;
          expect(err.type === "error" && err.error).toMatchObject({ code: "upstream_tool_call_cut", status: 502 });
          expect(err.type === "error" && err.error.message).toContain("right after the name of a call to get_weather");
        }
      }
      // A call without arguments that another call followed was whole; the last one, cut, is named.
      const two: HubEvent[] = [
        { type: "block_start", index: 1, block: { type: "tool_call", id: "c1", name: "list_files" } },
        { type: "block_stop", index: 1 },
        { type: "block_start", index: 2, block: { type: "tool_call", id: "c2", name: "get_weather" } },
        { type: "block_delta", index: 2, delta: { type: "tool_args", json: '{"ci' } },
        { type: "finish", reason: "max_tokens" },
      ];
      const out = normalizeEvents(two, whole);
      expect(types(out)).toEqual(["message_start", "start:0:tool_call", "stop:0", "start:1:tool_call", "delta:1", "error"]);
      expect(out.at(-1)!.type === "error" && (out.at(-1) as { error: { message: string } }).error.message).toContain("arguments of a call to get_weather");
    });

    test("a held call closes at the next event: a later block, an error, the end without a finish", () => {
      const call = (key: number, json: string): HubEvent[] => [
        { type: "block_start", index: key, block: { type: "tool_call", id: `c${key}`, name: "f" } },
        { type: "block_delta", index: key, delta: { type: "tool_args", json } },
        { type: "block_stop", index: key },
      ];
      const seen: string[][] = [];
      const sink = new EventNormalizer((e) => seen.push(types([e])), undefined, whole);
      for (const e of call(1, '{"a":')) sink.event(e);
      expect(seen.flat()).toEqual(["message_start", "start:0:tool_call", "delta:0"]); // its stop held
      for (const e of call(2, "{}")) sink.event(e);
      expect(seen.flat().slice(3)).toEqual(["stop:0", "start:1:tool_call", "delta:1"]);
      sink.event({ type: "error", error: TRUNCATED_ERROR });
      expect(seen.flat().slice(6)).toEqual(["stop:1", "error"]);
      expect(types(normalizeEvents(call(1, '{"a":'), whole))).toEqual(["message_start", "start:0:tool_call", "delta:0", "stop:0", "error"]);
    });

    test("cutToolCallOf: the same judgement for a whole reply", () => {
      const content = (args: string) => [{ type: "text" as const, text: "Checking." }, { type: "tool_call" as const, id: "c", name: "get_weather", arguments: args }];
      expect(cutToolCallOf(content('{"city": "Os'), "max_tokens")).toMatchObject({ code: "upstream_tool_call_cut" });
      expect(cutToolCallOf(content('{"city": "Oslo"}'), "max_tokens")).toBeUndefined();
      expect(cutToolCallOf(content('{"city": "Os'), "tool_use")).toBeUndefined();
      expect(cutToolCallOf(content(""), "max_tokens")?.message).toContain("right after the name of a call to get_weather");
      expect(cutToolCallOf(content(""), "tool_use")).toBeUndefined();
      expect(cutToolCallOf([...content(""), { type: "text" as const, text: "Done." }], "max_tokens")).toBeUndefined();
    });
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
