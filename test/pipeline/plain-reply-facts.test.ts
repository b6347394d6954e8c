/**
 * A native JSON reply of the plainest shape is observed from its facts (`plainReplyFacts`, Chat,
 * Gemini and Anthropic Messages; docs/performance.md items 92 and 95) instead of the hub reply `decodeResponse` builds: what the
 * request is recorded as (usage, whether the provider reported it, output characters, stop reason,
 * content seen, empty, early error) and the bytes the client gets must be exactly what the decoding
 * path gives, for every recorded reply and for shapes on both sides of "plain". The decoding path is
 * the same driver with a codec that has no `plainReplyFacts`.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { codecFor } from "../../formats/index.ts";
import type { FormatCodec } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { WholeBodyDriver } from "../../pipeline/re-translate.ts";

const RECORDED = join(import.meta.dir, "../fixtures/shared/recorded");
const enc = new TextEncoder();

/** One reply through a native JSON client's whole-body driver; what the request would be recorded as, and the body out. */
function drive(codec: FormatCodec, body: string) {
  const d = new WholeBodyDriver(codec, codec, { family: "gemini" }, { model: "m" }, { native: true, clientStream: false });
  d.push(enc.encode(body));
  const out = new TextDecoder().decode(d.end());
  return { usage: d.usage, usageSeen: d.usageSeen, outputChars: d.outputChars, stopReason: d.stopReason, contentSeen: d.contentSeen, empty: d.empty, earlyError: d.earlyError, out };
}

function decodingOnly(codec: FormatCodec): FormatCodec {
  const { plainReplyFacts: _, ...rest } = codec;
  return rest;
}

/** Asserts the facts path and the decoding path agree on `body`; returns whether the facts path took it. */
function same(format: WireFormat, body: string): boolean {
  const codec = codecFor(format);
  expect(codec.plainReplyFacts).toBeDefined();
  expect(drive(codec, body)).toEqual(drive(decodingOnly(codec), body));
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  return codec.plainReplyFacts!(parsed) !== undefined;
}

const chat = (choice: Record<string, unknown>, usage?: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, ...choice }], ...(usage !== undefined ? { usage } : {}), ...extra });
const msg = (m: Record<string, unknown>) => ({ role: "assistant", ...m });
const USAGE = { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 1 } };

/** [name, body, taken by the facts path] */
const chatShapes: Array<[string, string, boolean]> = [
  ["text, stop, usage with details", chat({ message: msg({ content: "Hello there", refusal: null }), logprobs: null, finish_reason: "stop" }, USAGE), true],
  ["text, length", chat({ message: msg({ content: "Hel" }), finish_reason: "length" }, { prompt_tokens: 3, completion_tokens: 3 }), true],
  ["empty text, stop, no usage", chat({ message: msg({ content: "" }), finish_reason: "stop" }), true],
  ["text, content_filter", chat({ message: msg({ content: "x" }), finish_reason: "content_filter" }, USAGE), true],
  ["text, tool_calls finish without calls", chat({ message: msg({ content: "x" }), finish_reason: "tool_calls" }, USAGE), true],
  ["text, unknown finish", chat({ message: msg({ content: "x" }), finish_reason: "weird" }, USAGE), true],
  ["index absent", JSON.stringify({ choices: [{ message: msg({ content: "x" }), finish_reason: "stop" }], usage: USAGE }), true],
  ["usage null", chat({ message: msg({ content: "x" }), finish_reason: "stop" }, null), true],
  ["tool_calls null, reasoning_content null", chat({ message: msg({ content: "x", tool_calls: null, reasoning_content: null }), finish_reason: "stop" }, USAGE), true],
  ["finish error", chat({ message: msg({ content: "x" }), finish_reason: "error" }, USAGE), false],
  ["no finish reason", chat({ message: msg({ content: "x" }), finish_reason: null }, USAGE), false],
  ["empty finish reason", chat({ message: msg({ content: "x" }), finish_reason: "" }, USAGE), false],
  ["vLLM stop string", chat({ message: msg({ content: "x" }), finish_reason: "stop", stop_reason: "###" }, USAGE), false],
  ["SGLang matched stop", chat({ message: msg({ content: "x" }), finish_reason: "stop", matched_stop: "END" }, USAGE), false],
  ["refusal", chat({ message: msg({ content: null, refusal: "I can't" }), finish_reason: "stop" }, USAGE), false],
  ["reasoning_content", chat({ message: msg({ content: "x", reasoning_content: "think" }), finish_reason: "stop" }, USAGE), false],
  ["reasoning", chat({ message: msg({ content: "x", reasoning: "think" }), finish_reason: "stop" }, USAGE), false],
  ["reasoning_details", chat({ message: msg({ content: "x", reasoning_details: [{ type: "reasoning.encrypted", data: "e" }] }), finish_reason: "stop" }, USAGE), false],
  ["tool call", chat({ message: msg({ content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }), finish_reason: "tool_calls" }, USAGE), false],
  ["legacy function_call", chat({ message: msg({ content: null, function_call: { name: "f", arguments: "{}" } }), finish_reason: "function_call" }, USAGE), false],
  ["logprobs", chat({ message: msg({ content: "x" }), logprobs: { content: [{ token: "x", logprob: -0.1, top_logprobs: [] }] }, finish_reason: "stop" }, USAGE), false],
  ["content as parts", chat({ message: msg({ content: [{ type: "text", text: "x" }] }), finish_reason: "stop" }, USAGE), false],
  ["content null", chat({ message: msg({ content: null }), finish_reason: "stop" }, USAGE), false],
  ["two choices", JSON.stringify({ choices: [{ index: 0, message: msg({ content: "a" }), finish_reason: "stop" }, { index: 1, message: msg({ content: "b" }), finish_reason: "stop" }], usage: USAGE }), false],
  ["choice of index 1 only", JSON.stringify({ choices: [{ index: 1, message: msg({ content: "a" }), finish_reason: "stop" }], usage: USAGE }), false],
  ["no message", JSON.stringify({ choices: [{ index: 0, finish_reason: "stop" }] }), false],
  ["not a chat body", JSON.stringify({ hello: "world" }), false],
  ["an error body", JSON.stringify({ error: { message: "bad", type: "invalid_request_error" } }), false],
  ["not JSON", "<html>oops</html>", false],
];

