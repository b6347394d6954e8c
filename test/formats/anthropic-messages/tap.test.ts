import { describe, expect, test } from "bun:test";
import { APIError } from "@anthropic-ai/sdk";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { lastEventBoundary } from "../../../formats/sse.ts";
import type { PassthroughTap } from "../../../formats/codec.ts";
import { manifest, recordedBytes, regressionCase } from "../../support/fixtures.ts";
import { eventTypes, sdkFinalMessage } from "../../support/anthropic-sdk.ts";
import { concatBytes } from "../../../formats/sse.ts";
import { expectCrlfOneBytePerRead } from "../../support/tap-framing.ts";
import { expectSplitReadsDecodeAlike, readsAt } from "../../support/split-reads.ts";

const utf8 = new TextEncoder();
const text = (b: Uint8Array) => new TextDecoder().decode(b);

const concat = (parts: Uint8Array[]) => concatBytes(parts);

/** Feeds pieces through a fresh tap; returns the forwarded bytes (pushes + end) and the tap. */
function run(pieces: Uint8Array[], failure?: Parameters<PassthroughTap["end"]>[0]): { out: Uint8Array; tap: PassthroughTap } {
  const tap = anthropicMessages.createTap({ family: "anthropic" });
  const outs = pieces.map((p) => tap.push(p));
  outs.push(tap.end(failure));
  return { out: concat(outs), tap };
}

const entries = (await manifest()).filter((e) => e.format === "anthropic-messages" && e.kind === "sse");
/** The recording whose second `message_start` the tap drops (the only one not forwarded byte for byte). */
const DUPLICATE_START = "anthropic-messages/duplicate-message-start.sse";

/** What the tap forwards of a recording: all of it, but the repeated `message_start` event (its first line to the next event's). */
async function forwardedOf(file: string): Promise<Uint8Array> {
  const bytes = await recordedBytes(file);
  if (file !== DUPLICATE_START) return bytes;
  const s = text(bytes);
  const second = s.indexOf("event: message_start", 1);
  return utf8.encode(s.slice(0, second) + s.slice(s.indexOf("event: content_block_start")));
}
/** Recordings up to this many bytes are also split in two at every offset. */
const SHORT = 1_200;

describe("passthrough tap over every recorded stream", () => {
  for (const entry of entries) {
    test(`${entry.file}: bytes unchanged (a repeated message_start dropped), usage/stop/terminal observed`, async () => {
      const bytes = await recordedBytes(entry.file);
      const { out, tap } = run([bytes]);
      expect(text(out)).toBe(text(await forwardedOf(entry.file)));
      const rec = entry.recorded!;
      const u = tap.state.usage;
      const seen: Record<string, number> = {};
      if (u.inputTokens !== undefined) seen.input_tokens = u.inputTokens;
      if (u.cacheWriteTokens !== undefined) seen.cache_creation_input_tokens = u.cacheWriteTokens;
      if (u.cacheReadTokens !== undefined) seen.cache_read_input_tokens = u.cacheReadTokens;
      if (u.outputTokens !== undefined) seen.output_tokens = u.outputTokens;
      expect(seen).toEqual(rec.usage);
      expect(tap.state.terminal).toBe(true);
      expect(tap.state.sawContent).toBe(true);
      expect(tap.state.error).toBeUndefined();
      expect(tap.state.stopReason as string).toBe(rec.stop_reason === "model_context_window_exceeded" ? "context_window_exceeded" : rec.stop_reason);
    });

    // The reads: one byte per read (every offset a read boundary); two pieces at every offset of a
    // short recording; for a longer one test/support/split-reads.ts's cuts (every offset near each line
    // end, multi-byte character and escape, each with everything before it read, and a seeded sample
    // of two-piece splits): every offset in two pieces was quadratic, up to 4 s a test under load.
    test(`${entry.file}: split reads (every offset in two pieces when short), forwarded bytes and state identical`, async () => {
      const bytes = await recordedBytes(entry.file);
      const decode = (reads: Uint8Array[]) => {
        const { out, tap } = run(reads);
        return { out: Buffer.from(out).toString("latin1"), state: tap.state };
      };
      const whole = decode([bytes]);
      expect(whole.out).toBe(Buffer.from(await forwardedOf(entry.file)).toString("latin1"));
      expect(whole.state.terminal).toBe(true);
      expect(decode(readsAt(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)))).toEqual(whole);
      if (bytes.length > SHORT) expectSplitReadsDecodeAlike(bytes, decode);
      else
        for (let i = 1; i < bytes.length; i++) {
          const got = decode([bytes.subarray(0, i), bytes.subarray(i)]);
          if (!Bun.deepEquals(got, whole)) expect({ offset: i, ...got }).toEqual({ offset: i, ...whole });
        }
    });
  }
});

