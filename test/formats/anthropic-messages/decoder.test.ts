import { describe, expect, test } from "bun:test";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { accumulate } from "../../../formats/accumulate.ts";
import { normalizeEvents } from "../../../formats/normalize.ts";
import type { HubEvent, HubResponse, ProviderFamily, Usage } from "../../../formats/hub.ts";
import { manifest, recordedBytes } from "../../support/fixtures.ts";
import { expectSplitReadsDecodeAlike } from "../../support/split-reads.ts";

const utf8 = new TextEncoder();

/** Decodes byte pieces (one `push` per piece) into loose hub events. */
function decodePieces(pieces: Uint8Array[], family: ProviderFamily = "anthropic"): HubEvent[] {
  const out: HubEvent[] = [];
  const d = anthropicMessages.createDecoder({ family }, (e) => out.push(e));
  for (const p of pieces) d.push(p);
  d.end();
  return out;
}

function decodeText(text: string, family: ProviderFamily = "anthropic"): HubEvent[] {
  return decodePieces([utf8.encode(text)], family);
}

function sse(...events: Array<[string, unknown]>): string {
  return events.map(([name, data]) => `event: ${name}\ndata: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`).join("");
}

/** Hub usage in Anthropic's vocabulary, only the fields the hub knows (for comparison with the manifest). */
function anthropicUsage(u: Usage): Record<string, number> {
  const out: Record<string, number> = {};
  if (u.inputTokens !== undefined) out.input_tokens = u.inputTokens;
  if (u.cacheWriteTokens !== undefined) out.cache_creation_input_tokens = u.cacheWriteTokens;
  if (u.cacheReadTokens !== undefined) out.cache_read_input_tokens = u.cacheReadTokens;
  if (u.outputTokens !== undefined) out.output_tokens = u.outputTokens;
  return out;
}

const STOP_TO_ANTHROPIC: Record<string, string> = { context_window_exceeded: "model_context_window_exceeded" };

function reply(events: HubEvent[]): { response: HubResponse; error?: unknown } {
  return accumulate(normalizeEvents(events));
}

const entries = (await manifest()).filter((e) => e.format === "anthropic-messages" && e.kind === "sse");

describe("decoder over every recorded Anthropic stream", () => {
  test("there are recorded streams to test", () => {
    expect(entries.length).toBeGreaterThanOrEqual(12);
  });

  for (const entry of entries) {
    test(`${entry.file}: text, thinking, tool calls, stop reason and usage match the manifest`, async () => {
      const rec = entry.recorded!;
      const { response, error } = reply(decodePieces([await recordedBytes(entry.file)]));
      expect(error).toBeUndefined();
      const text = response.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      expect(text).toBe(rec.text);
      if (rec.thinking !== undefined) {
        expect(response.content.flatMap((p) => (p.type === "thinking" ? [p.text] : [])).join("")).toBe(rec.thinking);
      }
      const calls = response.content.flatMap((p) =>
        p.type === "tool_call" ? [{ id: p.id, name: p.name, arguments: JSON.parse(p.arguments === "" ? "{}" : p.arguments) }] : [],
      );
      expect(calls).toEqual(rec.tool_calls);
      expect(STOP_TO_ANTHROPIC[response.stopReason!] ?? response.stopReason).toBe(rec.stop_reason);
      expect(response.rawStopReason).toBe(rec.stop_reason);
      expect(anthropicUsage(response.usage)).toEqual(rec.usage);
      const kinds = response.content.map((p) => (p.type === "tool_call" ? "tool_use" : p.type));
      expect(kinds).toEqual(rec.content_block_types);
      expect(response.model).toBe(rec.model);
      const sigs = response.content.flatMap((p) => (p.type === "thinking" && p.signature ? [p.signature] : []));
      expect(sigs.length).toBe(rec.signatures ?? 0);
      for (const s of sigs) expect(s.family).toBe("anthropic");
    });
  }
});

describe("adversarial framing (REFERENCE §0): reads cut around every line end, UTF-8 sequence and escape, and one byte per read", () => {
  // The reads: test/support/split-reads.ts says why they cover every state a read boundary can leave
  // the decoder in (a cut at every offset near each line end, in and around each multi-byte character
  // and escape, each checked with everything before it decoded; a seeded sample of two-piece splits);
  // one byte per read makes every offset a read boundary as well.
  for (const entry of entries) {
    test(`${entry.file}`, async () => {
      const bytes = await recordedBytes(entry.file);
      const whole = decodePieces([bytes]);
      expect(whole.length).toBeGreaterThan(0);
      const plan = expectSplitReadsDecodeAlike(bytes, (reads) => decodePieces(reads));
      if (/[^\x00-\x7f]/.test(new TextDecoder().decode(bytes))) expect(plan.utf8Cuts).toBeGreaterThan(0);
      const single: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i++) single.push(bytes.subarray(i, i + 1));
      expect(decodePieces(single)).toEqual(whole);
    });
  }
});

