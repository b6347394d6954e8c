/**
 * A native JSON reply of a plain shape (text, reasoning and tool calls with a stop reason) is observed
 * from its facts (`plainReplyFacts`, Chat, Gemini, Anthropic Messages and Responses; docs/performance.md
 * items 92, 95, 101 and 102) instead of the hub reply `decodeResponse` builds: what the
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
import { upstreamNestedTooDeep } from "../../formats/json-depth.ts";
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
  ["reasoning_content", chat({ message: msg({ content: "x", reasoning_content: "think" }), finish_reason: "stop" }, USAGE), true],
  ["reasoning", chat({ message: msg({ content: "x", reasoning: "think" }), finish_reason: "stop" }, USAGE), true],
  ["reasoning_details", chat({ message: msg({ content: "x", reasoning_details: [{ type: "reasoning.encrypted", data: "e" }] }), finish_reason: "stop" }, USAGE), false],
  ["tool call", chat({ message: msg({ content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }), finish_reason: "tool_calls" }, USAGE), true],
  ["legacy function_call", chat({ message: msg({ content: null, function_call: { name: "f", arguments: "{}" } }), finish_reason: "function_call" }, USAGE), false],
  ["logprobs", chat({ message: msg({ content: "x" }), logprobs: { content: [{ token: "x", logprob: -0.1, top_logprobs: [] }] }, finish_reason: "stop" }, USAGE), false],
  ["content as parts", chat({ message: msg({ content: [{ type: "text", text: "x" }] }), finish_reason: "stop" }, USAGE), false],
  ["content null", chat({ message: msg({ content: null }), finish_reason: "stop" }, USAGE), true],
  ...chatToolShapes(),
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
  ["text then function call", gem({ content: { role: "model", parts: [{ text: "x" }, { functionCall: { name: "f", args: {} } }] }, finishReason: "STOP" }, GUSAGE), true],
  ["function call", gem({ content: { role: "model", parts: [{ functionCall: { name: "f", args: { a: 1 } } }] }, finishReason: "STOP" }, GUSAGE), true],
  ...geminiCallShapes(),
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
  ["text then tool use", ant([t("x"), { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } }], AUSAGE, { stop_reason: "tool_use" }), true],
  ["tool use with an end_turn stop (promoted)", ant([{ type: "tool_use", id: "toolu_1", name: "f", input: {} }], AUSAGE), true],
  ...anthropicToolShapes(),
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

const resp = (output: unknown[], usage?: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: "resp_1", object: "response", created_at: 1, status: "completed", error: null, incomplete_details: null, model: "gpt-x", output, ...(usage !== undefined ? { usage } : {}), ...extra });
const RUSAGE = { input_tokens: 45, input_tokens_details: { cached_tokens: 12 }, output_tokens: 24, output_tokens_details: { reasoning_tokens: 8 }, total_tokens: 69 };
const say = (...texts: string[]) => ({ id: "msg_1", type: "message", status: "completed", role: "assistant", content: texts.map((x) => ({ type: "output_text", text: x, annotations: [], logprobs: [] })) });
const fcall = (args: unknown, extra: Record<string, unknown> = {}) => ({ id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: "weather", arguments: args, ...extra });
const reasoning = (extra: Record<string, unknown>) => ({ id: "rs_1", type: "reasoning", ...extra });
const summary = (...texts: string[]) => texts.map((x) => ({ type: "summary_text", text: x }));

const responsesShapes: Array<[string, string, boolean]> = [
  ["text, completed, usage with cache and reasoning", resp([say("Hello there")], RUSAGE), true],
  ["text, no usage", resp([say("Hello there")]), true],
  ["two text parts and an empty one, no usage", resp([say("a", "", "bc")]), true],
  ["no output, completed", resp([], RUSAGE), true],
  ["text with phase and log probabilities, no usage", resp([{ ...say("x"), phase: "final_answer", content: [{ type: "output_text", text: "xy", annotations: [], logprobs: [{ token: "xy", logprob: -0.1, bytes: [120, 121], top_logprobs: [] }] }] }]), true],
  ["incomplete, max_output_tokens", resp([say("Hel")], RUSAGE, { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }), true],
  ["incomplete, content_filter", resp([say("x")], RUSAGE, { status: "incomplete", incomplete_details: { reason: "content_filter" } }), true],
  ["incomplete without details", resp([say("x")], RUSAGE, { status: "incomplete" }), true],
  ["incomplete, details of the wrong type", resp([say("x")], RUSAGE, { status: "incomplete", incomplete_details: "max_output_tokens" }), true],
  ["function call, completed (tool use)", resp([fcall('{"location":"SF"}')], RUSAGE), true],
  ["two function calls and text, no usage", resp([say("Let me look."), fcall('{"a":1}'), fcall("{}", { call_id: "call_2", namespace: "ns" })]), true],
  ["function call, incomplete max_output_tokens", resp([fcall('{"loc')], RUSAGE, { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }), true],
  ["function call without an item id, no usage", resp([{ type: "function_call", call_id: "call_1", name: "f", arguments: "{}" }]), true],
  ["reasoning summary, encrypted, then a call, no usage", resp([reasoning({ summary: summary("Think", "ing"), encrypted_content: "gAAA" }), fcall("{}")]), true],
  ["reasoning with raw content only, no usage", resp([reasoning({ summary: [], content: [{ type: "reasoning_text", text: "raw" }, { type: "reasoning_text", text: "" }] }), say("x")]), true],
  ["reasoning with a summary and raw content, no usage", resp([reasoning({ summary: summary("s"), content: [{ type: "reasoning_text", text: "longer raw" }] }), say("x")]), true],
  ["reasoning, encrypted only", resp([reasoning({ summary: [], encrypted_content: "gAAA" }), say("x")], RUSAGE), true],
  ["reasoning with null summary, no usage", resp([reasoning({ summary: null, content: [{ type: "reasoning_text", text: "r" }] })]), true],
  ["custom tool call, no usage", resp([{ id: "ctc_1", type: "custom_tool_call", status: "completed", call_id: "call_1", name: "apply_patch", input: "*** Begin Patch\n\"x\"" }]), true],
  ["custom tool call, usage", resp([{ id: "ctc_1", type: "custom_tool_call", call_id: "call_1", name: "apply_patch", input: "patch" }], RUSAGE), true],
  ["usage without counts, a call", resp([fcall("{}")], { total_tokens: 3 }), true],
  ["usage null", resp([say("x")], null), true],
  ["refusal", resp([{ type: "message", role: "assistant", content: [{ type: "refusal", refusal: "I can't" }] }], RUSAGE), false],
  ["a content part without type", resp([{ type: "message", role: "assistant", content: [{ text: "x" }] }], RUSAGE), false],
  ["a content part that is null", resp([{ type: "message", role: "assistant", content: [null] }], RUSAGE), false],
  ["message content not an array", resp([{ type: "message", role: "assistant", content: "x" }], RUSAGE), false],
  ["a reasoning summary entry that is null", resp([reasoning({ summary: [null] }), say("x")], RUSAGE), false],
  ["a reasoning summary of the wrong type", resp([reasoning({ summary: "s" }), say("x")], RUSAGE), false],
  ["function call without call_id", resp([{ type: "function_call", id: "fc_1", name: "f", arguments: "{}" }], RUSAGE), false],
  ["function call with an object id and no call_id", resp([{ type: "function_call", id: { toString: 1, valueOf: 1 }, name: "f", arguments: "{}" }], RUSAGE), false],
  ["function call with object arguments", resp([fcall({ a: 1 })], RUSAGE), false],
  ["custom tool call without input", resp([{ type: "custom_tool_call", call_id: "call_1", name: "apply_patch" }], RUSAGE), false],
  ["a hosted tool's item", resp([{ type: "web_search_call", id: "ws_1", status: "completed" }, say("x")], RUSAGE), false],
  ["an item that is null", resp([null, say("x")], RUSAGE), false],
  ["failed", resp([], RUSAGE, { status: "failed", error: { code: "server_error", message: "boom" } }), false],
  ["in progress", resp([say("x")], RUSAGE, { status: "in_progress" }), false],
  ["status absent", JSON.stringify({ id: "resp_1", object: "response", output: [say("x")], usage: RUSAGE }), false],
  ["output absent", JSON.stringify({ id: "resp_1", object: "response", status: "completed", usage: RUSAGE }), false],
  ["an error body", JSON.stringify({ error: { message: "quota", type: "insufficient_quota", code: "insufficient_quota" } }), false],
  ["not JSON", "<html>oops</html>", false],
];

/**
 * A tool input nested deeper than `JSON.stringify` can recurse (`JSON.parse` takes it): the decoding
 * path once serialised it into the call's arguments after ~1 s of CPU in JavaScriptCore's slow path
 * and answered 502 "could not be read"; it now refuses an input nesting more than MAX_JSON_DEPTH levels
 * before serialising it (formats/json-depth.ts: 502 upstream_nested_too_deep, at once). With token
 * counts the facts path does not serialise the input and forwards the reply as it came; without them
 * it would serialise it for the output characters, so it leaves such a reply to the decode (the same
 * 502).
 */
