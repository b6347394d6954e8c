import { describe, expect, test } from "bun:test";
import { clientRequest, manifest, recordedBytes } from "../../support/fixtures.ts";
import { decodePieces, parseSse, sdkStream, type WireEvent } from "../../support/openai-responses-helpers.ts";
import { normalizeEvents } from "../../../formats/normalize.ts";
import { responseToEvents } from "../../../formats/accumulate.ts";
import type { HubEvent, HubRequest, StopReason } from "../../../formats/hub.ts";
import type { EncoderOptions } from "../../../formats/codec.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";
import { parseRequest } from "../../../formats/openai-responses/parse.ts";
import { responseEcho } from "../../../formats/openai-responses/response.ts";

const entries = (await manifest()).filter((e) => e.format === "openai-responses" && e.kind === "sse");

function counterIds(): (prefix: string) => string {
  let n = 0;
  return (prefix) => `${prefix}${++n}`;
}

function encode(events: HubEvent[], opts: Partial<EncoderOptions> = {}, callEnd = true): string {
  let out = "";
  const enc = openaiResponses.createEncoder!({ model: "client-model", newId: counterIds(), now: () => 1_750_000_000_000, ...opts }, (t) => (out += t));
  for (const e of events) enc.event(e);
  if (callEnd) enc.end();
  return out;
}

/** Grammar checks every Responses stream we emit must pass (REFERENCE §7 item 3). */
function checkGrammar(wire: WireEvent[]): void {
  expect(wire[0]!.data.type).toBe("response.created");
  wire.forEach((w, i) => {
    expect(w.event).toBe(w.data.type); // event: line equals data.type
    expect(w.data.sequence_number).toBe(i); // 0..n gap-free over ALL events
  });
  const added = wire.filter((w) => w.data.type === "response.output_item.added");
  const done = wire.filter((w) => w.data.type === "response.output_item.done");
  const failed = wire.at(-1)!.data.type === "response.failed";
  if (!failed) {
    expect(done.map((w) => w.data.output_index)).toEqual(added.map((w) => w.data.output_index));
    expect(done.map((w) => w.data.item.id)).toEqual(added.map((w) => w.data.item.id));
  }
  expect(added.map((w) => w.data.output_index)).toEqual(added.map((_, i) => i));
  const partsAdded = wire.filter((w) => w.data.type === "response.content_part.added").length;
  const partsDone = wire.filter((w) => w.data.type === "response.content_part.done").length;
  if (!failed) expect(partsDone).toBe(partsAdded);
  for (const a of added) {
    const id: string = a.data.item.id;
    const prefix = { message: "msg_", reasoning: "rs_", function_call: "fc_", custom_tool_call: "ctc_" }[a.data.item.type as string];
    expect(prefix && id.startsWith(prefix)).toBeTruthy();
  }
  expect(wire[0]!.data.response.id).toMatch(/^resp_/);
  const terminals = wire.filter((w) => ["response.completed", "response.incomplete", "response.failed"].includes(w.data.type));
  expect(terminals.length).toBe(1);
  expect(terminals[0]).toBe(wire.at(-1)!);
  for (const t of terminals) expect(t.data.response.id).toBe(wire[0]!.data.response.id);
}