describe("decoder robustness", () => {
  const start = {
    type: "message_start",
    message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } },
  };
  const stop = (reason: string) => ({ type: "message_delta", delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 7 } });

  test("duplicate message_start: one message, the later usage applies", async () => {
    const events = decodePieces([await recordedBytes("anthropic-messages/duplicate-message-start.sse")]);
    expect(events.filter((e) => e.type === "message_start").length).toBe(2);
    const norm = normalizeEvents(events);
    expect(norm.filter((e) => e.type === "message_start").length).toBe(1);
  });

  test("signature-only thinking block becomes a thinking part with empty text and the signature", async () => {
    const { response } = reply(decodePieces([await recordedBytes("anthropic-messages/thinking-signature-only.sse")]));
    const t = response.content[0];
    expect(t.type).toBe("thinking");
    if (t.type !== "thinking") return;
    expect(t.text).toBe("");
    expect(t.signature?.value.startsWith("EsECCokBCBAY")).toBe(true);
  });

  test("opts.family is stamped on every signature and redacted-thinking blob", () => {
    const text = sse(
      ["message_start", start],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "RED" } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "thinking", thinking: "", signature: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "thinking_delta", thinking: "hmm" } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "signature_delta", signature: "SIG" } }],
      ["content_block_stop", { type: "content_block_stop", index: 1 }],
      ["message_delta", stop("end_turn")],
      ["message_stop", { type: "message_stop" }],
    );
    const { response } = reply(decodeText(text, "provider:glm"));
    expect(response.content).toEqual([
      { type: "redacted_thinking", data: { family: "provider:glm", value: "RED" } },
      { type: "thinking", text: "hmm", signature: { family: "provider:glm", value: "SIG" } },
    ]);
  });

  test("pings, unknown event types, unknown blocks and their deltas, and data: [DONE] are ignored", () => {
    const text =
      sse(
        ["message_start", start],
        ["ping", { type: "ping" }],
        ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "server_tool_use", id: "srv_1", name: "web_search", input: {} } }],
        ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"q":1}' } }],
        ["content_block_stop", { type: "content_block_stop", index: 0 }],
        ["brand_new_event", { type: "brand_new_event", x: 1 }],
        ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }],
        ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation: {} } }],
        ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "hi" } }],
        ["content_block_stop", { type: "content_block_stop", index: 1 }],
        ["message_delta", stop("end_turn")],
        ["message_stop", { type: "message_stop" }],
      ) + "data: [DONE]\n\n";
    const { response, error } = reply(decodeText(text));
    expect(error).toBeUndefined();
    expect(response.content).toEqual([{ type: "text", text: "hi" }]);
    expect(response.stopReason).toBe("end_turn");
  });

  test("a third-party stream that skips content_block_start still yields its text", () => {
    const text = sse(
      ["message_start", start],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "no " } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "start" } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", stop("end_turn")],
    );
    expect(reply(decodeText(text)).response.content).toEqual([{ type: "text", text: "no start" }]);
  });

  test("a final event without its blank line at EOF still counts", () => {
    const text = sse(["message_start", start]) + 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}';
    const { response, error } = reply(decodeText(text));
    expect(error).toBeUndefined();
    expect(response.stopReason).toBe("end_turn");
  });

  test("a torn final event at EOF is a truncation, not a malformed-event error", () => {
    const text = sse(["message_start", start]) + 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_re';
    const events = decodeText(text);
    expect(events.some((e) => e.type === "error")).toBe(false);
    const { error } = reply(events);
    expect(error).toMatchObject({ code: "upstream_truncated" });
  });

  test("in-band overloaded_error becomes a hub error of kind overloaded, status 529, and ends decoding", () => {
    const text = sse(
      ["message_start", start],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "par" } }],
      ["error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ignored" } }],
    );
    const events = decodeText(text);
    const last = events.at(-1)!;
    expect(last.type).toBe("error");
    if (last.type !== "error") return;
    expect(last.error.kind).toBe("overloaded");
    expect(last.error.status).toBe(529);
    expect(last.error.message).toBe("Overloaded");
    expect(events.some((e) => e.type === "block_delta" && e.delta.type === "text" && e.delta.text === "ignored")).toBe(false);
  });

  test("an in-band error as the first event (a 200 that opens with an error) is a hub error", () => {
    const events = decodeText(sse(["error", { type: "error", error: { type: "rate_limit_error", message: "slow down" } }]));
    expect(events).toEqual([{ type: "error", error: { kind: "rate_limit", message: "slow down", status: 429, code: "rate_limit_error" } }]);
  });

  test("a data line that is not JSON becomes an api_error (502), never an exception", () => {
    const events = decodeText(sse(["message_start", start]) + "event: content_block_start\ndata: {not json\n\n");
    const last = events.at(-1)!;
    expect(last.type === "error" && last.error.kind).toBe("api_error");
    expect(last.type === "error" && last.error.status).toBe(502);
  });

  test("tool_use start with `{}` is a placeholder: no fragment for it, '' arguments when no delta arrives", () => {
    const text = sse(
      ["message_start", start],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "ls", input: {} } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", stop("tool_use")],
    );
    const events = decodeText(text);
    expect(events.some((e) => e.type === "block_delta")).toBe(false);
    expect(reply(events).response.content).toEqual([{ type: "tool_call", id: "toolu_1", name: "ls", arguments: "" }]);
  });

  test("a third-party tool_use whose whole input sits in the start (no deltas) keeps its arguments", () => {
    const text = sse(
      ["message_start", start],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "call_1", name: "read", input: { path: "a.txt" } } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", stop("tool_use")],
    );
    const call = reply(decodeText(text)).response.content[0];
    expect(call.type === "tool_call" && JSON.parse(call.arguments)).toEqual({ path: "a.txt" });
  });

  test("…but when deltas do arrive the start's input is not added on top", () => {
    const text = sse(
      ["message_start", start],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "call_1", name: "read", input: { path: "a.txt" } } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"path":"b.txt"}' } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", stop("tool_use")],
    );
    const call = reply(decodeText(text)).response.content[0];
    expect(call.type === "tool_call" && call.arguments).toBe('{"path":"b.txt"}');
  });

  test("every stop reason of the vocabulary maps by meaning; an unknown one is `other` with the raw kept", () => {
    const cases: Array<[string, string]> = [
      ["end_turn", "end_turn"],
      ["tool_use", "tool_use"],
      ["max_tokens", "max_tokens"],
      ["stop_sequence", "stop_sequence"],
      ["refusal", "refusal"],
      ["pause_turn", "pause_turn"],
      ["model_context_window_exceeded", "context_window_exceeded"],
      ["brand_new_reason", "other"],
    ];
    for (const [raw, hub] of cases) {
      const events = decodeText(sse(["message_start", start], ["message_delta", stop(raw)]));
      const fin = events.find((e) => e.type === "finish");
      expect(fin).toEqual({ type: "finish", reason: hub as never, stopSequence: null, raw });
    }
  });

  test("the matched stop sequence is carried", () => {
    const events = decodeText(
      sse(["message_start", start], ["message_delta", { type: "message_delta", delta: { stop_reason: "stop_sequence", stop_sequence: "</answer>" }, usage: { output_tokens: 3 } }]),
    );
    expect(events.find((e) => e.type === "finish")).toEqual({ type: "finish", reason: "stop_sequence", stopSequence: "</answer>", raw: "stop_sequence" });
  });

  test("EOF after message_delta (no message_stop) is a finished reply, not a truncation (case B12)", () => {
    const { response, error } = reply(decodeText(sse(["message_start", start], ["message_delta", stop("end_turn")])));
    expect(error).toBeUndefined();
    expect(response.stopReason).toBe("end_turn");
    expect(response.usage).toEqual({ inputTokens: 5, outputTokens: 7 });
  });

  test("EOF before message_delta is a truncation error after normalisation", () => {
    const text = sse(
      ["message_start", start],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "cut" } }],
    );
    const { response, error } = reply(decodeText(text));
    expect(error).toBeDefined();
    expect(response.stopReason).toBeNull();
  });

  test("CRLF line endings and data: without a space are read the same", () => {
    const lf = sse(["message_start", start], ["message_delta", stop("end_turn")], ["message_stop", { type: "message_stop" }]);
    const crlf = lf.replace(/\n/g, "\r\n").replace(/data: /g, "data:");
    expect(decodeText(crlf)).toEqual(decodeText(lf));
  });

  test("output_tokens_details.thinking_tokens becomes reasoning tokens", () => {
    const events = decodeText(
      sse(["message_start", start], [
        "message_delta",
        { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 50, output_tokens_details: { thinking_tokens: 40 } } },
      ]),
    );
    expect(reply(events).response.usage).toEqual({ inputTokens: 5, outputTokens: 50, reasoningTokens: 40 });
  });
});

