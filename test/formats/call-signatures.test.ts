/**
 * Gemini's function-call signatures for Anthropic Messages and Responses clients (formats/call-signatures.ts):
 * a signature-only thinking block / reasoning item just before the call (neither format has a slot on
 * a tool call), read back onto the call when the client sends the history again, so the Gemini builder
 * puts the signature on the functionCall part instead of Google's placeholder.
 */
import { describe, expect, test } from "bun:test";
import type { HubEvent, HubMessage, HubResponse, Opaque } from "../../formats/hub.ts";
import { anthropicMessages } from "../../formats/anthropic-messages/index.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { DUMMY_THOUGHT_SIGNATURE, gemini } from "../../formats/gemini/index.ts";
import { signaturesOntoCalls } from "../../formats/call-signatures.ts";
import { sdkFinalMessage } from "../support/anthropic-sdk.ts";
import { sdkStream } from "../support/openai-responses-helpers.ts";

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
  const thinking = { type: "thinking", thinking: "", signature: "sy|gemini|S1" };
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
    expect(final.output[1]).toMatchObject({ type: "reasoning", summary: [], encrypted_content: "sy|gemini|S1" });
    const hub = openaiResponses.parseRequest!({ model: "m", input: [{ role: "user", content: "q" }, ...final.output] });
    expect(geminiModelTurn(hub.messages)).toEqual(SIGNED_TURN);
  });

  test("JSON: the same items", () => {
    const body = openaiResponses.encodeResponse!(RESPONSE, enc) as any;
    expect(body.output.map((o: any) => o.type)).toEqual(["message", "reasoning", "function_call", "function_call"]);
    expect(body.output[1]).toMatchObject({ type: "reasoning", summary: [], encrypted_content: "sy|gemini|S1" });
  });
});

describe("signaturesOntoCalls", () => {
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
