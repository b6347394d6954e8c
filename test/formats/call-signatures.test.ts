/**
 * Gemini's function-call signatures for Anthropic Messages and Responses clients (formats/call-signatures.ts):
 * a signature-only thinking block / reasoning item just before the call (neither format has a slot on
 * a tool call), naming the call's id, read back onto the call with that id when the client sends the
 * history again, so the Gemini builder puts the signature on that functionCall part instead of Google's
 * placeholder, even when the client reorders, drops or adds calls (Gemini: "you must return this
 * signature in the exact part where it was received", https://ai.google.dev/gemini-api/docs/thought-signatures).
 * A signature that comes on a later chunk of a streamed call gets the same block just after the call.
 */
import { describe, expect, test } from "bun:test";
import type { HubEvent, HubMessage, HubPart, HubRequest, HubResponse, Opaque } from "../../formats/hub.ts";
import { anthropicMessages } from "../../formats/anthropic-messages/index.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { DUMMY_THOUGHT_SIGNATURE, gemini } from "../../formats/gemini/index.ts";
import { signaturesOntoCalls } from "../../formats/call-signatures.ts";
import { sdkFinalMessage } from "../support/anthropic-sdk.ts";
import { sdkStream } from "../support/openai-responses-helpers.ts";
import { recordedBytes } from "../support/fixtures.ts";
import { canonical, decodeBytes, geminiSse, reply } from "../support/gemini-harness.ts";

const g = (value: string): Opaque => ({ family: "gemini", value });
let n = 0;
const enc = { model: "m", newId: (p: string) => `${p}${++n}` };

/** Text, then a call signed at its start (as Gemini signs the first call of a step) and an unsigned parallel call. */
const EVENTS: HubEvent[] = [
  { type: "message_start", id: "x", usage: { inputTokens: 3 } },
  { type: "block_start", index: 0, block: { type: "text" } },
  { type: "block_delta", index: 0, delta: { type: "text", text: "Checking." } },
  { type: "block_stop", index: 0 },
  { type: "block_start", index: 1, block: { type: "tool_call", id: "call_a", name: "f", signature: g("S1") } },
  { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"a":1}' } },
  { type: "block_stop", index: 1 },
  { type: "block_start", index: 2, block: { type: "tool_call", id: "call_b", name: "f" } },
  { type: "block_delta", index: 2, delta: { type: "tool_args", json: '{"a":2}' } },
  { type: "block_stop", index: 2 },
  { type: "finish", reason: "tool_use" },
  { type: "usage", usage: { outputTokens: 5 } },
];

const RESPONSE: HubResponse = {
  content: [
    { type: "text", text: "Checking." },
    { type: "tool_call", id: "call_a", name: "f", arguments: '{"a":1}', signature: g("S1") },
    { type: "tool_call", id: "call_b", name: "f", arguments: '{"a":2}' },
  ],
  stopReason: "tool_use",
  usage: { inputTokens: 3, outputTokens: 5 },
};

function encode(createEncoder: NonNullable<typeof anthropicMessages.createEncoder>): string {
  let out = "";
  const e = createEncoder(enc, (t) => (out += t));
  for (const ev of EVENTS) {
    // The text goes through the fast path, as the pipeline sends it.
    if (ev.type === "block_delta" && ev.delta.type === "text" && e.text) e.text(ev.index, ev.delta.text, true);
    else e.event(ev);
  }
  e.end();
  return out;
}

/** The model turn the Gemini builder makes from a parsed client request. */
function geminiModelTurn(messages: HubMessage[]): unknown {
  const body = gemini.buildRequest({ model: "m", system: [], messages, tools: [], stream: true, source: { format: "anthropic-messages", extra: {} } }, { model: "gemini-3-pro-preview", kind: "gemini", family: "gemini", stream: true }).body as any;
  return body.contents[1];
}
const SIGNED_TURN = {
  role: "model",
  parts: [{ text: "Checking." }, { functionCall: { name: "f", args: { a: 1 } }, thoughtSignature: "S1" }, { functionCall: { name: "f", args: { a: 2 } } }],
};