describe("a tool input nested past JSON.stringify's depth (60,000 levels)", () => {
  const DEEP = "[".repeat(60_000) + "]".repeat(60_000);
  const bodies: Array<[WireFormat, (usage: boolean) => string]> = [
    ["anthropic-messages", (u) => ant([{ type: "tool_use", id: "toolu_1", name: "f", input: "@DEEP@" }], u ? AUSAGE : undefined, { stop_reason: "tool_use" })],
    ["openai-chat", (u) => chat({ message: msg({ content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "@DEEP@" } }] }), finish_reason: "tool_calls" }, u ? USAGE : undefined)],
    ["gemini", (u) => gem({ content: { role: "model", parts: [{ functionCall: { name: "f", args: { a: "@DEEP@" } } }] }, finishReason: "STOP" }, u ? GUSAGE : undefined)],
  ];
  for (const [format, body] of bodies) {
    test(`${format}: with usage, forwarded with its usage and stop reason`, () => {
      const text = body(true).replace('"@DEEP@"', DEEP);
      const facts = drive(codecFor(format), text);
      expect(facts.earlyError).toBeUndefined();
      expect(facts.out).toBe(text);
      expect(facts.usageSeen).toBe(true);
      expect(facts.stopReason).toBe("tool_use");
    });
    test(`${format}: the decoding path refuses it (502 upstream_nested_too_deep)`, () => {
      expect(drive(decodingOnly(codecFor(format)), body(true).replace('"@DEEP@"', DEEP)).earlyError).toEqual(upstreamNestedTooDeep("tool-call arguments"));
    });
    test(`${format}: without usage, decoded as before (the same 502)`, () => {
      const text = body(false).replace('"@DEEP@"', DEEP);
      const facts = drive(codecFor(format), text);
      expect(facts.earlyError).toEqual(upstreamNestedTooDeep("tool-call arguments"));
      expect(facts).toEqual(drive(decodingOnly(codecFor(format)), text));
    });
  }
});

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
  for (const [name, body, plain] of responsesShapes) {
    test(`responses: ${name}${plain ? "" : " (decoded)"}`, () => expect(same("openai-responses", body)).toBe(plain));
  }
  for (const [format, file, plain] of [
    ["openai-chat", "text.json", true],
    ["openai-chat", "error-unsupported-parameter.json", false],
    ["gemini", "text.json", true],
    ["gemini", "function-call.json", true],
    ["gemini", "error-429-retry-info.json", false],
    ["anthropic-messages", "text.json", true],
    ["anthropic-messages", "thinking-signature.json", true],
    ["anthropic-messages", "refusal.json", true],
    ["anthropic-messages", "tool-call-no-args.json", true],
    ["anthropic-messages", "error-invalid-request.json", false],
    ["openai-responses", "text.json", true],
    ["openai-responses", "function-call.json", true],
    ["openai-responses", "error-insufficient-quota.json", false],
  ] as Array<[WireFormat, string, boolean]>) {
    test(`recorded ${format}/${file}`, () => expect(same(format, readFileSync(join(RECORDED, format, file), "utf8"))).toBe(plain));
  }
});

