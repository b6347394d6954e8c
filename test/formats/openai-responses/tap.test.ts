import { describe, expect, test } from "bun:test";
import { manifest, recordedBytes } from "../../support/fixtures.ts";
import { parseSse, sdkStream } from "../../support/openai-responses-helpers.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";
import type { PassthroughTap } from "../../../formats/codec.ts";
import { concatBytes, SseReader } from "../../../formats/sse.ts";
import { TRUNCATED_ERROR } from "../../../formats/normalize.ts";
import { expectCrlfOneBytePerRead } from "../../support/tap-framing.ts";
import { expectSplitReadsDecodeAlike } from "../../support/split-reads.ts";

const entries = (await manifest()).filter((e) => e.format === "openai-responses" && e.kind === "sse");
const utf8 = new TextEncoder();
const text = (b: Uint8Array) => new TextDecoder().decode(b);

const concat = (parts: Uint8Array[]) => concatBytes(parts);

/** Feeds pieces through a fresh tap; returns the forwarded bytes, what end() appended, and the tap. */
function run(pieces: Uint8Array[], failure?: Parameters<PassthroughTap["end"]>[0]) {
  const tap = openaiResponses.createTap({ family: "openai" });
  const forwarded = concat(pieces.map((p) => tap.push(p)));
  const appended = tap.end(failure);
  return { tap, forwarded, appended };
}

describe("tap over every recorded Responses stream", () => {
  for (const entry of entries) {
    test(entry.file, async () => {
      const bytes = await recordedBytes(entry.file);
      const { tap, forwarded, appended } = run([bytes]);
      if (text(bytes).startsWith("event: response.created")) expect(forwarded).toEqual(bytes); // bytes unchanged
      else {
        // After a made response.created (below), the recorded events re-serialised, their sequence numbers one higher.
        const want = parseSse(text(bytes));
        expect(parseSse(text(forwarded)).slice(1).map((w) => [w.event, w.data.type, w.data.sequence_number])).toEqual(want.map((w) => [w.event, w.data.type, w.data.sequence_number + 1]));
      }
      expect(appended.length).toBe(0); // complete stream: nothing added
      const rec = entry.recorded!;
      expect(tap.state.terminal).toBe(true);
      if (rec.status === "failed") {
        expect(tap.state.error?.code).toBe(rec.error.code);
        expect(tap.state.error?.message).toBe(rec.error.message);
        expect(tap.state.stopReason).toBeNull();
        expect(tap.state.sawContent).toBe(false);
      } else {
        expect(tap.state.sawContent).toBe(true);
        expect(tap.state.error).toBeUndefined();
        expect(tap.state.stopReason).toBe(rec.status === "incomplete" ? "max_tokens" : rec.function_calls.length > 0 ? "tool_use" : "end_turn");
        expect(tap.state.usage).toMatchObject({
          inputTokens: rec.usage.input_tokens - rec.usage.cached_tokens,
          cacheReadTokens: rec.usage.cached_tokens,
          outputTokens: rec.usage.output_tokens,
          reasoningTokens: rec.usage.reasoning_tokens,
        });
      }
    });
  }

  // The reads: test/support/split-reads.ts (a cut at every offset near each line end, so in and around
  // every terminator the held tail is searched for, in and around each multi-byte character and escape,
  // each with everything before it read; a seeded sample of two-piece splits). Every offset two pieces
  // was quadratic: 14.6 s of its 20 s under load for the event tap's test.
  test("split reads: forwarded bytes are the original, state identical", async () => {
    for (const f of ["openai-responses/text.sse", "openai-responses/error-event.sse"]) {
      const bytes = await recordedBytes(f);
      const whole = run([bytes]);
      expect(text(whole.forwarded)).toBe(text(bytes));
      expect(whole.appended.length).toBe(0);
      expectSplitReadsDecodeAlike(bytes, (reads) => {
        const { tap, forwarded, appended } = run(reads);
        return { forwarded: text(forwarded), appended: text(appended), state: tap.state };
      });
    }
  });

  test("an event is forwarded only once its blank line arrived (no half events reach the client)", async () => {
    const bytes = await recordedBytes("openai-responses/text.sse");
    const tap = openaiResponses.createTap({ family: "openai" });
    const firstEnd = text(bytes).indexOf("\n\n") + 2;
    expect(tap.push(bytes.subarray(0, firstEnd - 1)).length).toBe(0);
    expect(text(tap.push(bytes.subarray(firstEnd - 1, firstEnd + 5)))).toBe(text(bytes.subarray(0, firstEnd)));
  });
});