describe("tap end(): closing what was cut, never inventing a finish", () => {
  test("case B12: stop reason arrived, message_stop did not → only message_stop is appended", async () => {
    const c = await regressionCase("B12");
    const { out, tap } = run([utf8.encode(c.upstream.response.sse)], { kind: "api_error", status: 502, message: "reset" });
    expect(text(out)).toBe(c.upstream.response.sse + 'event: message_stop\ndata: {"type":"message_stop"}\n\n');
    expect(eventTypes(text(out))).toEqual(c.expect.event_types);
    expect(tap.state.stopReason).toBe("end_turn");
    expect(tap.state.usage).toEqual({ inputTokens: 8, outputTokens: 3 });
    expect((await sdkFinalMessage(out)).stop_reason).toBe("end_turn");
  });

  test("cut before message_delta → one event: error appended; the SDK throws", async () => {
    const full = text(await recordedBytes("anthropic-messages/text.sse"));
    const cut = full.slice(0, full.indexOf("event: content_block_stop"));
    const { out, tap } = run([utf8.encode(cut)], { kind: "overloaded", status: 529, message: "Overloaded" });
    expect(text(out)).toBe(cut + 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
    expect(tap.state.stopReason).toBeNull();
    const err = await sdkFinalMessage(out).then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(APIError);
  });

  test("cut in the middle of an event: the torn event is never forwarded, the error frame follows whole events", async () => {
    const full = text(await recordedBytes("anthropic-messages/text.sse"));
    const tornAt = full.indexOf('"text":" Is"') + 5;
    const { out } = run([utf8.encode(full.slice(0, tornAt))]);
    const s = text(out);
    expect(s.endsWith('"type":"api_error","message":"The upstream stream ended before the reply was complete."}}\n\n')).toBe(true);
    expect(s.includes('" Is')).toBe(false);
    expect(eventTypes(s).at(-1)).toBe("error");
    const err = await sdkFinalMessage(out).then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).type).toBe("api_error");
  });

  test("a final message_stop without its blank line is completed, nothing else added", () => {
    const c = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\nevent: message_stop\ndata: {"type":"message_stop"}';
    const { out, tap } = run([utf8.encode(c)]);
    expect(text(out)).toBe(c + "\n\n");
    expect(tap.state.terminal).toBe(true);
  });

  test("message_stop before any stop reason (no message_delta): it is withheld, the truncation error takes its place; the SDK throws", async () => {
    const full = text(await recordedBytes("anthropic-messages/text.sse"));
    const delta = full.indexOf("event: message_delta");
    const stop = full.indexOf("event: message_stop");
    const upToDelta = full.slice(0, delta);
    const withoutDelta = upToDelta + full.slice(stop);
    const errorFrame = 'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The upstream stream ended before the reply was complete."}}\n\n';
    // whole, split just before message_stop, and with message_stop's blank line missing at EOF
    for (const pieces of [[withoutDelta], [upToDelta, full.slice(stop)], [withoutDelta.trimEnd()]]) {
      const { out, tap } = run(pieces.map((p) => utf8.encode(p)));
      expect(text(out)).toBe(upToDelta + errorFrame);
      expect(tap.state.terminal).toBe(false);
      expect(tap.state.error).toMatchObject({ code: "upstream_truncated" });
      const err = await sdkFinalMessage(out).then(
        () => null,
        (e) => e,
      );
      expect(err).toBeInstanceOf(APIError);
    }
  });

  test("the upstream's own in-band error is forwarded and recorded; end() adds nothing", () => {
    const body =
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":4,"output_tokens":1}}}\n\n' +
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const { out, tap } = run([utf8.encode(body)]);
    expect(text(out)).toBe(body);
    expect(tap.state.error).toMatchObject({ kind: "overloaded", status: 529 });
    expect(tap.state.sawContent).toBe(false); // a 200 that opens with an error is not content (SPEC R-8)
  });

  test("nothing after end(); a complete stream gets nothing appended even when a failure is given", async () => {
    const bytes = await recordedBytes("anthropic-messages/refusal.sse");
    const tap = anthropicMessages.createTap({ family: "anthropic" });
    tap.push(bytes);
    expect(tap.end({ kind: "api_error", status: 502, message: "x" }).length).toBe(0);
    expect(tap.push(utf8.encode("event: ping\n\n")).length).toBe(0);
  });
});