/** Chat replies with tool calls and reasoning (item 101); `chat`, `msg` and `USAGE` are defined before the list that spreads these. */
function chatToolShapes(): Array<[string, string, boolean]> {
  const call = (args: unknown, extra: Record<string, unknown> = {}) => ({ id: "call_1", type: "function", function: { name: "f", arguments: args }, ...extra });
  return [
    ["tool call, stop finish (promoted), no usage", chat({ message: msg({ content: null, tool_calls: [call('{"a":1}')] }), finish_reason: "stop" }), true],
    ["tool call, length finish (kept), usage", chat({ message: msg({ content: null, tool_calls: [call('{"a":')] }), finish_reason: "length" }, USAGE), true],
    ["text and two calls, no usage", chat({ message: msg({ content: "Let me check.", tool_calls: [call('{"a":1}'), call("{}", { id: "call_2" })] }), finish_reason: "tool_calls" }), true],
    ["call with object arguments, no usage", chat({ message: msg({ content: null, tool_calls: [call({ path: "a.ts", n: [1, 2] })] }), finish_reason: "tool_calls" }), true],
    ["call with object arguments, usage", chat({ message: msg({ content: null, tool_calls: [call({ path: "a.ts" })] }), finish_reason: "tool_calls" }, USAGE), true],
    ["call with null arguments, no usage", chat({ message: msg({ content: null, tool_calls: [call(null)] }), finish_reason: "tool_calls" }), true],
    ["call without arguments or id, no usage", chat({ message: msg({ content: null, tool_calls: [{ type: "function", function: { name: "f" } }] }), finish_reason: "tool_calls" }), true],
    ["call with arguments a number, no usage", chat({ message: msg({ content: null, tool_calls: [call(12)] }), finish_reason: "tool_calls" }), true],
    ["content absent with a call", chat({ message: { role: "assistant", tool_calls: [call("{}")] }, finish_reason: "tool_calls" }, USAGE), true],
    ["tool_calls empty", chat({ message: msg({ content: "x", tool_calls: [] }), finish_reason: "stop" }), true],
    ["usage with total only, object arguments", chat({ message: msg({ content: null, tool_calls: [call({ a: 1 })] }), finish_reason: "tool_calls" }, { total_tokens: 9 }), true],
    ["reasoning_content and a call, no usage", chat({ message: msg({ content: null, reasoning_content: "I should call f.", tool_calls: [call("{}")] }), finish_reason: "tool_calls" }), true],
    ["empty reasoning_content beside reasoning, no usage", chat({ message: msg({ content: "x", reasoning_content: "", reasoning: "ignored" }), finish_reason: "stop" }), true],
    ["reasoning_content null beside reasoning, no usage", chat({ message: msg({ content: "x", reasoning_content: null, reasoning: "taken" }), finish_reason: "stop" }), true],
    ["reasoning_content of the wrong type", chat({ message: msg({ content: "x", reasoning_content: 5 }), finish_reason: "stop" }, USAGE), false],
    ["content a number", chat({ message: msg({ content: 5 }), finish_reason: "stop" }, USAGE), false],
    ["a call that is not an object", chat({ message: msg({ content: null, tool_calls: ["f"] }), finish_reason: "tool_calls" }), false],
    ["a call without function", chat({ message: msg({ content: null, tool_calls: [{ id: "c", type: "function" }] }), finish_reason: "tool_calls" }), false],
    ["tool_calls an object", chat({ message: msg({ content: null, tool_calls: { id: "c" } }), finish_reason: "tool_calls" }), false],
    ["a call and a matched stop string", chat({ message: msg({ content: null, tool_calls: [call("{}")] }), finish_reason: "stop", stop_reason: "###" }, USAGE), false],
    ["a call and an error finish", chat({ message: msg({ content: null, tool_calls: [call("{}")] }), finish_reason: "error" }, USAGE), false],
    ["a call and reasoning_details", chat({ message: msg({ content: null, tool_calls: [call("{}")], reasoning_details: [{ type: "reasoning.text", text: "t", signature: "s" }] }), finish_reason: "tool_calls" }, USAGE), false],
  ];
}

