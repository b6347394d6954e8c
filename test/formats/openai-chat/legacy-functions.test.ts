/**
 * A Chat client that declared its functions with the legacy `functions` (older GUI apps, SDK users)
 * gets the reply's call as the Chat API answers such a request: `message.function_call` /
 * `delta.function_call` with finish_reason `function_call`, the first call only (the form holds one;
 * the rest said in a warning). Until 2026-12-07 it got `tool_calls`, which an app reading only
 * `function_call` does not see (README "Not done yet", Translation).
 */
import { describe, expect, test } from "bun:test";
import type { HubEvent, HubResponse } from "../../../formats/hub.ts";
import { encodeResponse } from "../../../formats/openai-chat/response.ts";
import { usesLegacyFunctions } from "../../../formats/openai-chat/parse.ts";
import { encodeChat, sdkFinalChatCompletion, ssePayloads } from "../../support/openai-chat-helpers.ts";
import { codecFor } from "../../../formats/index.ts";

const call = (index: number, id: string, name: string, pieces: string[]): HubEvent[] => [
  { type: "block_start", index, block: { type: "tool_call", id, name } },
  ...pieces.map((json): HubEvent => ({ type: "block_delta", index, delta: { type: "tool_args", json } })),
  { type: "block_stop", index },
];

/** A reply: a sentence, then two calls (the second with arguments in one piece), finish tool_use. */
const TWO_CALLS: HubEvent[] = [
  { type: "message_start", usage: { inputTokens: 5 } },
  { type: "block_start", index: 0, block: { type: "text" } },
  { type: "block_delta", index: 0, delta: { type: "text", text: "Checking." } },
  { type: "block_stop", index: 0 },
  ...call(1, "call_a", "get_weather", ['{"city":', '"Paris"}']),
  ...call(2, "call_b", "get_time", ['{"tz":"CET"}']),
  { type: "finish", reason: "tool_use" },
];

const LEFT_OUT = "The reply held 2 function calls; a request with the legacy functions parameter gets one, as function_call: the first was sent, 1 was left out. Declare the functions as tools to get every call.";

describe("usesLegacyFunctions: the request's own form decides", () => {
  test("functions without tools → true; with tools, an empty or malformed functions list → false", () => {
    const fns = [{ name: "get_weather", parameters: { type: "object", properties: {} } }];
    expect(usesLegacyFunctions({ functions: fns })).toBe(true);
    expect(usesLegacyFunctions({ functions: fns, tools: [] })).toBe(true);
    expect(usesLegacyFunctions({ functions: fns, tools: null })).toBe(true);
    expect(usesLegacyFunctions({ functions: fns, tools: [{ type: "function", function: { name: "x" } }] })).toBe(false);
    expect(usesLegacyFunctions({ functions: [] })).toBe(false);
    expect(usesLegacyFunctions({ functions: [{ description: "no name" }] })).toBe(false);
    expect(usesLegacyFunctions({ tools: [{ type: "function", function: { name: "x" } }] })).toBe(false);
  });
});