describe("a repeated message_start (the SDK's MessageStream throws on it) is not forwarded", () => {
  const START = (id: string, input: number) =>
    `event: message_start\ndata: {"type":"message_start","message":{"id":"${id}","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${input},"output_tokens":1}}}\n\n`;
  const BLOCK =
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n' +
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n';
  const END = 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';

  test("the recording: the client gets message_start once, then the rest byte for byte, and the SDK's stream finishes", async () => {
    const bytes = await recordedBytes(DUPLICATE_START);
    // As sent, the SDK refuses it: what the passthrough forwarded before.
    const before = await sdkFinalMessage(bytes).then(
      () => null,
      (e) => e,
    );
    expect(String(before)).toContain("message_start");
    const { out, tap } = run([bytes]);
    expect(eventTypes(text(out))).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    expect(text(out)).toBe(text(await forwardedOf(DUPLICATE_START)));
    const msg = await sdkFinalMessage(out);
    expect(msg.id).toBe("msg_dup");
    expect(msg.content.map((b) => (b.type === "text" ? b.text : b.type))).toEqual(["Hello, World!"]);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.usage).toMatchObject({ input_tokens: 17, output_tokens: 227 });
    expect(tap.state.usage).toEqual({ inputTokens: 17, outputTokens: 227 });
    expect(tap.state.terminal).toBe(true);
  });

  /** {@link END} with `counts` first in its `message_delta`'s usage (what the tap owes the client after a repeat that changed them). */
  const endWith = (counts: string) => END.replace('"usage":{"output_tokens":5}', `"usage":{${counts},"output_tokens":5}`);

  test("a repeat after content, in its own read, one byte per read, and CRLF-framed: dropped each time; its usage still read, and given to the client in message_delta", async () => {
    const sent = START("msg_a", 3) + BLOCK + START("msg_b", 9) + END;
    // The client kept the first message_start's input_tokens (3); the record has the repeat's (9):
    // message_delta carries 9, which the SDK's MessageStream takes over message_start's.
    const want = START("msg_a", 3) + BLOCK + endWith('"input_tokens":9');
    const i = sent.indexOf("event: message_start", 1);
    const crlf = (t: string) => t.replace(/\n/g, "\r\n");
    for (const [pieces, expected] of [
      [[sent], want],
      [[sent.slice(0, i), sent.slice(i, sent.indexOf("event: message_delta")), sent.slice(sent.indexOf("event: message_delta"))], want],
      [Array.from(sent, (c) => c), want],
      [[crlf(sent)], crlf(want)],
      [Array.from(crlf(sent), (c) => c), crlf(want)],
    ] as Array<[string[], string]>) {
      const { out, tap } = run(pieces.map((p) => utf8.encode(p)));
      expect(text(out)).toBe(expected);
      expect(tap.state.usage).toEqual({ inputTokens: 9, outputTokens: 5 });
      expect(tap.state.terminal).toBe(true);
    }
    const msg = await sdkFinalMessage(utf8.encode(want));
    expect(msg.content.map((b) => (b.type === "text" ? b.text : b.type))).toEqual(["Hi"]);
    expect(msg.usage).toMatchObject({ input_tokens: 9, output_tokens: 5 });
  });

  test("a repeat with other input and cache counts: the SDK's final usage is the record's; counts message_delta has, or the repeat did not change, are left as they came", async () => {
    const start = (usage: string) =>
      `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_a","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{${usage},"output_tokens":1}}}\n\n`;
    const first = start('"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":100');
    const cases: Array<[string, string, string, Record<string, number>]> = [
      // input and cache read changed, cache creation not: the two changed ones owed
      [start('"input_tokens":4,"cache_creation_input_tokens":0,"cache_read_input_tokens":200'), END, endWith('"input_tokens":4,"cache_read_input_tokens":200'), { inputTokens: 4, cacheWriteTokens: 0, cacheReadTokens: 200, outputTokens: 5 }],
      // message_delta has its own input_tokens: it wins on both sides, only cache read added
      [start('"input_tokens":4,"cache_creation_input_tokens":0,"cache_read_input_tokens":200'), endWith('"input_tokens":50'), endWith('"cache_read_input_tokens":200,"input_tokens":50'), { inputTokens: 50, cacheWriteTokens: 0, cacheReadTokens: 200, outputTokens: 5 }],
      // a repeat changing nothing but output_tokens: nothing owed, bytes as they came
      [start('"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":100').replace('"output_tokens":1', '"output_tokens":2'), END, END, { inputTokens: 3, cacheWriteTokens: 0, cacheReadTokens: 100, outputTokens: 5 }],
    ];
    for (const [repeat, end, wantEnd, record] of cases) {
      const sent = first + BLOCK + repeat + end;
      for (const pieces of [[sent], Array.from(sent, (c) => c), [sent.trimEnd()]]) {
        const { out, tap } = run(pieces.map((p) => utf8.encode(p)));
        expect(text(out)).toBe(first + BLOCK + wantEnd);
        expect(tap.state.usage).toEqual(record);
        const msg = await sdkFinalMessage(out);
        expect<unknown>({ inputTokens: msg.usage.input_tokens, cacheWriteTokens: msg.usage.cache_creation_input_tokens, cacheReadTokens: msg.usage.cache_read_input_tokens, outputTokens: msg.usage.output_tokens }).toEqual(record);
      }
    }
  });

  test("a BOM before the first message_start, a repeat without its blank line at the end, and unnamed events: only repeats dropped", () => {
    const bom = "\ufeff";
    const sent = bom + START("msg_a", 3) + START("msg_b", 4) + BLOCK + END;
    const latin1 = (b: Uint8Array) => Buffer.from(b).toString("latin1");
    expect(latin1(run([utf8.encode(sent)]).out)).toBe(latin1(utf8.encode(bom + START("msg_a", 3) + BLOCK + endWith('"input_tokens":4'))));
    // A repeat the upstream closed on without its blank line: withheld too (then the stream is cut: error frame).
    const tail = START("msg_a", 3) + BLOCK + START("msg_b", 4).trimEnd();
    const cut = text(run([utf8.encode(tail)]).out);
    expect(eventTypes(cut)).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_stop", "error"]);
    // Unnamed (never Anthropic's): named by their data's type, as the reader reads them.
    const unnamed = (t: string) => t.replace(/^event: [a-z_]+\n/gm, "");
    const { out } = run([utf8.encode(unnamed(START("msg_a", 3)) + unnamed(START("msg_b", 4)) + BLOCK + END)]);
    expect(text(out)).toBe(unnamed(START("msg_a", 3)) + BLOCK + endWith('"input_tokens":4'));
  });
});

