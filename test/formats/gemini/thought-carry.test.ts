/**
 * Reasoning carried on a call's `thoughtSignature` for Gemini clients that drop thought parts
 * (formats/gemini/thought-carry.ts): the stream encoder puts it on the call after it, the request
 * parser puts it back before that call.
 */
import { expect, test } from "bun:test";
import { gemini, parseGeminiRequest } from "../../../formats/gemini/index.ts";
import type { HubEvent } from "../../../formats/hub.ts";
import { MAX_CARRIED_CHARS } from "../../../formats/gemini/thought-carry.ts";

function encode(events: HubEvent[], warnings: string[] = []): any[] {
  let out = "";
  const enc = gemini.createEncoder!({ model: "m", newId: () => "rid", warn: (code, msg) => warnings.push(code + ": " + msg) }, (t) => (out += t));
  for (const e of events) enc.event(e);
  enc.end();
  return out
    .slice(0, -2)
    .split("\n\n")
    .flatMap((e) => JSON.parse(e.slice(6)).candidates?.[0]?.content?.parts ?? []);
}

const think = (index: number, text: string, sig?: string): HubEvent[] => [
  { type: "block_start", index, block: { type: "thinking" } },
  { type: "block_delta", index, delta: { type: "thinking", text } },
  ...(sig ? [{ type: "block_delta", index, delta: { type: "signature", signature: { family: "anthropic", value: sig } } } as HubEvent] : []),
  { type: "block_stop", index },
];
const call = (index: number, id: string, sig?: string): HubEvent[] => [
  { type: "block_start", index, block: { type: "tool_call", id, name: "f", ...(sig ? { signature: { family: "gemini" as const, value: sig } } : {}) } },
  { type: "block_delta", index, delta: { type: "tool_args", json: "{}" } },
  { type: "block_stop", index },
];

/** Parts as Gemini CLI keeps them: no thought part; the placeholder on a first call without a signature. */
function asCliKeeps(parts: any[]): any[] {
  return parts.filter((p) => !p.thought && (p.functionCall || p.text)).map((p, i) => (p.functionCall && !p.thoughtSignature && i === 0 ? { ...p, thoughtSignature: "skip_thought_signature_validator" } : p));
}

test("interleaved thinking: each call carries the reasoning since the previous call, and comes back in that place", () => {
  const parts = encode([{ type: "message_start" }, ...think(0, "first", "s1"), ...call(1, "c1"), ...think(2, "second", "s2"), ...call(3, "c2"), { type: "finish", reason: "tool_use" }]);
  const calls = parts.filter((p) => p.functionCall);
  expect(calls.map((p) => p.thoughtSignature.slice(0, 12))).toEqual(["sy|thoughts|", "sy|thoughts|"]);
  const hub = parseGeminiRequest({ contents: [{ role: "user", parts: [{ text: "go" }] }, { role: "model", parts: asCliKeeps(parts) }] });
  expect(hub.messages[1]!.content).toEqual([
    { type: "thinking", text: "first", signature: { family: "anthropic", value: "s1" } },
    { type: "tool_call", id: "c1", name: "f", arguments: "{}" },
    { type: "thinking", text: "second", signature: { family: "anthropic", value: "s2" } },
    { type: "tool_call", id: "c2", name: "f", arguments: "{}" },
  ]);
});

test("a call with a Gemini signature of its own keeps it; nothing is carried", () => {
  const parts = encode([{ type: "message_start" }, ...think(0, "why"), ...call(1, "c1", "R2VtU2ln"), { type: "finish", reason: "tool_use" }]);
  expect(parts.find((p) => p.functionCall).thoughtSignature).toBe("R2VtU2ln");
});

test("no reasoning before a call: no signature on it", () => {
  const parts = encode([{ type: "message_start" }, ...call(0, "c1"), { type: "finish", reason: "tool_use" }]);
  expect(parts.find((p) => p.functionCall).thoughtSignature).toBeUndefined();
});

test("reasoning longer than the bound is not carried, with a dropped_thinking warning", () => {
  const warnings: string[] = [];
  const parts = encode([{ type: "message_start" }, ...think(0, "y".repeat(MAX_CARRIED_CHARS + 1), "s"), ...call(1, "c1"), { type: "finish", reason: "tool_use" }], warnings);
  expect(parts.find((p) => p.functionCall).thoughtSignature).toBeUndefined();
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toStartWith("dropped_thinking: Reasoning before a tool call is too long to carry");
});

test("an unreadable carried value is no state: the call goes without a signature, no reasoning is made up", () => {
  const hub = parseGeminiRequest({
    contents: [
      { role: "user", parts: [{ text: "go" }] },
      { role: "model", parts: [{ functionCall: { id: "c1", name: "f", args: {} }, thoughtSignature: "sy|thoughts|%%%not-base64" }] },
    ],
  });
  expect(hub.messages[1]!.content).toEqual([{ type: "tool_call", id: "c1", name: "f", arguments: "{}" }]);
});