describe("streamed: delta.function_call for a legacy request", () => {
  test("the first call as function_call fragments, finish function_call, the second left out with a warning; the SDK's accumulator reads message.function_call", async () => {
    const warned: Array<[string, string]> = [];
    const text = encodeChat(TWO_CALLS, { legacyFunctions: true, warn: (code, message) => void warned.push([code, message]) });
    const chunks = ssePayloads(text).slice(0, -1);
    const deltas = chunks.map((c) => c.choices[0].delta);
    expect(deltas).toEqual([
      { role: "assistant", content: "" },
      { content: "Checking." },
      { function_call: { name: "get_weather", arguments: "" } },
      { function_call: { arguments: '{"city":' } },
      { function_call: { arguments: '"Paris"}' } },
      {},
    ]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("function_call");
    expect(text).not.toContain("tool_calls");
    expect(text).not.toContain("get_time");
    expect(warned).toEqual([["dropped_tool_call", LEFT_OUT]]);
    const done = await sdkFinalChatCompletion(text);
    expect(done.choices[0]!.message.function_call).toEqual({ name: "get_weather", arguments: '{"city":"Paris"}' });
    expect(done.choices[0]!.finish_reason).toBe("function_call");
  });

  test("a call with no argument text gets arguments \"{}\"; one call says nothing", () => {
    const warned: string[] = [];
    const events: HubEvent[] = [...call(0, "call_a", "ping", []), { type: "finish", reason: "tool_use" }];
    const deltas = ssePayloads(encodeChat(events, { legacyFunctions: true, warn: (_c, m) => void warned.push(m) }))
      .slice(0, -1)
      .map((c) => c.choices[0].delta);
    expect(deltas).toEqual([{ role: "assistant", content: "" }, { function_call: { name: "ping", arguments: "" } }, { function_call: { arguments: "{}" } }, {}]);
    expect(warned).toEqual([]);
  });

  test("without the flag (a request with tools): tool_calls, both calls, finish tool_calls", () => {
    const chunks = ssePayloads(encodeChat(TWO_CALLS)).slice(0, -1);
    expect(chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []).filter((t: any) => t.id).map((t: any) => t.function.name)).toEqual(["get_weather", "get_time"]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls");
  });
});

describe("whole: message.function_call for a legacy request", () => {
  const resp: HubResponse = {
    content: [
      { type: "tool_call", id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "tool_call", id: "call_b", name: "get_time", arguments: "" },
    ],
    stopReason: "tool_use",
    usage: { inputTokens: 5, outputTokens: 9 },
  };

  test("the first call as function_call, no tool_calls, finish function_call, content null; the second said in a warning", () => {
    const warned: Array<[string, string]> = [];
    const body = encodeResponse(resp, { model: "m", legacyFunctions: true, warn: (code, message) => void warned.push([code, message]) });
    expect(body.choices[0]!.message).toEqual({ role: "assistant", content: null, refusal: null, function_call: { name: "get_weather", arguments: '{"city":"Paris"}' } });
    expect(body.choices[0]!.finish_reason).toBe("function_call");
    expect(warned).toEqual([["dropped_tool_call", LEFT_OUT]]);
  });

  test("a text reply to a legacy request is as any other (finish stop, no function_call)", () => {
    const body = encodeResponse({ content: [{ type: "text", text: "Hi." }], stopReason: "end_turn", usage: {} }, { model: "m", legacyFunctions: true });
    expect(body.choices[0]!.message).toEqual({ role: "assistant", content: "Hi.", refusal: null });
    expect(body.choices[0]!.finish_reason).toBe("stop");
  });
});

describe("a Gemini call's thought signature with the legacy functions form", () => {
  /** A Gemini reply: one call signed as Gemini signs the first call of a step. */
  const SIGNED: HubResponse = {
    content: [{ type: "tool_call", id: "call_g1", name: "get_weather", arguments: '{"city":"Paris"}', signature: { family: "gemini", value: "S1" } }],
    stopReason: "tool_use",
    usage: { inputTokens: 3, outputTokens: 5 },
  };

  test("sent back as the client got it (function_call without an id, reasoning_details naming the reply's call id), Gemini gets it on the call, not the placeholder", () => {
    const msg = encodeResponse(SIGNED, { model: "m", legacyFunctions: true }).choices[0]!.message;
    expect(msg.function_call).toEqual({ name: "get_weather", arguments: '{"city":"Paris"}' });
    expect(msg.reasoning_details).toHaveLength(1);
    const body = {
      model: "m",
      messages: [{ role: "user", content: "weather?" }, msg, { role: "function", name: "get_weather", content: "sunny" }],
      functions: [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
    };
    const hub = codecFor("openai-chat").parseRequest!(body);
    const built = codecFor("gemini").buildRequest({ ...hub, model: "gemini-3-pro-preview" }, { model: "gemini-3-pro-preview", kind: "gemini", family: "gemini", stream: false }).body as any;
    const model = built.contents.find((c: any) => c.role === "model");
    expect(model.parts).toEqual([{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "S1" }]);
  });

  test("two call signatures in one legacy message: which is the call's cannot be told, neither is put on it", () => {
    const details = [
      { type: "reasoning.encrypted", id: "call_x", data: "sy|gemini|S1", format: "google-gemini-v1", index: 0 },
      { type: "reasoning.encrypted", id: "call_y", data: "sy|gemini|S2", format: "google-gemini-v1", index: 1 },
    ];
    const body = {
      model: "m",
      messages: [{ role: "user", content: "weather?" }, { role: "assistant", content: null, function_call: { name: "get_weather", arguments: "{}" }, reasoning_details: details }, { role: "function", name: "get_weather", content: "sunny" }],
      functions: [{ name: "get_weather", parameters: { type: "object", properties: {} } }],
    };
    const call = codecFor("openai-chat").parseRequest!(body).messages[1]!.content.find((p) => p.type === "tool_call") as any;
    expect(call.signature).toBeUndefined();
  });
});