describe("Anthropic Messages client", () => {
  const thinking = { type: "thinking", thinking: "", signature: "sy|gemini-call|call_a|S1" };
  test("stream: the signature-only thinking block before the signed tool_use, every later index one higher (the SDK's accumulator agrees); sent back, Gemini gets it on the call", async () => {
    const sse = encode(anthropicMessages.createEncoder!);
    const message = await sdkFinalMessage(sse);
    expect(message.content.map((b) => b.type)).toEqual(["text", "thinking", "tool_use", "tool_use"]);
    expect(message.content[1]).toEqual(thinking as never);
    expect(message.content[2]).toMatchObject({ id: "call_a", input: { a: 1 } });
    expect(message.content[3]).toMatchObject({ id: "call_b", input: { a: 2 } });
    const starts = [...sse.matchAll(/"type":"content_block_start","index":(\d+)/g)].map((m) => Number(m[1]));
    expect(starts).toEqual([0, 1, 2, 3]);
    // every delta and stop names a block that is open then; each block stops once (review28: a stop
    // index without the shift passed)
    const open = new Set<number>();
    const stops: number[] = [];
    for (const m of sse.matchAll(/"type":"content_block_(start|delta|stop)","index":(\d+)/g)) {
      const index = Number(m[2]);
      if (m[1] === "start") open.add(index);
      else expect([m[1], index, open.has(index)]).toEqual([m[1]!, index, true]);
      if (m[1] === "stop") {
        open.delete(index);
        stops.push(index);
      }
    }
    expect(stops).toEqual([0, 1, 2, 3]);
    const hub = anthropicMessages.parseRequest!({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "q" }, { role: "assistant", content: message.content }] });
    expect(hub.messages[1]!.content).toEqual([
      { type: "text", text: "Checking." },
      { type: "tool_call", id: "call_a", name: "f", arguments: '{"a":1}', signature: g("S1") },
      { type: "tool_call", id: "call_b", name: "f", arguments: '{"a":2}' },
    ]);
    expect(geminiModelTurn(hub.messages)).toEqual(SIGNED_TURN);
    expect(JSON.stringify(geminiModelTurn(hub.messages))).not.toContain(DUMMY_THOUGHT_SIGNATURE);
  });

  test("JSON: the same blocks", () => {
    const body = anthropicMessages.encodeResponse!(RESPONSE, enc) as any;
    expect(body.content.map((b: any) => b.type)).toEqual(["text", "thinking", "tool_use", "tool_use"]);
    expect(body.content[1]).toEqual(thinking);
  });
});

describe("Responses client", () => {
  test("stream: a reasoning item with the signature before the signed function_call; sent back, Gemini gets it on the call", async () => {
    const { final, error } = await sdkStream(encode(openaiResponses.createEncoder!));
    expect(error).toBeUndefined();
    expect(final.output.map((o: any) => o.type)).toEqual(["message", "reasoning", "function_call", "function_call"]);
    expect(final.output[1]).toMatchObject({ type: "reasoning", summary: [], encrypted_content: "sy|gemini-call|call_a|S1" });
    const hub = openaiResponses.parseRequest!({ model: "m", input: [{ role: "user", content: "q" }, ...final.output] });
    expect(geminiModelTurn(hub.messages)).toEqual(SIGNED_TURN);
  });

  test("JSON: the same items", () => {
    const body = openaiResponses.encodeResponse!(RESPONSE, enc) as any;
    expect(body.output.map((o: any) => o.type)).toEqual(["message", "reasoning", "function_call", "function_call"]);
    expect(body.output[1]).toMatchObject({ type: "reasoning", summary: [], encrypted_content: "sy|gemini-call|call_a|S1" });
  });
});

describe("signaturesOntoCalls, the older form without a call id (sy|gemini|…, handed out before 2026-12-07)", () => {
  test("only a Gemini signature-only thinking part directly before an unsigned call moves onto it", () => {
    const anthropicEmpty = { type: "thinking" as const, text: "", signature: { family: "anthropic" as const, value: "A" } };
    const messages: HubMessage[] = [
      { role: "user", content: [{ type: "text", text: "q" }] },
      {
        role: "assistant",
        content: [
          anthropicEmpty,
          { type: "tool_call", id: "1", name: "f", arguments: "{}" },
          { type: "thinking", text: "", signature: g("T") },
          { type: "text", text: "then" },
          { type: "thinking", text: "", signature: g("S2") },
          { type: "tool_call", id: "2", name: "f", arguments: "{}", signature: g("own") },
          { type: "thinking", text: "", signature: g("S3") },
          { type: "tool_call", id: "3", name: "f", arguments: "{}" },
        ],
      },
    ];
    signaturesOntoCalls(messages);
    expect(messages[1]!.content).toEqual([
      anthropicEmpty,
      { type: "tool_call", id: "1", name: "f", arguments: "{}" },
      { type: "thinking", text: "", signature: g("T") },
      { type: "text", text: "then" },
      { type: "thinking", text: "", signature: g("S2") },
      { type: "tool_call", id: "2", name: "f", arguments: "{}", signature: g("own") },
      { type: "tool_call", id: "3", name: "f", arguments: "{}", signature: g("S3") },
    ]);
  });
});