describe("events that span reads", () => {
  test("CRLF framing, one byte per read: every event is forwarded as soon as its blank line is whole, byte for byte, nothing added", async () => {
    const crlf = utf8.encode(text(await recordedBytes("openai-responses/text.sse")).replace(/\n/g, "\r\n"));
    expectCrlfOneBytePerRead(openaiResponses.createTap({ family: "openai" }), crlf);
  });

  test("a 32 MiB delta in 2,048 reads of 16 KiB: held until it completes, then forwarded whole, once (joined once, not re-copied per read)", () => {
    const created = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}\n\n';
    const big = `event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","sequence_number":1,"item_id":"fc_1","output_index":0,"delta":${JSON.stringify("z".repeat(32 * 1024 * 1024))}}\n\n`;
    const bytes = utf8.encode(created + big);
    const tap = openaiResponses.createTap({ family: "openai" });
    const forwarded: number[] = [];
    for (let i = 0; i < bytes.length; i += 16 * 1024) forwarded.push(tap.push(bytes.subarray(i, Math.min(i + 16 * 1024, bytes.length))).length);
    expect(forwarded[0]).toBe(utf8.encode(created).length);
    expect(forwarded.slice(1, -1).every((n) => n === 0)).toBe(true);
    expect(forwarded.at(-1)).toBe(utf8.encode(big).length);
  }, 60_000); // CPU-bound (32 MiB scanned per read); 20 s was met at 20.9 s under load 14–21
});