/** Gemini replies with function calls (item 101); `gem`, `text` and `GUSAGE` are defined before the list that spreads these. */
function geminiCallShapes(): Array<[string, string, boolean]> {
  const parts = (...p: unknown[]) => ({ role: "model", parts: p });
  const fc = (f: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ functionCall: f, ...extra });
  return [
    ["function call, no usage", gem({ content: parts(fc({ name: "f", args: { location: "SF", n: [1, 2] } })), finishReason: "STOP" }), true],
    ["function call with id and signature, usage", gem({ content: parts(fc({ id: "c1", name: "f", args: { a: 1 } }, { thoughtSignature: "c2ln" })), finishReason: "STOP" }, GUSAGE), true],
    ["two function calls, no usage", gem({ content: parts(fc({ name: "f", args: { a: 1 } }), fc({ name: "g", args: {} })), finishReason: "STOP" }), true],
    ["function call without args, no usage", gem({ content: parts(fc({ name: "f" })), finishReason: "STOP" }), true],
    ["thought, text, call, text, no usage", gem({ content: parts({ text: "hmm", thought: true }, { text: "I'll call." }, fc({ name: "f", args: { q: "x" } }), { text: "after" }), finishReason: "STOP" }), true],
    ["function call, MAX_TOKENS (kept)", gem({ content: parts(fc({ name: "f", args: {} })), finishReason: "MAX_TOKENS" }, GUSAGE), true],
    ["function call, willContinue false", gem({ content: parts(fc({ name: "f", args: { a: 1 }, willContinue: false })), finishReason: "STOP" }), true],
    ["usage without counts, a call", gem({ content: parts(fc({ name: "f", args: { a: 1 } })), finishReason: "STOP" }, { trafficType: "ON_DEMAND" }), true],
    ["function call with an empty name", gem({ content: parts(fc({ name: "", args: {} })), finishReason: "STOP" }), false],
    ["function call without a name", gem({ content: parts(fc({ args: {} })), finishReason: "STOP" }), false],
    ["streamed arguments (partialArgs)", gem({ content: parts(fc({ name: "f", partialArgs: [{ jsonPath: "$.a", stringValue: "x" }] })), finishReason: "STOP" }), false],
    ["function call that will continue", gem({ content: parts(fc({ name: "f", args: {}, willContinue: true })), finishReason: "STOP" }), false],
    ["function call with text beside it", gem({ content: parts(fc({ name: "f", args: {} }, { text: "x" })), finishReason: "STOP" }), false],
    ["function call with args an array", gem({ content: parts(fc({ name: "f", args: [1] })), finishReason: "STOP" }), false],
  ];
}

