import { describe, expect, test } from "bun:test";
import { APIError } from "@anthropic-ai/sdk";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { normalizeEvents } from "../../../formats/normalize.ts";
import type { EncoderOptions } from "../../../formats/codec.ts";
import type { HubEvent } from "../../../formats/hub.ts";
import { manifest, recordedBytes } from "../../support/fixtures.ts";
import { eventTypes, parseSse, sdkFinalMessage } from "../../support/anthropic-sdk.ts";

const OPTS: EncoderOptions = { model: "claude-client-name", newId: (p) => `${p}test1` };

/** Canonical hub events → Anthropic SSE text. */
function encode(events: HubEvent[], opts: EncoderOptions = OPTS): string {
  let out = "";
  const enc = anthropicMessages.createEncoder!(opts, (t) => (out += t));
  for (const e of events) enc.event(e);
  enc.end();
  return out;
}

/** Upstream Anthropic bytes → decoder → normalizer → encoder. */
function roundTrip(bytes: Uint8Array): string {
  const loose: HubEvent[] = [];
  const d = anthropicMessages.createDecoder({ family: "anthropic" }, (e) => loose.push(e));
  d.push(bytes);
  d.end();
  return encode(normalizeEvents(loose));
}

const entries = (await manifest()).filter((e) => e.format === "anthropic-messages" && e.kind === "sse");

describe("decode → normalize → encode of every recorded Anthropic stream, read by the official SDK", () => {
  for (const entry of entries) {
    test(`${entry.file}`, async () => {
      const rec = entry.recorded!;
      const out = roundTrip(await recordedBytes(entry.file));
      const msg = await sdkFinalMessage(out);
      const text = msg.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      expect(text).toBe(rec.text);
      if (rec.thinking !== undefined) {
        expect(msg.content.flatMap((b) => (b.type === "thinking" ? [b.thinking] : [])).join("")).toBe(rec.thinking);
      }
      const calls = msg.content.flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, name: b.name, arguments: b.input }] : []));
      expect(calls).toEqual(rec.tool_calls);
      expect(msg.stop_reason as string).toBe(rec.stop_reason);
      expect(msg.content.map((b) => b.type)).toEqual(rec.content_block_types);
      expect(msg.model).toBe("claude-client-name");
      // Usage the SDK ends up with: a subset check in the recording's own vocabulary.
      const usage = msg.usage as unknown as Record<string, number>;
      for (const [k, v] of Object.entries(rec.usage as Record<string, number>)) expect({ k, v: usage[k] }).toEqual({ k, v });
      // Exactly one message_start, one message_stop, every event named after its type.
      const evs = parseSse(out);
      for (const e of evs) expect(JSON.parse(e.data).type).toBe(e.event);
      expect(evs.filter((e) => e.event === "message_start").length).toBe(1);
      expect(evs.at(-1)!.event).toBe("message_stop");
      expect(JSON.parse(evs[0].data).message.content).toEqual([]);
    });
  }

  test("signatures survive the round trip unchanged (Anthropic family is not tagged)", async () => {
    const msg = await sdkFinalMessage(roundTrip(await recordedBytes("anthropic-messages/thinking-signature.sse")));
    const t = msg.content[0];
    expect(t.type === "thinking" && t.signature.startsWith("EvQBCkYICxgCKkAx")).toBe(true);
  });

  test("the duplicate-message-start recording, which the SDK rejects as is, comes out valid", async () => {
    const raw = await recordedBytes("anthropic-messages/duplicate-message-start.sse");
    await expect(sdkFinalMessage(raw)).rejects.toThrow(/Unexpected event order/);
    const msg = await sdkFinalMessage(roundTrip(raw));
    expect(msg.content).toEqual([{ type: "text", text: "Hello, World!" }] as never);
    expect(msg.usage.output_tokens).toBe(227);
  });
});