describe("tap end(): the missing terminal", () => {
  test("cut mid-stream: the half event is dropped, then an error event and response.failed with the next sequence_numbers and the response id; the SDK throws", async () => {
    const bytes = await recordedBytes("openai-responses/text.sse");
    const s = text(bytes);
    const cutAt = utf8.encode(s.slice(0, s.indexOf('"delta":" file"'))).length; // inside the third delta
    const { tap, forwarded, appended } = run([bytes.subarray(0, cutAt)]);
    const wire = parseSse(text(forwarded) + text(appended));
    expect(wire.at(-3)!.data.sequence_number).toBe(5);
    expect(wire.at(-2)!.data).toEqual({ type: "error", sequence_number: 6, code: "server_error", message: TRUNCATED_ERROR.message, param: null });
    const failed = wire.at(-1)!.data;
    expect(failed).toMatchObject({
      type: "response.failed",
      sequence_number: 7,
      response: { id: "resp_051ebd7ab60063870069d4fe8ac1348194bf06d0a4646af05f", status: "failed", error: { code: "server_error", message: TRUNCATED_ERROR.message }, output: [] },
    });
    expect(tap.state.error?.code).toBe("upstream_truncated");
    expect(wire.some((w) => w.data.type === "response.completed")).toBe(false);
    const { final, error } = await sdkStream(concat([forwarded, appended]));
    expect(final).toBeUndefined();
    expect(String(error)).toContain(TRUNCATED_ERROR.message);
  });

  test("cut after an item completed: response.failed carries the items completed so far (as the translated lanes' does), not the open one", async () => {
    const bytes = await recordedBytes("openai-responses/reasoning-summary-encrypted-function-call.sse");
    const s = text(bytes);
    const cutAt = utf8.encode(s.slice(0, s.indexOf("event: response.function_call_arguments.done"))).length; // the call is open
    const { forwarded, appended } = run([bytes.subarray(0, cutAt)]);
    const done = parseSse(text(forwarded)).filter((w) => w.event === "response.output_item.done");
    expect(done.map((w) => w.data.item.type)).toEqual(["reasoning"]);
    const closing = parseSse(text(appended));
    expect(closing.map((w) => w.event)).toEqual(["error", "response.failed"]);
    expect(closing[1]!.data.response.output).toEqual([done[0]!.data.item]);
  });

  test("an upstream error event then a cut: response.failed alone (the SDK raised on the upstream's error already)", async () => {
    const sse =
      'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_x","status":"in_progress","output":[]}}\n\n' +
      'event: error\ndata: {"type":"error","sequence_number":1,"code":"server_error","message":"Boom"}\n\n';
    const { appended } = run([utf8.encode(sse)]);
    expect(parseSse(text(appended)).map((w) => [w.event, w.data.sequence_number])).toEqual([["response.failed", 2]]);
  });

  test("end(failure) reports the gateway's failure (e.g. idle timeout) with the mapped code", async () => {
    const bytes = await recordedBytes("openai-responses/function-call.sse");
    const s = text(bytes);
    const cut = utf8.encode(s.slice(0, s.indexOf("event: response.function_call_arguments.done")));
    const { appended } = run([cut], { kind: "rate_limit", status: 429, message: "Rate limited upstream" });
    const [error, failed] = parseSse(text(appended)).map((w) => w.data);
    expect(error).toMatchObject({ type: "error", code: "rate_limit_exceeded", message: "Rate limited upstream" });
    expect(failed!.response.error).toEqual({ code: "rate_limit_exceeded", message: "Rate limited upstream" });
  });

  test("an upstream error event without response.failed: end() appends response.failed carrying that error", () => {
    const sse =
      'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_x","status":"in_progress","output":[]}}\n\n' +
      'event: error\ndata: {"type":"error","sequence_number":1,"code":"context_length_exceeded","message":"Too long"}\n\n';
    const { tap, appended } = run([utf8.encode(sse)]);
    expect(tap.state.error).toMatchObject({ kind: "context_length_exceeded", message: "Too long" });
    expect(parseSse(text(appended))[0]!.data).toMatchObject({
      type: "response.failed",
      sequence_number: 2,
      response: { id: "resp_x", error: { code: "context_length_exceeded", message: "Too long" } },
    });
  });

  test("nothing received at all: response.created, error, response.failed, which the SDK raises", async () => {
    const { appended } = run([]);
    const wire = parseSse(text(appended));
    expect(wire.map((w) => [w.event, w.data.sequence_number])).toEqual([
      ["response.created", 0],
      ["error", 1],
      ["response.failed", 2],
    ]);
    const { final, error } = await sdkStream(appended);
    expect(final).toBeUndefined();
    expect(String(error)).toContain(TRUNCATED_ERROR.message);
  });

  test("a terminal event without its final blank line is forwarded, terminated, and counts as complete", async () => {
    const bytes = await recordedBytes("openai-responses/text.sse");
    const trimmed = bytes.subarray(0, bytes.length - 2); // drop the last "\n\n"
    const { tap, forwarded, appended } = run([trimmed]);
    expect(tap.state.terminal).toBe(true);
    expect(tap.state.error).toBeUndefined();
    expect(concat([forwarded, appended])).toEqual(bytes);
  });

  test("cut after the lifecycle events: response.failed names the response id and model the last of them gave", () => {
    const life = (type: string, seq: number, model?: string) =>
      `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq},"response":{"id":"resp_${seq}","object":"response","status":"in_progress",${model ? `"model":"${model}",` : ""}"output":[]}}\n\n`;
    const delta = (seq: number) => `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${seq},"delta":"Hi"}\n\n`;
    // Two lifecycle events (OpenAI's), and eleven (more than a tap keeps unread), the last without a model.
    const many = life("response.created", 0, "gpt-a") + Array.from({ length: 9 }, (_, i) => life("response.in_progress", i + 1, i === 4 ? "gpt-c" : undefined)).join("") + life("response.in_progress", 10) + delta(11);
    for (const [sse, id, model, seq] of [
      [life("response.created", 0, "gpt-a") + life("response.in_progress", 1, "gpt-b") + delta(2), "resp_1", "gpt-b", 3],
      [many, "resp_10", "gpt-c", 12],
    ] as const) {
      for (const tap of [openaiResponses.createTap({ family: "openai" }), openaiResponses.createEventTap!({ family: "openai" })]) {
        (tap as PassthroughTap<unknown>).push(utf8.encode(sse));
        const closing = tap.end();
        // The byte tap sends an error event first (module doc), the event tap does not.
        const events = closing instanceof Uint8Array ? parseSse(text(closing)).map((e) => e.data).slice(1) : (closing as Array<{ data: string }>).map((e) => JSON.parse(e.data));
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ type: "response.failed", sequence_number: closing instanceof Uint8Array ? seq + 1 : seq, response: { id, model, status: "failed" } });
      }
    }
  });

  test("a stream's lifecycle events are not parsed as it is read (each echoes the request); its terminal event is", async () => {
    const bytes = await recordedBytes("openai-responses/text.sse");
    const parsed: string[] = [];
    const real = JSON.parse;
    JSON.parse = ((t: string, r?: Parameters<typeof real>[1]) => {
      if (typeof t === "string" && t.startsWith('{"type":"response.')) parsed.push(/^\{"type":"([^"]+)"/.exec(t)![1]!);
      return real(t, r);
    }) as typeof JSON.parse;
    let state;
    try {
      const { tap, appended } = run([bytes]);
      expect(appended.length).toBe(0);
      state = tap.state;
    } finally {
      JSON.parse = real;
    }
    expect(parsed).toEqual(["response.completed"]);
    expect(state.terminal).toBe(true);
    expect(state.usage.outputTokens).toBeGreaterThan(0);
  });

  test("end() twice appends nothing the second time", () => {
    const tap = openaiResponses.createTap({ family: "openai" });
    expect(tap.end().length).toBeGreaterThan(0);
    expect(tap.end().length).toBe(0);
  });
});