describe("decode → normalize → encode, read by the openai SDK's ResponseStream", () => {
  for (const entry of entries) {
    test(entry.file, async () => {
      const bytes = await recordedBytes(entry.file);
      const sse = encode(normalizeEvents(decodePieces([bytes])));
      const wire = parseSse(sse);
      checkGrammar(wire);
      const rec = entry.recorded!;
      const { final, error, events } = await sdkStream(sse);
      expect(events.length).toBeGreaterThan(0);

      if (rec.status === "failed") {
        // the SDK raises on the error event, and the stream still ends with response.failed for Codex
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toContain(rec.error.message);
        const failed = wire.at(-1)!.data;
        expect(failed.type).toBe("response.failed");
        expect(failed.response.status).toBe("failed");
        expect(failed.response.error).toEqual({ code: rec.error.code, message: rec.error.message });
        return;
      }
      expect(error).toBeUndefined();
      expect(final.status).toBe(rec.status);
      expect(final.output_text).toBe(rec.text);
      const calls = final.output.filter((o: any) => o.type === "function_call");
      expect(calls.map((c: any) => ({ call_id: c.call_id, name: c.name, arguments: JSON.parse(c.arguments) }))).toEqual(
        rec.function_calls.map((c: any) => ({ call_id: c.call_id, name: c.name, arguments: c.arguments })),
      );
      const reasoning = final.output.filter((o: any) => o.type === "reasoning");
      if (rec.reasoning_summary) expect(reasoning[0].summary.map((s: any) => s.text)).toEqual(rec.reasoning_summary);
      if (rec.reasoning_text) expect(reasoning[0].summary.map((s: any) => s.text).join("")).toBe(rec.reasoning_text);
      if (rec.encrypted_reasoning_items) expect(reasoning.filter((r: any) => typeof r.encrypted_content === "string").length).toBe(rec.encrypted_reasoning_items);
      expect(final.usage).toEqual({
        input_tokens: rec.usage.input_tokens,
        input_tokens_details: { cached_tokens: rec.usage.cached_tokens },
        output_tokens: rec.usage.output_tokens,
        output_tokens_details: { reasoning_tokens: rec.usage.reasoning_tokens },
        total_tokens: rec.usage.total_tokens,
      });
      if (rec.incomplete_details) expect(final.incomplete_details).toEqual(rec.incomplete_details);
      for (const v of Object.values(final.usage).concat(Object.values(final.usage.input_tokens_details), Object.values(final.usage.output_tokens_details))) {
        if (typeof v === "number") expect(Number.isInteger(v)).toBe(true);
      }
    });
  }

  test("the SDK rejects two recordings as they are, and accepts them after translation", async () => {
    for (const f of ["openai-responses/rotating-item-ids.sse", "openai-responses/incomplete-max-output-tokens.sse"]) {
      const bytes = await recordedBytes(f);
      expect((await sdkStream(bytes)).error).toBeInstanceOf(Error);
      const { error, final } = await sdkStream(encode(normalizeEvents(decodePieces([bytes]))));
      expect(error).toBeUndefined();
      expect(final.id).toMatch(/^resp_/);
    }
  });
});