describe("encoder framing", () => {
  test("exact event sequence for thinking + text + tool call; indices contiguous; fragments as input_json_delta", async () => {
    const out = encode(
      normalizeEvents([
        { type: "message_start", id: "chatcmpl-9", usage: {} },
        { type: "block_delta", index: 0, delta: { type: "thinking", text: "plan" } },
        { type: "block_delta", index: 1, delta: { type: "text", text: "Checking." } },
        { type: "block_start", index: 2, block: { type: "tool_call", id: "call_a", name: "get_weather" } },
        { type: "block_delta", index: 2, delta: { type: "tool_args", json: '{"city": "Os' } },
        { type: "block_delta", index: 2, delta: { type: "tool_args", json: 'lo"}' } },
        { type: "finish", reason: "end_turn" },
      ]),
    );
    expect(eventTypes(out)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const evs = parseSse(out).map((e) => JSON.parse(e.data));
    expect(evs[0].message.id).toBe("msg_test1"); // a non-msg_ upstream id is replaced
    expect(evs.filter((e) => e.type === "content_block_start").map((e) => e.index)).toEqual([0, 1, 2]);
    expect(evs[7].content_block).toEqual({ type: "tool_use", id: "call_a", name: "get_weather", input: {} });
    expect(evs.filter((e) => e.delta?.type === "input_json_delta").map((e) => e.delta.partial_json)).toEqual(['{"city": "Os', 'lo"}']);
    const msg = await sdkFinalMessage(out);
    expect(msg.stop_reason).toBe("tool_use"); // promoted: a tool_use block exists
    expect(msg.content[2]).toEqual({ type: "tool_use", id: "call_a", name: "get_weather", input: { city: "Oslo" } } as never);
  });

  test("usage that arrives after the finish (Chat) lands in message_delta: input and cache counts included", async () => {
    const out = encode(
      normalizeEvents([
        { type: "message_start" },
        { type: "block_delta", index: 0, delta: { type: "text", text: "ok" } },
        { type: "finish", reason: "end_turn" },
        { type: "usage", usage: { inputTokens: 20, cacheReadTokens: 100, outputTokens: 30 } },
      ]),
    );
    const start = JSON.parse(parseSse(out)[0].data);
    expect(start.message.usage.input_tokens).toBe(0); // unknown at message_start
    const msg = await sdkFinalMessage(out);
    expect(msg.usage.input_tokens).toBe(20);
    expect(msg.usage.cache_read_input_tokens).toBe(100);
    expect(msg.usage.output_tokens).toBe(30);
  });

  test("an empty reply (refusal with no blocks) is still a valid message with empty content and no empty text block", async () => {
    const out = encode(normalizeEvents([{ type: "message_start", usage: { inputTokens: 3 } }, { type: "finish", reason: "refusal" }]));
    expect(eventTypes(out)).toEqual(["message_start", "message_delta", "message_stop"]);
    const msg = await sdkFinalMessage(out);
    expect(msg.content).toEqual([]);
    expect(msg.stop_reason).toBe("refusal");
  });

  test("context_window_exceeded and other map to Anthropic's vocabulary; the stop sequence is passed", async () => {
    const a = await sdkFinalMessage(encode(normalizeEvents([{ type: "message_start" }, { type: "finish", reason: "context_window_exceeded" }])));
    expect(a.stop_reason as string).toBe("model_context_window_exceeded");
    const b = await sdkFinalMessage(encode(normalizeEvents([{ type: "message_start" }, { type: "block_delta", index: 0, delta: { type: "text", text: "x" } }, { type: "finish", reason: "other" }])));
    expect(b.stop_reason).toBe("end_turn");
    const c = await sdkFinalMessage(encode(normalizeEvents([{ type: "message_start" }, { type: "finish", reason: "stop_sequence", stopSequence: "</a>" }])));
    expect([c.stop_reason, c.stop_sequence]).toEqual(["stop_sequence", "</a>"]);
  });

  test("foreign signatures and redacted data are tagged with their family; a tool call's Gemini signature known at its start comes as a signature-only thinking block before it, with the call's id (call-signatures.ts), a later one is not sent", async () => {
    const out = encode(
      normalizeEvents([
        { type: "message_start" },
        { type: "block_start", index: 0, block: { type: "redacted_thinking", data: { family: "provider:glm", value: "R1" } } },
        { type: "block_stop", index: 0 },
        { type: "block_delta", index: 1, delta: { type: "thinking", text: "t" } },
        { type: "block_delta", index: 1, delta: { type: "signature", signature: { family: "gemini", value: "G1" } } },
        { type: "block_start", index: 2, block: { type: "tool_call", id: "c1", name: "f", signature: { family: "gemini", value: "G2" } } },
        { type: "block_delta", index: 2, delta: { type: "signature", signature: { family: "gemini", value: "G3" } } },
        { type: "finish", reason: "tool_use" },
      ]),
    );
    const msg = await sdkFinalMessage(out);
    expect(msg.content[0]).toEqual({ type: "redacted_thinking", data: "sy|provider:glm|R1" } as never);
    expect(msg.content[1]).toEqual({ type: "thinking", thinking: "t", signature: "sy|gemini|G1" } as never);
    expect(msg.content[2]).toEqual({ type: "thinking", thinking: "", signature: "sy|gemini-call|c1|G2" } as never);
    expect(msg.content.map((c) => c.type)).toEqual(["redacted_thinking", "thinking", "thinking", "tool_use"]);
    expect(out.includes("G3")).toBe(false);
  });

  test("reasoning summary parts are separated by a blank line", async () => {
    const out = encode(
      normalizeEvents([
        { type: "message_start" },
        { type: "block_start", index: 0, block: { type: "thinking" } },
        { type: "block_delta", index: 0, delta: { type: "thinking_part" } },
        { type: "block_delta", index: 0, delta: { type: "thinking", text: "First." } },
        { type: "block_delta", index: 0, delta: { type: "thinking_part" } },
        { type: "block_delta", index: 0, delta: { type: "thinking", text: "Second." } },
        { type: "finish", reason: "end_turn" },
      ]),
    );
    const msg = await sdkFinalMessage(out);
    expect(msg.content[0]).toEqual({ type: "thinking", thinking: "First.\n\nSecond.", signature: "" } as never);
  });
});

describe("failures never read as a finished message (SPEC 6.4)", () => {
  test("post-commit error: exactly one event: error, nothing after; the SDK throws an APIError of that type", async () => {
    const out = encode(
      normalizeEvents(
        [
          { type: "message_start" },
          { type: "block_delta", index: 0, delta: { type: "text", text: "partial" } },
          { type: "error", error: { kind: "overloaded", status: 529, message: "Overloaded" } },
        ],
        { end: true },
      ),
    );
    const types = eventTypes(out);
    expect(types.at(-1)).toBe("error");
    expect(types.filter((t) => t === "error").length).toBe(1);
    expect(types.includes("message_delta")).toBe(false);
    expect(types.includes("message_stop")).toBe(false);
    const err = await sdkFinalMessage(out).then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).type).toBe("overloaded_error");
  });

  test("truncated stream (no finish): the SDK throws (api_error), never a finished message", async () => {
    const loose: HubEvent[] = [];
    const d = anthropicMessages.createDecoder({ family: "anthropic" }, (e) => loose.push(e));
    const full = new TextDecoder().decode(await recordedBytes("anthropic-messages/text.sse"));
    d.push(new TextEncoder().encode(full.slice(0, full.indexOf("event: content_block_stop"))));
    d.end();
    const out = encode(normalizeEvents(loose));
    expect(out.includes("message_stop")).toBe(false);
    expect(eventTypes(out).at(-1)).toBe("error");
    const err = await sdkFinalMessage(out).then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).type).toBe("api_error");
  });

  test("encoder end() without finish, even with no normaliser in front, writes an error and no finish", () => {
    const out = encode([{ type: "message_start" }, { type: "block_start", index: 0, block: { type: "text" } }, { type: "block_delta", index: 0, delta: { type: "text", text: "x" } }]);
    expect(eventTypes(out)).toEqual(["message_start", "content_block_start", "content_block_delta", "error"]);
  });

  test("an error before anything else is a lone event: error", () => {
    const out = encode([{ type: "error", error: { kind: "rate_limit", status: 429, message: "slow" } }]);
    expect(out).toBe('event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"slow"}}\n\n');
  });

  test("an error after the finish (stop reason known, B12-like) closes the message instead", async () => {
    const out = encode(
      normalizeEvents([
        { type: "message_start" },
        { type: "block_delta", index: 0, delta: { type: "text", text: "Done." } },
        { type: "finish", reason: "end_turn" },
        { type: "error", error: { kind: "api_error", status: 502, message: "connection reset" } },
      ]),
    );
    expect(eventTypes(out).slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect((await sdkFinalMessage(out)).stop_reason).toBe("end_turn");
  });

  test("case B12: upstream ends after message_delta without message_stop → exactly the closing frames", async () => {
    const c = (await Bun.file(`${import.meta.dir}/../../fixtures/shared/cases/B12.json`).json()) as any;
    const loose: HubEvent[] = [];
    const d = anthropicMessages.createDecoder({ family: "anthropic" }, (e) => loose.push(e));
    d.push(new TextEncoder().encode(c.upstream.response.sse));
    d.end();
    const out = encode(normalizeEvents(loose));
    expect(eventTypes(out)).toEqual(c.expect.event_types);
    const msg = await sdkFinalMessage(out);
    expect(msg.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")).toBe(c.expect.text);
    expect(msg.stop_reason).toBe(c.expect.stop_reason);
    expect(msg.usage.output_tokens).toBe(c.expect.usage.output_tokens);
  });
});