/**
 * The event tap (Codex's Responses WebSocket, SPEC 2.5) forwards the events the byte tap's output
 * holds, read once: the same events in the same order, the same closing events, the same observations.
 */
describe("a stream without response.created (sdk16 S5): one is made before its first event", () => {
  const ev = (name: string, data: unknown) => utf8.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  const item = ev("response.output_item.added", { type: "response.output_item.added", sequence_number: 0, output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } });

  test("incomplete-max-output-tokens.sse: a response.created without an id, then the recorded events with rising sequence numbers, the terminal with the output; the SDK's ResponseStream reads it", async () => {
    const bytes = await recordedBytes("openai-responses/incomplete-max-output-tokens.sse");
    const recorded = parseSse(text(bytes));
    const { forwarded, appended } = run([bytes]);
    const wire = parseSse(text(forwarded));
    expect(wire[0]).toEqual({
      event: "response.created",
      data: { type: "response.created", sequence_number: 0, response: { object: "response", status: "in_progress", model: null, output: [], usage: null, error: null, incomplete_details: null } },
    });
    // Sequence numbers 0, 1, 2 (the recording's 0 and 1 after the made 0: until 2026-12-07 they were 0, 0, 1).
    expect(wire.map((w) => w.data.sequence_number)).toEqual([0, 1, 2]);
    expect(wire[1]!.data).toEqual({ ...recorded[0]!.data, sequence_number: 1 });
    // The terminal's response had no output (openai 6.x took it as the final response and threw
    // "rsp.output is not iterable"): the item the stream opened, as openai 7.x builds it.
    const item = recorded[0]!.data.item;
    expect(wire[2]!.data).toEqual({ ...recorded[1]!.data, sequence_number: 2, response: { ...recorded[1]!.data.response, output: [item] } });
    expect(appended.length).toBe(0);
    const { final } = await sdkStream(forwarded);
    expect(final.status).toBe("incomplete");
    expect(final.output).toEqual([item]);
  });

  test("a third-party stream's message cut by the token limit: the terminal's output holds the text so far; a completed one the completed items only", () => {
    const msg = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] };
    const events = (terminal: string, status: string) => [
      ev("response.output_item.added", { type: "response.output_item.added", sequence_number: 0, output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } }),
      ev("response.output_item.done", { type: "response.output_item.done", sequence_number: 1, output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "think" }] } }),
      ev("response.output_item.added", { type: "response.output_item.added", sequence_number: 2, output_index: 1, item: msg }),
      ev("response.content_part.added", { type: "response.content_part.added", sequence_number: 3, item_id: "msg_1", output_index: 1, content_index: 0, part: { type: "output_text", annotations: [], text: "" } }),
      ev("response.output_text.delta", { type: "response.output_text.delta", sequence_number: 4, item_id: "msg_1", output_index: 1, content_index: 0, delta: "Hel" }),
      ev("response.output_text.delta", { type: "response.output_text.delta", sequence_number: 5, item_id: "msg_1", output_index: 1, content_index: 0, delta: "lo" }),
      ev(terminal, { type: terminal, sequence_number: 6, response: { status, incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null } }),
    ];
    const reasoning = { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "think" }] };
    const cut = parseSse(text(run(events("response.incomplete", "incomplete")).forwarded));
    expect(cut.map((w) => w.data.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(cut.at(-1)!.data.response.output).toEqual([reasoning, { ...msg, content: [{ type: "output_text", annotations: [], text: "Hello" }] }]);
    const completed = parseSse(text(run(events("response.completed", "completed")).forwarded));
    expect(completed.at(-1)!.data.response.output).toEqual([reasoning]);
  });

  test("a terminal event that carries its output keeps it; a stream that began with response.created is not rewritten", async () => {
    const own = [{ id: "msg_9", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", annotations: [], text: "mine" }] }];
    const terminal = ev("response.completed", { type: "response.completed", sequence_number: 1, response: { status: "completed", output: own } });
    expect(parseSse(text(run([item, terminal]).forwarded)).at(-1)!.data.response.output).toEqual(own);
    const bytes = await recordedBytes("openai-responses/text.sse");
    expect(run([bytes]).forwarded).toEqual(bytes);
  });

  test("first event response.in_progress: the made response.created carries its id and model", () => {
    const inProgress = ev("response.in_progress", { type: "response.in_progress", sequence_number: 3, response: { id: "resp_9", object: "response", status: "in_progress", model: "m-1", output: [] } });
    const { forwarded } = run([inProgress, item]);
    const wire = parseSse(text(forwarded));
    expect(wire.map((w) => w.event)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    expect(wire[0]!.data.response).toMatchObject({ id: "resp_9", model: "m-1", status: "in_progress" });
    expect(wire[0]!.data.sequence_number).toBe(3);
  });

  test("the first event split over reads: the made event goes out with the read that completes it, once", () => {
    const { forwarded } = run([item.subarray(0, 10), item.subarray(10)]);
    expect(parseSse(text(forwarded)).map((w) => w.event)).toEqual(["response.created", "response.output_item.added"]);
  });

  test("an error or keepalive event first: nothing made", () => {
    const error = ev("error", { type: "error", code: "server_error", message: "boom", sequence_number: 0 });
    expect(text(run([error]).forwarded)).toBe(text(error));
    const keepalive = ev("keepalive", { type: "keepalive", sequence_number: 0 });
    expect(parseSse(text(run([keepalive, item]).forwarded)).map((w) => w.event)).toEqual(["keepalive", "response.output_item.added"]);
  });

  test("the event tap makes the same event, before the first", () => {
    const tap = openaiResponses.createEventTap!({ family: "openai" });
    const events = tap.push(item);
    expect(events.map((e) => e.event)).toEqual(["response.created", "response.output_item.added"]);
    expect(events[0]!.data).toBe(parseSse(text(run([item]).forwarded)).map((w) => JSON.stringify(w.data))[0]);
  });
});

describe("event tap: the byte tap's events, without reading its bytes again", () => {
  /** The events of SSE bytes as a client reads them (events with data; `[DONE]` is no event of Responses). */
  const eventsOf = (bytes: Uint8Array) => {
    const out: Array<{ event: string | undefined; data: string }> = [];
    const r = new SseReader((e) => {
      if (e.data.length > 0 && e.data !== "[DONE]") out.push({ event: e.event, data: e.data });
    });
    r.push(bytes);
    r.end();
    return out;
  };
  /** Both taps over the same pieces: the byte tap's output read as events, the event tap's events, both states. */
  function both(pieces: Uint8Array[], failure?: Parameters<PassthroughTap["end"]>[0]) {
    const bytesRun = run(pieces, failure);
    const tap = openaiResponses.createEventTap!({ family: "openai" });
    const events = pieces.flatMap((p) => tap.push(p));
    const appended = tap.end(failure);
    return { fromBytes: eventsOf(concat([bytesRun.forwarded, bytesRun.appended])), events: [...events, ...appended], appended, state: tap.state, bytesState: bytesRun.tap.state };
  }
  /** The same events, but the byte tap's closing `error` event (the event tap sends none, module doc), whose sequence number the event tap's `response.failed` takes. */
  const same = (r: ReturnType<typeof both>) => {
    const at = r.fromBytes.findIndex((e, i) => e.event === "error" && r.fromBytes[i + 1]?.event === "response.failed" && i + 2 === r.fromBytes.length && !r.events.some((x) => x.event === "error"));
    if (at < 0) expect(r.events).toEqual(r.fromBytes);
    else {
      expect(r.events.slice(0, at)).toEqual(r.fromBytes.slice(0, at));
      expect(r.events.slice(at).map((e) => e.event)).toEqual(["response.failed"]);
      const seqOf = (e: { data: string }) => JSON.parse(e.data).sequence_number;
      expect(seqOf(r.events[at]!)).toBe(seqOf(r.fromBytes[at]!));
      const { sequence_number: _a, ...fromEvents } = JSON.parse(r.events[at]!.data);
      const { sequence_number: _b, ...fromBytes } = JSON.parse(r.fromBytes[at + 1]!.data);
      expect(fromEvents).toEqual(fromBytes);
    }
    expect(r.state).toEqual(r.bytesState);
  };

  for (const entry of entries) {
    test(entry.file, async () => {
      const r = both([await recordedBytes(entry.file)]);
      expect(r.appended).toEqual([]);
      expect(r.events.length).toBeGreaterThan(0);
      same(r);
    });
  }

  // The reads: as the byte tap's split test above (test/support/split-reads.ts).
  test("split reads: the same events and state as in one read", async () => {
    for (const f of ["openai-responses/text.sse", "openai-responses/error-event.sse"]) {
      const bytes = await recordedBytes(f);
      same(both([bytes]));
      expectSplitReadsDecodeAlike(bytes, (reads) => {
        const r = both(reads);
        return { events: r.events, state: r.state };
      });
    }
  });

  test("cut mid-stream, a gateway failure, an error event, nothing at all: the same closing events as the byte tap's", async () => {
    const bytes = await recordedBytes("openai-responses/text.sse");
    const s = text(bytes);
    const cut = bytes.subarray(0, utf8.encode(s.slice(0, s.indexOf('"delta":" file"'))).length);
    const cutRun = both([cut]);
    same(cutRun);
    expect(cutRun.appended.map((e) => e.event)).toEqual(["response.failed"]);
    expect(JSON.parse(cutRun.appended[0]!.data)).toMatchObject({ sequence_number: 6, response: { status: "failed", error: { code: "server_error" } } });
    same(both([cut], { kind: "rate_limit", status: 429, message: "Rate limited upstream" }));
    same(both([utf8.encode('event: error\ndata: {"type":"error","sequence_number":0,"code":"context_length_exceeded","message":"Too long"}\n\n')]));
    const nothing = both([]);
    same(nothing);
    expect(nothing.appended.map((e) => e.event)).toEqual(["response.created", "response.failed"]);
  });

  test("a terminal event without its blank line is forwarded and completes; a tail after a terminal event is dropped; end() twice adds nothing", async () => {
    const bytes = await recordedBytes("openai-responses/text.sse");
    const trimmed = both([bytes.subarray(0, bytes.length - 2)]);
    same(trimmed);
    expect(trimmed.events.at(-1)!.event).toBe("response.completed");
    expect(trimmed.state.terminal).toBe(true);
    const late = both([bytes, utf8.encode('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"late"}')]);
    same(late);
    expect(late.events.some((e) => e.data.includes('"late"'))).toBe(false);
    const tap = openaiResponses.createEventTap!({ family: "openai" });
    expect(tap.end().length).toBe(2);
    expect(tap.end()).toEqual([]);
  });
});

describe("content", () => {
  test("an output item's start is the start of a block (as Anthropic's content_block_start): a reasoning item without a summary has begun the reply", () => {
    const tap = openaiResponses.createTap({ family: "openai" });
    tap.push(utf8.encode('event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}\n\n'));
    tap.push(utf8.encode(": keep-alive\n\n"));
    expect(tap.state.sawContent).toBe(false);
    tap.push(utf8.encode('event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}\n\n'));
    expect(tap.state.sawContent).toBe(true);
  });
});