describe("encoder event sequences", () => {
  const start: HubEvent = { type: "message_start", id: "up_1", model: "upstream-model", usage: { inputTokens: 20 } };

  test("B24-responses shape: thinking → reasoning item with summary events, then the message item", async () => {
    const sse = encode([
      start,
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "Think A" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: " then B" } },
      { type: "block_delta", index: 0, delta: { type: "signature", signature: { family: "anthropic", value: "sig1" } } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "text" } },
      { type: "block_delta", index: 1, delta: { type: "text", text: "Answer" } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "end_turn" },
      { type: "usage", usage: { outputTokens: 12 } },
    ]);
    const wire = parseSse(sse);
    checkGrammar(wire);
    expect(wire.map((w) => w.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const reasoningDone = wire[8]!.data.item;
    expect(reasoningDone.summary).toEqual([{ type: "summary_text", text: "Think A then B" }]);
    // An Anthropic signature is not OpenAI state: it travels tagged, so it can only go back to Anthropic (F-8).
    expect(reasoningDone.encrypted_content).toBe("sy|anthropic|sig1");
    const { final } = await sdkStream(sse);
    expect(final.output_text).toBe("Answer");
    expect(final.model).toBe("client-model");
    expect(final.usage).toEqual({ input_tokens: 20, input_tokens_details: { cached_tokens: 0 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 32 });
  });

  test("openai-family signature → encrypted_content on the done reasoning item; thinking_part → next summary part", () => {
    const wire = parseSse(
      encode([
        start,
        { type: "block_start", index: 0, block: { type: "thinking", itemId: "rs_up" } },
        { type: "block_delta", index: 0, delta: { type: "thinking_part" } },
        { type: "block_delta", index: 0, delta: { type: "thinking", text: "one" } },
        { type: "block_delta", index: 0, delta: { type: "thinking_part" } },
        { type: "block_delta", index: 0, delta: { type: "thinking", text: "two" } },
        { type: "block_delta", index: 0, delta: { type: "signature", signature: { family: "openai", value: "gAAAA-enc" } } },
        { type: "block_stop", index: 0 },
        { type: "finish", reason: "end_turn" },
      ]),
    );
    const done = wire.find((w) => w.event === "response.output_item.done")!.data.item;
    expect(done).toEqual({ id: "rs_up", type: "reasoning", summary: [{ type: "summary_text", text: "one" }, { type: "summary_text", text: "two" }], encrypted_content: "gAAAA-enc" });
    expect(wire.filter((w) => w.event === "response.reasoning_summary_part.added").map((w) => w.data.summary_index)).toEqual([0, 1]);
  });

  test("B30 shape: text then a tool call over Chat-style ids: resp_/msg_/fc_ minted, call_id kept, arguments from the deltas", async () => {
    const sse = encode(
      normalizeEvents([
        { type: "message_start", id: "chatcmpl-abc" },
        { type: "block_delta", index: 0, delta: { type: "text", text: "Checking." } },
        { type: "block_start", index: 1, block: { type: "tool_call", id: "call_x", name: "get_weather" } },
        { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"city":"Oslo"}' } },
        { type: "finish", reason: "tool_use" },
      ]),
      { newId: undefined },
    );
    const wire = parseSse(sse);
    checkGrammar(wire);
    expect(wire.map((w) => w.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const fc = wire[11]!.data.item;
    expect(fc).toMatchObject({ type: "function_call", call_id: "call_x", name: "get_weather", arguments: '{"city":"Oslo"}', status: "completed" });
    expect(fc.id).toMatch(/^fc_[0-9a-f]{32}$/);
    const { final } = await sdkStream(sse);
    expect(final.status).toBe("completed");
    expect(final.output.map((o: any) => o.type)).toEqual(["message", "function_call"]);
  });

  test("B12 shape: finish arrived, stream ended without closing frames → response.completed is added at end()", () => {
    const wire = parseSse(
      encode([
        start,
        { type: "block_start", index: 0, block: { type: "text" } },
        { type: "block_delta", index: 0, delta: { type: "text", text: "Done." } },
        { type: "block_stop", index: 0 },
        { type: "finish", reason: "end_turn" },
      ]),
    );
    expect(wire.at(-1)!.data.type).toBe("response.completed");
    expect(wire.at(-1)!.data.response.output[0].content[0].text).toBe("Done.");
  });

  test("no-argument tool call is sent as {}", () => {
    const wire = parseSse(
      encode([
        start,
        { type: "block_start", index: 0, block: { type: "tool_call", id: "toolu_1", name: "list_files" } },
        { type: "block_stop", index: 0 },
        { type: "finish", reason: "tool_use" },
      ]),
    );
    expect(wire.find((w) => w.event === "response.function_call_arguments.done")!.data.arguments).toBe("{}");
    expect(wire.find((w) => w.event === "response.output_item.done")!.data.item.arguments).toBe("{}");
  });

  test("max_tokens → response.incomplete max_output_tokens; refusal → content_filter", async () => {
    for (const [reason, detail] of [
      ["max_tokens", "max_output_tokens"],
      ["refusal", "content_filter"],
    ] as const) {
      const sse = encode(normalizeEvents([start, { type: "block_delta", index: 0, delta: { type: "text", text: "cut" } }, { type: "finish", reason }], { end: false }));
      const wire = parseSse(sse);
      checkGrammar(wire);
      expect(wire.at(-1)!.data.type).toBe("response.incomplete");
      expect(wire.at(-1)!.data.response.incomplete_details).toEqual({ reason: detail });
      const { final } = await sdkStream(sse);
      expect(final.status).toBe("incomplete");
      expect(final.output_text).toBe("cut");
    }
  });

  test("error after commit: SDK raises; the stream ends with exactly one response.failed carrying the same id and only completed items", async () => {
    const sse = encode([
      start,
      { type: "block_start", index: 0, block: { type: "text" } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "First." } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "text" } },
      { type: "block_delta", index: 1, delta: { type: "text", text: "Part" } },
      { type: "error", error: { kind: "overloaded", status: 529, message: "Overloaded" } },
    ]);
    const wire = parseSse(sse);
    checkGrammar(wire);
    expect(wire.slice(-2).map((w) => w.event)).toEqual(["error", "response.failed"]);
    const failed = wire.at(-1)!.data.response;
    expect(failed.status).toBe("failed");
    expect(failed.error).toEqual({ code: "server_error", message: "Overloaded" });
    expect(failed.output.map((o: any) => o.content[0].text)).toEqual(["First."]);
    expect(wire.some((w) => w.event === "response.completed")).toBe(false);
    const { error } = await sdkStream(sse);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("Overloaded");
  });

  test("truncated stream (end() without finish) never reads as completed: response.failed", () => {
    const wire = parseSse(
      encode(
        normalizeEvents([start, { type: "block_delta", index: 0, delta: { type: "text", text: "partial" } }]), // normalizer adds its truncation error
      ),
    );
    expect(wire.some((w) => w.event === "response.completed" || w.event === "response.incomplete")).toBe(false);
    expect(wire.at(-1)!.data).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error" } } });

    // and when the encoder itself sees the end without a finish
    const wire2 = parseSse(encode([start, { type: "block_start", index: 0, block: { type: "text" } }, { type: "block_delta", index: 0, delta: { type: "text", text: "p" } }]));
    expect(wire2.at(-1)!.data.type).toBe("response.failed");
    checkGrammar(wire2);
  });

  test("an error before anything was sent: response.created first, then error and response.failed", async () => {
    const sse = encode([{ type: "error", error: { kind: "rate_limit", status: 429, message: "Slow down" } }]);
    const wire = parseSse(sse);
    checkGrammar(wire);
    expect(wire.map((w) => w.event)).toEqual(["response.created", "error", "response.failed"]);
    expect(wire[2]!.data.response.error.code).toBe("rate_limit_exceeded");
  });

  test("request echo: tools (namespaces re-nested), tool_choice, reasoning, store; namespaced call gets its namespace back", async () => {
    const req: HubRequest = parseRequest({
      model: "gpt-5-codex",
      input: "hi",
      store: false,
      reasoning: { effort: "high", summary: "auto" },
      tool_choice: "auto",
      tools: [
        { type: "function", name: "exec_command", parameters: { type: "object", properties: {} }, strict: false },
        { type: "namespace", name: "multi_agent_v1", description: "agents", tools: [{ type: "function", name: "close_agent", parameters: { type: "object", properties: {} }, strict: false }] },
        { type: "custom", name: "apply_patch", description: "patch", format: { type: "grammar", syntax: "lark", definition: "start: x" } },
      ],
    });
    const sse = encode(
      [
        start,
        // upstream (e.g. a Chat/Anthropic provider) only knew the flat name
        { type: "block_start", index: 0, block: { type: "tool_call", id: "call_a", name: "close_agent" } },
        { type: "block_delta", index: 0, delta: { type: "tool_args", json: '{"target":"x"}' } },
        { type: "block_stop", index: 0 },
        { type: "block_start", index: 1, block: { type: "tool_call", id: "call_p", name: "apply_patch" } },
        { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"input":"*** Begin Patch\\n*** End Patch"}' } },
        { type: "block_stop", index: 1 },
        { type: "finish", reason: "tool_use" },
      ],
      { request: req },
    );
    const wire = parseSse(sse);
    checkGrammar(wire);
    const created = wire[0]!.data.response;
    expect(created.tools.map((t: any) => t.type)).toEqual(["function", "namespace", "custom"]);
    expect(created.tools[1].tools.map((t: any) => t.name)).toEqual(["close_agent"]);
    expect(created.store).toBe(false);
    expect(created.reasoning).toEqual({ effort: "high", summary: "auto" });
    expect(created.output).toEqual([]);
    expect(created.usage).toBeNull();
    const items = wire.filter((w) => w.event === "response.output_item.done").map((w) => w.data.item);
    expect(items[0]).toMatchObject({ type: "function_call", name: "close_agent", namespace: "multi_agent_v1", call_id: "call_a" });
    expect(items[1]).toMatchObject({ type: "custom_tool_call", name: "apply_patch", call_id: "call_p", input: "*** Begin Patch\n*** End Patch" });
    const { final, error } = await sdkStream(sse);
    expect(error).toBeUndefined();
    expect(final.output.map((o: any) => o.type)).toEqual(["function_call", "custom_tool_call"]);
  });

  test("redacted thinking is skipped without breaking output indices", () => {
    const wire = parseSse(
      encode([
        start,
        { type: "block_start", index: 0, block: { type: "redacted_thinking", data: { family: "anthropic", value: "opaque" } } },
        { type: "block_stop", index: 0 },
        { type: "block_start", index: 1, block: { type: "text" } },
        { type: "block_delta", index: 1, delta: { type: "text", text: "ok" } },
        { type: "block_stop", index: 1 },
        { type: "finish", reason: "end_turn" },
      ]),
    );
    checkGrammar(wire);
    expect(wire.filter((w) => w.event === "response.output_item.added").map((w) => w.data.item.type)).toEqual(["message"]);
  });
});