/** Messages replies with tool use (item 101); `ant`, `t`, `think` and `AUSAGE` are defined before the list that spreads these. */
function anthropicToolShapes(): Array<[string, string, boolean]> {
  const use = (input: unknown, extra: Record<string, unknown> = {}) => ({ type: "tool_use", id: "toolu_1", name: "f", ...(input !== undefined ? { input } : {}), ...extra });
  return [
    ["tool use, no usage", ant([use({ command: "ls -la", paths: ["a", "b"], deep: { x: null } })], undefined, { stop_reason: "tool_use" }), true],
    ["two tool uses, no usage", ant([use({ a: 1 }), use({ b: "é\n" }, { id: "toolu_2" })], undefined, { stop_reason: "tool_use" }), true],
    ["tool use without input, no usage", ant([use(undefined)], undefined, { stop_reason: "tool_use" }), true],
    ["tool use with input null, no usage", ant([use(null)], undefined, { stop_reason: "tool_use" }), true],
    ["tool use with input a string, no usage", ant([use("x")], undefined, { stop_reason: "tool_use" }), true],
    ["signed thinking, text, tool use, usage with cache", ant([think("plan", "c2ln"), t("Running it."), use({ a: 1 })], AUSAGE, { stop_reason: "tool_use" }), true],
    ["tool use, max_tokens (kept)", ant([use({})], AUSAGE, { stop_reason: "max_tokens" }), true],
    ["tool use, stop_sequence (promoted)", ant([use({})], AUSAGE, { stop_reason: "stop_sequence", stop_sequence: "###" }), true],
    ["tool use with id and name of the wrong types", ant([use({}, { id: 5, name: null })], AUSAGE, { stop_reason: "tool_use" }), true],
    ["usage without counts, a tool use", ant([use({ a: 1 })], { service_tier: "standard" }, { stop_reason: "tool_use" }), true],
    ["tool use and a server tool use", ant([use({}), { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }], AUSAGE, { stop_reason: "tool_use" }), false],
  ];
}