// ---- recorded gemini/streamed-args-parallel.sse: two parallel getWeather calls, Boston (signed) and San
// Francisco (unsigned, as Gemini signs only the first of parallel calls). The client gets them, changes
// the history, sends it back; the Gemini request body is asserted whole. ----

const PARALLEL = canonical(decodeBytes(await recordedBytes("gemini/streamed-args-parallel.sse")));
const PARALLEL_REPLY = reply(PARALLEL).response;
const BOSTON = PARALLEL_REPLY.content[0] as Extract<HubPart, { type: "tool_call" }>;
const SF = PARALLEL_REPLY.content[1] as Extract<HubPart, { type: "tool_call" }>;
const SIG = BOSTON.signature!.value;
const WEATHER_PARAMS = { type: "object", properties: { location: { type: "string" } }, required: ["location"] };

/** The Gemini body the builder makes from a parsed client request (what goes upstream). */
function geminiBody(hub: HubRequest): unknown {
  return gemini.buildRequest(hub, { model: "gemini-3.1-pro-preview", kind: "gemini", family: "gemini", stream: true }).body;
}

/** Gemini's schema subset of {@link WEATHER_PARAMS} (formats/gemini/schema-clean.ts). */
const WEATHER_DECL = { type: "OBJECT", properties: { location: { type: "STRING" } }, required: ["location"] };

/**
 * The whole upstream body for the question, a model turn of `parts` and the results of `results` (in
 * the order of their calls); the Messages requests' `max_tokens: 100` is `generationConfig.maxOutputTokens`.
 */
function expectedBody(parts: unknown[], results: Array<[string, string]>, maxOutputTokens?: number): unknown {
  return {
    ...(maxOutputTokens ? { generationConfig: { maxOutputTokens } } : {}),
    contents: [
      { role: "user", parts: [{ text: "weather in Boston and SF?" }] },
      { role: "model", parts },
      { role: "user", parts: results.map(([name, text]) => ({ functionResponse: { name, response: { result: text } } })) },
    ],
    tools: [{ functionDeclarations: [{ name: "getWeather", parameters: WEATHER_DECL }] }],
  };
}
const call = (location: string, thoughtSignature?: string) => ({ functionCall: { name: "getWeather", args: { location } }, ...(thoughtSignature ? { thoughtSignature } : {}) });

/** The Anthropic client's blocks for the recorded reply, streamed or JSON. */
async function anthropicBlocks(stream: boolean): Promise<any[]> {
  if (!stream) return (anthropicMessages.encodeResponse!(PARALLEL_REPLY, enc) as any).content;
  let out = "";
  const e = anthropicMessages.createEncoder!(enc, (t) => (out += t));
  for (const ev of PARALLEL) e.event(ev);
  e.end();
  return (await sdkFinalMessage(out)).content as any[];
}

/** The Responses client's output items for the recorded reply, streamed or JSON. */
async function responsesItems(stream: boolean): Promise<any[]> {
  if (!stream) return (openaiResponses.encodeResponse!(PARALLEL_REPLY, enc) as any).output;
  let out = "";
  const e = openaiResponses.createEncoder!(enc, (t) => (out += t));
  for (const ev of PARALLEL) e.event(ev);
  e.end();
  const { final, error } = await sdkStream(out);
  expect(error).toBeUndefined();
  return final.output;
}