describe("encodeResponse (non-streaming body)", () => {
  test("a whole reply becomes a Response object with integer usage and prefixed ids", () => {
    const body = openaiResponses.encodeResponse!(
      {
        id: "msg_up",
        content: [
          { type: "thinking", text: "hmm", signature: { family: "openai", value: "enc" }, itemId: "rs_1" },
          { type: "text", text: "Hello", phase: "final_answer" },
          { type: "tool_call", id: "call_1", name: "f", arguments: "" },
        ],
        stopReason: "tool_use",
        usage: { inputTokens: 10, cacheReadTokens: 5, outputTokens: 7, reasoningTokens: 2 },
      },
      { model: "client-model", newId: counterIds(), now: () => 1_750_000_000_000 },
    ) as any;
    expect(body.id).toBe("resp_1");
    expect(body.object).toBe("response");
    expect(body.created_at).toBe(1_750_000_000);
    expect(body.status).toBe("completed");
    expect(body.output).toEqual([
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "hmm" }], encrypted_content: "enc" },
      { type: "message", id: "msg_2", status: "completed", role: "assistant", phase: "final_answer", content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }] },
      { type: "function_call", id: "fc_3", status: "completed", call_id: "call_1", name: "f", arguments: "{}" },
    ]);
    expect(body.usage).toEqual({ input_tokens: 15, input_tokens_details: { cached_tokens: 5 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 22 });
  });

  test("max_tokens → incomplete; a reply with no stop reason is never 'completed'", () => {
    const inc = openaiResponses.encodeResponse!({ content: [{ type: "text", text: "x" }], stopReason: "max_tokens", usage: {} }, { model: "m" }) as any;
    expect(inc.status).toBe("incomplete");
    expect(inc.incomplete_details).toEqual({ reason: "max_output_tokens" });
    const cut = openaiResponses.encodeResponse!({ content: [], stopReason: null, usage: {} }, { model: "m" }) as any;
    expect(cut.status).not.toBe("completed");
  });

  test("every hub stop reason: incomplete_details.reason is one of the API's (max_output_tokens, content_filter), pause_turn for a paused turn, or the details are null", () => {
    const reasons: Array<StopReason | null> = ["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn", "context_window_exceeded", "other", null];
    const seen: Record<string, unknown> = {};
    for (const stopReason of reasons) {
      const whole = openaiResponses.encodeResponse!({ content: [{ type: "text", text: "x" }], stopReason, usage: {} }, { model: "m" }) as any;
      seen[String(stopReason)] = [whole.status, whole.incomplete_details];
      if (stopReason === null) continue;
      const last = parseSse(encode(normalizeEvents([{ type: "message_start" }, { type: "block_delta", index: 0, delta: { type: "text", text: "x" } }, { type: "finish", reason: stopReason }], { end: false }))).at(-1)!.data;
      expect([stopReason, last.response.status, last.response.incomplete_details]).toEqual([stopReason, whole.status, whole.incomplete_details]);
    }
    expect(seen).toEqual({
      end_turn: ["completed", null],
      tool_use: ["completed", null],
      max_tokens: ["incomplete", { reason: "max_output_tokens" }],
      stop_sequence: ["completed", null],
      refusal: ["incomplete", { reason: "content_filter" }],
      pause_turn: ["incomplete", { reason: "pause_turn" }],
      context_window_exceeded: ["incomplete", { reason: "max_output_tokens" }],
      other: ["completed", null],
      null: ["incomplete", null],
    });
  });

  test("decodeResponse of the recorded JSON bodies; responseToEvents → encoder gives the same output as encodeResponse", async () => {
    const fc = openaiResponses.decodeResponse(JSON.parse(new TextDecoder().decode(await recordedBytes("openai-responses/function-call.json"))), { family: "openai" });
    expect(fc.stopReason).toBe("tool_use");
    expect(fc.content).toEqual([
      {
        type: "tool_call",
        id: "call_YunNGbIwdVJ2i0y0Mybva4Pw",
        name: "weather",
        arguments: '{"location":"San Francisco"}',
        itemId: "fc_0a2fa1b539ba14ba00698c519ebab0819494302fc0b5c31440",
      },
    ]);
    expect(fc.usage).toEqual({ inputTokens: 45, cacheReadTokens: 0, outputTokens: 24, reasoningTokens: 0 });
    const text = openaiResponses.decodeResponse(JSON.parse(new TextDecoder().decode(await recordedBytes("openai-responses/text.json"))), { family: "openai" });
    expect(text.content).toEqual([{ type: "text", text: "Dummy PDF file" }]);
    expect(text.stopReason).toBe("end_turn");
    const opts = { model: "m", newId: counterIds(), now: () => 0 };
    const streamed = parseSse(encode(normalizeEvents(responseToEvents(fc)), opts)).at(-1)!.data.response;
    const whole = openaiResponses.encodeResponse!(fc, { model: "m", newId: counterIds(), now: () => 0 }) as any;
    expect(streamed.output.map((o: any) => ({ ...o, id: undefined }))).toEqual(whole.output.map((o: any) => ({ ...o, id: undefined })));
    expect(streamed.usage).toEqual(whole.usage);
  });
});

