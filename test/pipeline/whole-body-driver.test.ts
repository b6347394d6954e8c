/**
 * The whole-body driver (a JSON reply to a JSON client or to a streaming one): what the request is
 * recorded as (usage, whether the provider reported it, content, stop reason, empty) is the same
 * whether the reply is replayed as events for a stream encoder or read straight from the decoded reply
 * (`observeReply`, the JSON client's path), for every recorded JSON reply and a few edge shapes.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { WholeBodyDriver } from "../../pipeline/re-translate.ts";

const RECORDED = join(import.meta.dir, "../fixtures/shared/recorded");
const enc = new TextEncoder();

/** Drives one reply through a native whole-body driver; returns what the request would be recorded as. */
function drive(format: WireFormat, body: string, clientStream: boolean) {
  const codec = codecFor(format);
  const d = new WholeBodyDriver(codec, codec, { family: "openai" }, { model: "m" }, { native: true, clientStream });
  const mid = Math.floor(body.length / 2);
  d.push(enc.encode(body.slice(0, mid)));
  d.push(enc.encode(body.slice(mid)));
  const out = d.end();
  return { facts: { usage: d.usage, usageSeen: d.usageSeen, contentSeen: d.contentSeen, stopReason: d.stopReason, empty: d.empty, earlyError: d.earlyError }, out };
}

const recorded: Array<[WireFormat, string]> = [
  ["anthropic-messages", "text.json"],
  ["anthropic-messages", "thinking-signature.json"],
  ["anthropic-messages", "tool-call-no-args.json"],
  ["anthropic-messages", "refusal.json"],
  ["gemini", "text.json"],
  ["gemini", "function-call.json"],
  ["openai-chat", "text.json"],
  ["openai-responses", "text.json"],
  ["openai-responses", "function-call.json"],
];

const chat = (choice: Record<string, unknown>, usage?: Record<string, number>) =>
  JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, ...choice }], ...(usage ? { usage } : {}) });
const edges: Array<[string, string]> = [
  ["text, no finish reason, no usage", chat({ message: { role: "assistant", content: "hi" }, finish_reason: null })],
  ["empty text, no finish reason", chat({ message: { role: "assistant", content: "" }, finish_reason: null }, { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 })],
  ["tool call only, no finish reason", chat({ message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }, finish_reason: null })],
  ["usage only", chat({ message: { role: "assistant", content: null }, finish_reason: "stop" }, { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 })],
];

describe("whole-body driver: the JSON client's facts are the replayed events' facts", () => {
  for (const [format, file] of recorded) {
    test(`${format}/${file}`, () => {
      const body = readFileSync(join(RECORDED, format, file), "utf8");
      const json = drive(format, body, false);
      const sse = drive(format, body, true);
      expect(json.facts).toEqual(sse.facts);
      // A native JSON reply goes out as the upstream's own bytes.
      expect(new TextDecoder().decode(json.out)).toBe(body);
    });
  }
  for (const [name, body] of edges) {
    test(`openai-chat: ${name}`, () => {
      expect(drive("openai-chat", body, false).facts).toEqual(drive("openai-chat", body, true).facts);
    });
  }
  test("the facts are the reply's (not both empty)", () => {
    const { facts } = drive("anthropic-messages", readFileSync(join(RECORDED, "anthropic-messages/text.json"), "utf8"), false);
    expect(facts).toMatchObject({ usage: { inputTokens: 12, outputTokens: 29 }, usageSeen: true, contentSeen: true, stopReason: "end_turn", empty: false });
    expect(drive("openai-chat", edges[1]![1], false).facts).toMatchObject({ usage: { inputTokens: 3, outputTokens: 0 }, usageSeen: true, contentSeen: false, stopReason: null, empty: true });
  });
});

describe("a large reply is refused before it is parsed when it nests past MAX_JSON_DEPTH (pipeline/whole-reply-bound.ts)", () => {
  const reply = (x: string) =>
    `{"id":"chatcmpl-d","object":"chat.completion","created":1,"model":"m","x":${x},"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`;

  test("600,000 levels in a 1.2 MB reply: a 502 upstream_nested_too_deep, nothing relayed", () => {
    const { facts, out } = drive("openai-chat", reply("[".repeat(600_000) + "]".repeat(600_000)), false);
    expect(out.byteLength).toBe(0);
    expect(facts.earlyError).toMatchObject({ status: 502, code: "upstream_nested_too_deep" });
  });

  test("as many brackets side by side (300,000 arrays, 1.2 MB) and 60,000 levels under the 1 MiB check are relayed as they came", () => {
    for (const x of ["[" + "[1],".repeat(300_000) + "1]", "[".repeat(60_000) + "]".repeat(60_000)]) {
      const body = reply(x);
      const { facts, out } = drive("openai-chat", body, false);
      expect(facts.earlyError).toBeUndefined();
      expect(new TextDecoder().decode(out)).toBe(body);
    }
  });
});

describe("each reply's usage is its own (drivers start from one shared empty usage, item 293)", () => {
  test("replies with and without usage, plain and decoded, one after another: each driver reports its reply's figures only", () => {
    const plainWith = chat({ message: { role: "assistant", content: "hi" }, finish_reason: "stop" }, { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    const plainWithout = chat({ message: { role: "assistant", content: "hi" }, finish_reason: "stop" });
    const decodedWith = chat({ message: { role: "assistant", content: "hi" }, finish_reason: null }, { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
    const runs = [plainWith, plainWithout, decodedWith, plainWithout, plainWith].map((b) => drive("openai-chat", b, false).facts);
    expect(runs.map((f) => [f.usage, f.usageSeen])).toEqual([
      [{ inputTokens: 5, outputTokens: 2 }, true],
      [{}, false],
      [{ inputTokens: 9, outputTokens: 4 }, true],
      [{}, false],
      [{ inputTokens: 5, outputTokens: 2 }, true],
    ]);
    expect(runs[0]!.usage).not.toBe(runs[4]!.usage);
    // A streaming client's replay reads the usage from the events it replays (addUsage): its own record too.
    const streamed = [plainWith, decodedWith].map((b) => drive("openai-chat", b, true).facts.usage);
    expect(streamed).toEqual([{ inputTokens: 5, outputTokens: 2 }, { inputTokens: 9, outputTokens: 4 }]);
    expect(streamed[0]).not.toBe(streamed[1]);
  });
});