const gem = (candidate: Record<string, unknown> | undefined, usageMetadata?: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...(candidate ? { candidates: [candidate] } : {}), ...(usageMetadata !== undefined ? { usageMetadata } : {}), modelVersion: "gemini-2.5-flash", responseId: "r-1", ...extra });
const GUSAGE = { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 30, thoughtsTokenCount: 5, cachedContentTokenCount: 4, toolUsePromptTokenCount: 2 };
const text = (...t: string[]) => ({ role: "model", parts: t.map((x) => ({ text: x })) });

const geminiShapes: Array<[string, string, boolean]> = [
  ["text, STOP, usage with thoughts and cache", gem({ content: text("Hello ", "there"), finishReason: "STOP", index: 0 }, GUSAGE), true],
  ["text, MAX_TOKENS", gem({ content: text("Hel"), finishReason: "MAX_TOKENS" }, { promptTokenCount: 3, candidatesTokenCount: 3 }), true],
  ["text, SAFETY", gem({ content: text("x"), finishReason: "SAFETY" }, GUSAGE), true],
  ["text, OTHER", gem({ content: text("x"), finishReason: "OTHER" }, GUSAGE), true],
  ["empty text part, STOP, no usage", gem({ content: text(""), finishReason: "STOP" }), true],
  ["no content, STOP", gem({ finishReason: "STOP" }, GUSAGE), true],
  ["parts absent", gem({ content: { role: "model" }, finishReason: "STOP" }, GUSAGE), true],
  ["usage without counts (Vertex trafficType)", gem({ content: text("x"), finishReason: "STOP" }, { trafficType: "ON_DEMAND" }), true],
  ["no finish reason", gem({ content: text("x") }, GUSAGE), false],
  ["empty finish reason", gem({ content: text("x"), finishReason: "" }, GUSAGE), false],
  ["thought part, then text", gem({ content: { role: "model", parts: [{ text: "think", thought: true }, { text: "x" }] }, finishReason: "STOP" }, GUSAGE), true],
  ["thought false", gem({ content: { role: "model", parts: [{ text: "x", thought: false }] }, finishReason: "STOP" }, GUSAGE), true],
  ["signed text", gem({ content: { role: "model", parts: [{ text: "x", thoughtSignature: "c2ln" }] }, finishReason: "STOP" }, GUSAGE), true],
  ["signed thought, snake-case signature", gem({ content: { role: "model", parts: [{ text: "t", thought: true, thought_signature: "c2ln" }, { text: "x" }] }, finishReason: "STOP" }, GUSAGE), true],
  ["empty signed text", gem({ content: { role: "model", parts: [{ text: "", thoughtSignature: "c2ln" }] }, finishReason: "STOP" }, GUSAGE), true],
  ["signature of the wrong type", gem({ content: { role: "model", parts: [{ text: "x", thoughtSignature: 7 }] }, finishReason: "STOP" }, GUSAGE), false],
  ["text then function call", gem({ content: { role: "model", parts: [{ text: "x" }, { functionCall: { name: "f", args: {} } }] }, finishReason: "STOP" }, GUSAGE), false],
  ["function call", gem({ content: { role: "model", parts: [{ functionCall: { name: "f", args: { a: 1 } } }] }, finishReason: "STOP" }, GUSAGE), false],
  ["inline data", gem({ content: { role: "model", parts: [{ inlineData: { mimeType: "image/png", data: "AA==" } }] }, finishReason: "STOP" }, GUSAGE), false],
  ["logprobs", gem({ content: text("x"), finishReason: "STOP", logprobsResult: { chosenCandidates: [] } }, GUSAGE), false],
  ["candidate index 1", gem({ content: text("x"), finishReason: "STOP", index: 1 }, GUSAGE), false],
  ["two candidates", JSON.stringify({ candidates: [{ content: text("a"), finishReason: "STOP", index: 0 }, { content: text("b"), finishReason: "STOP", index: 1 }], usageMetadata: GUSAGE }), false],
  ["prompt blocked", gem(undefined, GUSAGE, { promptFeedback: { blockReason: "SAFETY" } }), false],
  ["an array of responses", `[${gem({ content: text("x"), finishReason: "STOP" }, GUSAGE)}]`, false],
  ["an error body", JSON.stringify({ error: { code: 400, message: "bad", status: "INVALID_ARGUMENT" } }), false],
  ["a schema failure", gem({ content: text("x"), finishReason: 3 }, GUSAGE), false],
  ["not Gemini", JSON.stringify({ hello: "world" }), false],
];