describe("an event that spans many reads", () => {
  test("CRLF framing, one byte per read: every event is forwarded as soon as its blank line is whole, byte for byte, nothing added", async () => {
    const crlf = utf8.encode(text(await recordedBytes("anthropic-messages/text.sse")).replace(/\n/g, "\r\n"));
    expectCrlfOneBytePerRead(anthropicMessages.createTap({ family: "anthropic" }), crlf);
  });

  test("a 32 MiB content_block_delta in 2,048 reads of 16 KiB: nothing is forwarded until it completes, then it is forwarded whole, once (joined once, not re-copied per read)", () => {
    const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}\n\n';
    const big = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify("z".repeat(32 * 1024 * 1024))}}}\n\n`;
    const bytes = utf8.encode(start + big);
    const tap = anthropicMessages.createTap({ family: "anthropic" });
    const forwarded: number[] = [];
    for (let i = 0; i < bytes.length; i += 16 * 1024) forwarded.push(tap.push(bytes.subarray(i, Math.min(i + 16 * 1024, bytes.length))).length);
    // The first read carries message_start (whole) and the delta's first bytes (held).
    expect(forwarded[0]).toBe(utf8.encode(start).length);
    expect(forwarded.slice(1, -1).every((n) => n === 0)).toBe(true);
    expect(forwarded.at(-1)).toBe(utf8.encode(big).length);
  }, 60_000); // CPU-bound (32 MiB scanned per read); 20 s was met at 20.9 s under load 14–21
});

describe("lastEventBoundary", () => {
  const b = (s: string) => lastEventBoundary(utf8.encode(s));
  test("LF, CRLF and CR terminators; a partial event yields the previous boundary", () => {
    expect(b("data: 1\n\n")).toBe(9);
    expect(b("data: 1\n\ndata: 2")).toBe(9);
    expect(b("data: 1\r\n\r\n")).toBe(11);
    expect(b("data: 1\r\n")).toBe(0);
    expect(b("data: 1\r\rx")).toBe(9);
    expect(b("data: 1\r\r")).toBe(0); // the last CR may be the first half of a CRLF
    expect(b("data: 1")).toBe(0);
  });
});

describe("one-hour cache writes (usage.cache_creation, SPEC 9.5: priced apart)", () => {
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const stream = (creation: unknown) =>
    ev("message_start", {
      type: "message_start",
      message: {
        id: "msg_1h",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 5, cache_creation_input_tokens: 3000, cache_read_input_tokens: 0, cache_creation: creation, output_tokens: 1 },
      },
    }) +
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
    ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } }) +
    ev("message_stop", { type: "message_stop" });

  test("the passthrough tap and the decoder report the 1h part of the writes", () => {
    const sse = stream({ ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 });
    const { tap } = run([utf8.encode(sse)]);
    expect(tap.state.usage).toEqual({ inputTokens: 5, cacheWriteTokens: 3000, cacheWrite1hTokens: 1000, cacheReadTokens: 0, outputTokens: 2 });
    const usages: unknown[] = [];
    const dec = anthropicMessages.createDecoder({ family: "anthropic" }, (e) => {
      if ((e.type === "message_start" && e.usage) || e.type === "usage") usages.push(e.usage);
    });
    dec.push(utf8.encode(sse));
    dec.end();
    expect(usages[0]).toMatchObject({ cacheWriteTokens: 3000, cacheWrite1hTokens: 1000 });
  });

  test("all five-minute writes (the 1h count 0, as Anthropic sends it): no 1h part", () => {
    const { tap } = run([utf8.encode(stream({ ephemeral_5m_input_tokens: 3000, ephemeral_1h_input_tokens: 0 }))]);
    expect(tap.state.usage.cacheWrite1hTokens).toBe(0);
    expect(tap.state.usage.cacheWriteTokens).toBe(3000);
  });
});