for (const stream of [true, false]) {
  const how = stream ? "streamed" : "JSON";
  describe(`Anthropic Messages client, parallel calls (${how}): each signature goes back on its own call`, () => {
    async function turn2(edit: (blocks: { thinking: any; boston: any; sf: any }) => any[], results: string[]): Promise<unknown> {
      const blocks = await anthropicBlocks(stream);
      expect(blocks.map((b) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
      expect(blocks[0]).toEqual({ type: "thinking", thinking: "", signature: `sy|gemini-call|${BOSTON.id}|${SIG}` });
      const [thinking, boston, sf] = blocks;
      expect([boston.id, sf.id]).toEqual([BOSTON.id, SF.id]);
      const hub = anthropicMessages.parseRequest!({
        model: "m",
        max_tokens: 100,
        tools: [{ name: "getWeather", input_schema: WEATHER_PARAMS }],
        messages: [
          { role: "user", content: "weather in Boston and SF?" },
          { role: "assistant", content: edit({ thinking, boston, sf }) },
          { role: "user", content: results.map((id) => ({ type: "tool_result", tool_use_id: id, content: id === BOSTON.id ? "5C" : "18C" })) },
        ],
      });
      return geminiBody(hub);
    }

    test("calls sent back in another order (the thinking block first, then San Francisco, then Boston): the signature stays on Boston's part", async () => {
      const body = await turn2(({ thinking, boston, sf }) => [thinking, sf, boston], [SF.id, BOSTON.id]);
      // San Francisco is now the step's first call: it gets Google's placeholder, Boston its own signature.
      expect(body).toEqual(expectedBody([call("San Francisco", DUMMY_THOUGHT_SIGNATURE), call("Boston", SIG)], [["getWeather", "18C"], ["getWeather", "5C"]], 100));
    });

    test("the signed call dropped by the client (its thinking block kept): its signature is not put on San Francisco's part", async () => {
      const body = await turn2(({ thinking, sf }) => [thinking, sf], [SF.id]);
      expect(body).toEqual(expectedBody([call("San Francisco", DUMMY_THOUGHT_SIGNATURE)], [["getWeather", "18C"]], 100));
    });

    test("a call the client added before Boston: Boston keeps its signature, the added call has none of its own", async () => {
      const added = { type: "tool_use", id: "toolu_added", name: "getWeather", input: { location: "Paris" } };
      const body = await turn2(({ thinking, boston, sf }) => [thinking, added, boston, sf], ["toolu_added", BOSTON.id, SF.id]);
      expect(body).toEqual(
        expectedBody([call("Paris", DUMMY_THOUGHT_SIGNATURE), call("Boston", SIG), call("San Francisco")], [["getWeather", "18C"], ["getWeather", "5C"], ["getWeather", "18C"]], 100),
      );
    });

    test("sent back as received: the signature on Boston's part, no placeholder", async () => {
      const body = await turn2(({ thinking, boston, sf }) => [thinking, boston, sf], [BOSTON.id, SF.id]);
      expect(body).toEqual(expectedBody([call("Boston", SIG), call("San Francisco")], [["getWeather", "5C"], ["getWeather", "18C"]], 100));
    });
  });

  describe(`Responses client, parallel calls (${how}): each signature goes back on its own call`, () => {
    async function turn2(edit: (items: { reasoning: any; boston: any; sf: any }) => any[], results: string[]): Promise<unknown> {
      const items = await responsesItems(stream);
      expect(items.map((o) => o.type)).toEqual(["reasoning", "function_call", "function_call"]);
      expect(items[0]).toMatchObject({ type: "reasoning", summary: [], encrypted_content: `sy|gemini-call|${BOSTON.id}|${SIG}` });
      const [reasoning, boston, sf] = items;
      expect([boston.call_id, sf.call_id]).toEqual([BOSTON.id, SF.id]);
      const outputs = results.map((id) => ({ type: "function_call_output", call_id: id, output: id === BOSTON.id ? "5C" : "18C" }));
      const hub = openaiResponses.parseRequest!({
        model: "m",
        tools: [{ type: "function", name: "getWeather", parameters: WEATHER_PARAMS }],
        input: [{ role: "user", content: "weather in Boston and SF?" }, ...edit({ reasoning, boston, sf }), ...outputs],
      });
      return geminiBody(hub);
    }

    test("function_calls sent back in another order (reasoning first, then San Francisco, then Boston): the signature stays on Boston's part", async () => {
      const body = await turn2(({ reasoning, boston, sf }) => [reasoning, sf, boston], [SF.id, BOSTON.id]);
      expect(body).toEqual(expectedBody([call("San Francisco", DUMMY_THOUGHT_SIGNATURE), call("Boston", SIG)], [["getWeather", "18C"], ["getWeather", "5C"]]));
    });

    test("the signed call dropped by the client (its reasoning item kept): its signature is not put on San Francisco's part", async () => {
      const body = await turn2(({ reasoning, sf }) => [reasoning, sf], [SF.id]);
      expect(body).toEqual(expectedBody([call("San Francisco", DUMMY_THOUGHT_SIGNATURE)], [["getWeather", "18C"]]));
    });

    test("the reasoning item sent after the calls: the signature still goes on Boston's part, not on an empty part of its own", async () => {
      const body = await turn2(({ reasoning, boston, sf }) => [boston, sf, reasoning], [BOSTON.id, SF.id]);
      expect(body).toEqual(expectedBody([call("Boston", SIG), call("San Francisco")], [["getWeather", "5C"], ["getWeather", "18C"]]));
    });
  });
}

describe("signaturesOntoCalls, by call id", () => {
  const tagged = (id: string, value: string) => ({ type: "thinking" as const, text: "", signature: { family: "gemini-call" as never, value: `${id}|${value}` } });
  const callPart = (id: string, signature?: Opaque) => ({ type: "tool_call" as const, id, name: "f", arguments: "{}", ...(signature ? { signature } : {}) });

  test("a signature goes to its call in the same message first, else to the call with its id in another assistant message; one with no call is dropped", () => {
    const messages: HubMessage[] = [
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [tagged("x", "SX"), tagged("gone", "SG"), tagged("y|odd", "SY"), callPart("x")] },
      { role: "user", content: [{ type: "tool_result", callId: "x", content: [{ type: "text", text: "r" }] }] },
      { role: "assistant", content: [tagged("x", "SX2"), callPart("x"), callPart("y|odd")] },
    ];
    signaturesOntoCalls(messages);
    expect(messages[1]!.content).toEqual([callPart("x", g("SX"))]);
    expect(messages[3]!.content).toEqual([callPart("x", g("SX2")), callPart("y|odd", g("SY"))]);
  });

  test("a call that already has a signature keeps it", () => {
    const messages: HubMessage[] = [{ role: "assistant", content: [tagged("x", "SX"), callPart("x", g("own"))] }];
    signaturesOntoCalls(messages);
    expect(messages[0]!.content).toEqual([callPart("x", g("own"))]);
  });
});

// ---- A signature on a later chunk of a streamed call (Vertex `streamFunctionCallArguments`): the call's
// start carries none, a continuation piece does. The decoder sends it as a `signature` delta on the open
// tool block; the Messages and Responses encoders had no slot there and dropped it, so the client never
// got it and the next turn carried Google's placeholder. ----

const LATE = "TGF0ZVNpZ25hdHVyZQ==";
const chunk = (parts: unknown[], finishReason?: string) => ({ candidates: [{ content: { role: "model", parts }, ...(finishReason ? { finishReason } : {}) }], responseId: "late1" });
const LATE_STREAM = canonical(
  decodeBytes(
    geminiSse(
      chunk([{ functionCall: { name: "getWeather", willContinue: true } }]),
      chunk([{ functionCall: { partialArgs: [{ jsonPath: "$.location", stringValue: "Bos", willContinue: true }], willContinue: true }, thoughtSignature: LATE }]),
      chunk([{ functionCall: { partialArgs: [{ jsonPath: "$.location", stringValue: "ton" }], willContinue: true } }]),
      chunk([{ functionCall: {} }]),
      chunk([{ functionCall: { name: "getWeather", willContinue: true } }]),
      chunk([{ functionCall: { partialArgs: [{ jsonPath: "$.location", stringValue: "San Francisco" }], willContinue: true } }]),
      chunk([{ functionCall: {} }], "STOP"),
    ),
  ),
);
const LATE_BOSTON = "call_late1_0";
const LATE_SF = "call_late1_1";

describe("a signature on a later chunk of a streamed call", () => {
  test("the decoder gives it to the call's block (a signature delta after the start), and a whole reply has it on the call", () => {
    const start = LATE_STREAM.find((e) => e.type === "block_start" && e.block.type === "tool_call");
    expect(start).toEqual({ type: "block_start", index: 0, block: { type: "tool_call", id: LATE_BOSTON, name: "getWeather" } });
    expect(LATE_STREAM).toContainEqual({ type: "block_delta", index: 0, delta: { type: "signature", signature: g(LATE) } });
    expect(reply(LATE_STREAM).response.content[0]).toMatchObject({ type: "tool_call", id: LATE_BOSTON, arguments: '{"location":"Boston"}', signature: g(LATE) });
  });

  test("Anthropic Messages client, streamed: a signature-only thinking block right after the tool_use, indexes in order; sent back, Gemini gets it on Boston's part", async () => {
    let sse = "";
    const e = anthropicMessages.createEncoder!(enc, (t) => (sse += t));
    for (const ev of LATE_STREAM) e.event(ev);
    e.end();
    const blocks = (await sdkFinalMessage(sse)).content as any[];
    expect(blocks.map((b) => b.type)).toEqual(["tool_use", "thinking", "tool_use"]);
    expect(blocks[1]).toEqual({ type: "thinking", thinking: "", signature: `sy|gemini-call|${LATE_BOSTON}|${LATE}` });
    expect([blocks[0].id, blocks[2].id]).toEqual([LATE_BOSTON, LATE_SF]);
    // each block starts once, in order; every delta and stop names the block open then
    const open = new Set<number>();
    const starts: number[] = [];
    for (const m of sse.matchAll(/"type":"content_block_(start|delta|stop)","index":(\d+)/g)) {
      const index = Number(m[2]);
      if (m[1] === "start") open.add(index), starts.push(index);
      else expect([m[1], index, open.has(index)]).toEqual([m[1]!, index, true]);
      if (m[1] === "stop") open.delete(index);
    }
    expect(starts).toEqual([0, 1, 2]);
    const hub = anthropicMessages.parseRequest!({
      model: "m",
      max_tokens: 100,
      tools: [{ name: "getWeather", input_schema: WEATHER_PARAMS }],
      messages: [
        { role: "user", content: "weather in Boston and SF?" },
        { role: "assistant", content: blocks },
        { role: "user", content: [{ type: "tool_result", tool_use_id: LATE_BOSTON, content: "5C" }, { type: "tool_result", tool_use_id: LATE_SF, content: "18C" }] },
      ],
    });
    const body = geminiBody(hub);
    expect(body).toEqual(expectedBody([call("Boston", LATE), call("San Francisco")], [["getWeather", "5C"], ["getWeather", "18C"]], 100));
    expect(JSON.stringify(body)).not.toContain(DUMMY_THOUGHT_SIGNATURE);
  });

  test("Responses client, streamed: a reasoning item with the signature right after the function_call; sent back, Gemini gets it on Boston's part", async () => {
    let sse = "";
    const e = openaiResponses.createEncoder!(enc, (t) => (sse += t));
    for (const ev of LATE_STREAM) e.event(ev);
    e.end();
    const { final, error } = await sdkStream(sse);
    expect(error).toBeUndefined();
    expect(final.output.map((o: any) => o.type)).toEqual(["function_call", "reasoning", "function_call"]);
    expect(final.output[1]).toMatchObject({ type: "reasoning", summary: [], encrypted_content: `sy|gemini-call|${LATE_BOSTON}|${LATE}` });
    expect(final.output.map((o: any) => o.call_id)).toEqual([LATE_BOSTON, undefined, LATE_SF]);
    const hub = openaiResponses.parseRequest!({
      model: "m",
      tools: [{ type: "function", name: "getWeather", parameters: WEATHER_PARAMS }],
      input: [
        { role: "user", content: "weather in Boston and SF?" },
        ...final.output,
        { type: "function_call_output", call_id: LATE_BOSTON, output: "5C" },
        { type: "function_call_output", call_id: LATE_SF, output: "18C" },
      ],
    });
    const body = geminiBody(hub);
    expect(body).toEqual(expectedBody([call("Boston", LATE), call("San Francisco")], [["getWeather", "5C"], ["getWeather", "18C"]]));
    expect(JSON.stringify(body)).not.toContain(DUMMY_THOUGHT_SIGNATURE);
  });
});