const ant = (content: unknown, usage?: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: "msg_1", type: "message", role: "assistant", model: "claude-x", content, stop_reason: "end_turn", stop_sequence: null, ...(usage !== undefined ? { usage } : {}), ...extra });
const AUSAGE = { input_tokens: 12, cache_creation_input_tokens: 30, cache_read_input_tokens: 40, cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 }, output_tokens: 9, output_tokens_details: { thinking_tokens: 3 }, service_tier: "standard" };
const t = (x: unknown) => ({ type: "text", text: x });
const think = (x: unknown, signature?: unknown) => ({ type: "thinking", thinking: x, ...(signature !== undefined ? { signature } : {}) });

const anthropicShapes: Array<[string, string, boolean]> = [
  ["text, end_turn, usage with cache and 1h writes", ant([t("Hello there")], AUSAGE), true],
  ["two text blocks, one with citations", ant([t("a"), { ...t("bc"), citations: [{ type: "char_location", cited_text: "x" }] }], AUSAGE), true],
  ["text, max_tokens", ant([t("Hel")], { input_tokens: 3, output_tokens: 3 }, { stop_reason: "max_tokens" }), true],
  ["text, stop_sequence with the sequence", ant([t("x")], AUSAGE, { stop_reason: "stop_sequence", stop_sequence: "###" }), true],
  ["text, model_context_window_exceeded", ant([t("x")], AUSAGE, { stop_reason: "model_context_window_exceeded" }), true],
  ["text, pause_turn", ant([t("x")], AUSAGE, { stop_reason: "pause_turn" }), true],
  ["text, unknown stop reason", ant([t("x")], AUSAGE, { stop_reason: "weird" }), true],
  ["text, tool_use stop without a tool use", ant([t("x")], AUSAGE, { stop_reason: "tool_use" }), true],
  ["no content, refusal", ant([], AUSAGE, { stop_reason: "refusal" }), true],
  ["empty text, no usage", ant([t("")]), true],
  ["usage null", ant([t("x")], null), true],
  ["usage without counts", ant([t("x")], { service_tier: "standard" }), true],
  ["usage counts of the wrong type", ant([t("x")], { input_tokens: "12", output_tokens: null, cache_read_input_tokens: 4 }), true],
  ["reasoning tokens under their other name", ant([t("x")], { input_tokens: 1, output_tokens: 2, output_tokens_details: { reasoning_tokens: 1 } }), true],
  ["id, model and stop_sequence absent", JSON.stringify({ type: "message", content: [t("x")], stop_reason: "end_turn", usage: AUSAGE }), true],
  ["signed thinking, then text", ant([think("925 / 5", "Er4BCkYI"), t("185")], AUSAGE), true],
  ["unsigned thinking", ant([think("hmm"), t("x")], AUSAGE), true],
  ["thinking with an empty signature", ant([think("hmm", ""), t("x")], AUSAGE), true],
  ["thinking only", ant([think("hmm", "c2ln")], AUSAGE), true],
  ["redacted thinking, then text", ant([{ type: "redacted_thinking", data: "EmwKAhgBEgy" }, t("x")], AUSAGE), true],
  // Without token counts the output is measured in characters: every kind of block counts.
  ["signed thinking and two texts, no usage", ant([think("925 / 5", "Er4BCkYI"), t("18"), t("5")]), true],
  ["unsigned thinking, usage without counts", ant([think("hmm")], { service_tier: "standard" }), true],
  ["redacted thinking and text, no usage", ant([{ type: "redacted_thinking", data: "EmwKAhgBEgy" }, t("x")]), true],
  ["thinking with a signature of the wrong type", ant([think("hmm", 7), t("x")], AUSAGE), false],
  ["thinking without its text", ant([{ type: "thinking", signature: "c2ln" }, t("x")], AUSAGE), false],
  ["redacted thinking without data", ant([{ type: "redacted_thinking" }, t("x")], AUSAGE), false],
  ["text block without text", ant([{ type: "text" }], AUSAGE), false],
  ["text then tool use", ant([t("x"), { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } }], AUSAGE, { stop_reason: "tool_use" }), false],
  ["tool use with an end_turn stop (promoted)", ant([{ type: "tool_use", id: "toolu_1", name: "f", input: {} }], AUSAGE), false],
  ["server tool use and its result", ant([{ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } }, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] }, t("x")], AUSAGE), false],
  ["a block of an unknown type", ant([{ type: "image_generation", data: "x" }, t("x")], AUSAGE), false],
  ["a block that is not an object", ant(["x"], AUSAGE), false],
  ["no stop reason", ant([t("x")], AUSAGE, { stop_reason: null }), false],
  ["empty stop reason", ant([t("x")], AUSAGE, { stop_reason: "" }), false],
  ["stop reason of the wrong type", ant([t("x")], AUSAGE, { stop_reason: 1 }), false],
  ["type absent", JSON.stringify({ id: "msg_1", content: [t("x")], stop_reason: "end_turn", usage: AUSAGE }), false],
  ["type of another kind", ant([t("x")], AUSAGE, { type: "completion" }), false],
  ["id of the wrong type", ant([t("x")], AUSAGE, { id: 5 }), false],
  ["model of the wrong type", ant([t("x")], AUSAGE, { model: ["claude"] }), false],
  ["stop_sequence of the wrong type", ant([t("x")], AUSAGE, { stop_sequence: 0 }), false],
  ["usage of the wrong type", ant([t("x")], 12), false],
  ["usage as an array", ant([t("x")], [1, 2]), false],
  ["content absent", JSON.stringify({ type: "message", stop_reason: "end_turn", usage: AUSAGE }), false],
  ["content a string", ant("hello", AUSAGE), false],
  ["an array of messages", `[${ant([t("x")], AUSAGE)}]`, false],
  ["an error body", JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }), false],
  ["not Anthropic", JSON.stringify({ hello: "world" }), false],
  ["not JSON", "<html>oops</html>", false],
];