const codex = parseRequest(await clientRequest("codex-default.json"));

describe("the response object's JSON text (built from parts, not stringified whole)", () => {
  const ENDS: Record<string, HubEvent[]> = {
    "text, completed": [{ type: "message_start" }, { type: "block_start", index: 0, block: { type: "text" } }, { type: "block_delta", index: 0, delta: { type: "text", text: 'say "hi"\n' } }, { type: "block_stop", index: 0 }, { type: "finish", reason: "end_turn" }, { type: "usage", usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 1 } }],
    "reasoning and a tool call, incomplete": [
      { type: "message_start" },
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "hmm" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "call_1", name: "shell" } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"command":["ls"]}' } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "max_tokens" },
    ],
    "failed after an item": [{ type: "message_start" }, { type: "block_start", index: 0, block: { type: "text" } }, { type: "block_delta", index: 0, delta: { type: "text", text: "part" } }, { type: "block_stop", index: 0 }, { type: "error", error: { kind: "api_error", status: 502, message: "The upstream broke." } }],
    "a commentary phase, completed": [{ type: "message_start" }, { type: "block_start", index: 0, block: { type: "text", phase: "commentary" } }, { type: "block_delta", index: 0, delta: { type: "text", text: "café ☕ \u0001" } }, { type: "block_stop", index: 0 }, { type: "finish", reason: "end_turn" }],
    "failed before anything": [{ type: "error", error: { kind: "overloaded", status: 529, message: "busy" } }],
  };
  for (const [name, events] of Object.entries(ENDS)) {
    for (const request of [undefined, codex]) {
      test(`${name}${request ? ", with a Codex request's echo (instructions, tools)" : ""}: keys in the documented order, compact JSON`, () => {
        const wire = parseSse(encode(events, { request }));
        const echoKeys = Object.keys(responseEcho(request));
        const responses = wire.filter((w) => w.data.response !== undefined);
        expect(responses.length).toBeGreaterThanOrEqual(2);
        for (const w of responses) {
          expect(Object.keys(w.data.response)).toEqual(["id", "object", "created_at", "status", "error", "incomplete_details", "model", "output", ...echoKeys, "usage"]);
          expect(w.data.response.model).toBe("client-model");
        }
        const raw = encode(events, { request })
          .split("\n\n")
          .filter((f) => f.length > 0)
          .map((f) => f.slice(f.indexOf("data: ") + 6));
        for (const data of raw) expect(data).toBe(JSON.stringify(JSON.parse(data)));
        // Every output_item.done's item is the one the terminal lists, same text.
        const done = wire.filter((w) => w.data.type === "response.output_item.done").map((w) => JSON.stringify(w.data.item));
        expect(wire.at(-1)!.data.response.output.map((i: unknown) => JSON.stringify(i))).toEqual(done);
        // The message item's events, written from templates: the keys in the order the SDK types list them.
        const PART = ["type", "annotations", "logprobs", "text"];
        const ITEM = ["id", "type", "status", "content", "role", ...(name.includes("phase") ? ["phase"] : [])];
        for (const w of wire) {
          const d = w.data;
          if (d.type === "response.output_item.added" || d.type === "response.output_item.done") {
            expect(Object.keys(d)).toEqual(["type", "sequence_number", "output_index", "item"]);
            if (d.item.type === "message") {
              expect(Object.keys(d.item)).toEqual(ITEM);
              for (const p of d.item.content) expect(Object.keys(p)).toEqual(PART);
            }
          } else if (d.type === "response.content_part.added" || d.type === "response.content_part.done") {
            expect(Object.keys(d)).toEqual(["type", "sequence_number", "item_id", "output_index", "content_index", "part"]);
            expect(Object.keys(d.part)).toEqual(PART);
          } else if (d.type === "response.output_text.done") {
            expect(Object.keys(d)).toEqual(["type", "sequence_number", "item_id", "output_index", "content_index", "text", "logprobs"]);
          }
        }
        const echo = JSON.parse(JSON.stringify(responseEcho(request)));
        for (const w of responses) for (const k of echoKeys) expect(w.data.response[k]).toEqual(echo[k]);
      });
    }
  }
});