describe("native JSON reply facts: the same as the decoding path", () => {
  for (const [name, body, plain] of chatShapes) {
    test(`chat: ${name}${plain ? "" : " (decoded)"}`, () => expect(same("openai-chat", body)).toBe(plain));
  }
  for (const [name, body, plain] of geminiShapes) {
    test(`gemini: ${name}${plain ? "" : " (decoded)"}`, () => expect(same("gemini", body)).toBe(plain));
  }
  for (const [name, body, plain] of anthropicShapes) {
    test(`anthropic: ${name}${plain ? "" : " (decoded)"}`, () => expect(same("anthropic-messages", body)).toBe(plain));
  }
  for (const [format, file, plain] of [
    ["openai-chat", "text.json", true],
    ["openai-chat", "error-unsupported-parameter.json", false],
    ["gemini", "text.json", true],
    ["gemini", "function-call.json", false],
    ["gemini", "error-429-retry-info.json", false],
    ["anthropic-messages", "text.json", true],
    ["anthropic-messages", "thinking-signature.json", true],
    ["anthropic-messages", "refusal.json", true],
    ["anthropic-messages", "tool-call-no-args.json", false],
    ["anthropic-messages", "error-invalid-request.json", false],
  ] as Array<[WireFormat, string, boolean]>) {
    test(`recorded ${format}/${file}`, () => expect(same(format, readFileSync(join(RECORDED, format, file), "utf8"))).toBe(plain));
  }
});
