/**
 * Chat passthrough tap (native Chat client → `openai` provider, SPEC F-3): bytes forwarded unchanged,
 * the usage-only chunk withheld when the client did not ask for usage, usage / finish / [DONE] /
 * in-band errors observed, and the closing bytes `end()` adds (SPEC 6.4).
 */
import { describe, expect, test } from "bun:test";
import { APIError } from "openai";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import type { HubError } from "../../../formats/hub.ts";
import { manifest, recordedBytes } from "../../support/fixtures.ts";
import { sdkFinalChatCompletion, ssePayloads } from "../../support/openai-chat-helpers.ts";
import { concatBytes } from "../../../formats/sse.ts";
import { expectSplitReadsDecodeAlike, readsAt } from "../../support/split-reads.ts";

const entries = (await manifest()).filter((e) => e.format === "openai-chat" && e.kind === "sse");
/** Recordings up to this many bytes are also split in two at every offset. */
const SHORT = 1_200;
const utf8 = new TextEncoder();
const text = (b: Uint8Array) => new TextDecoder().decode(b);

const concat = (parts: Uint8Array[]) => concatBytes(parts);

/** Runs bytes (as pieces) through a fresh tap; returns everything the client would get, and the tap. */
function tapRun(pieces: Uint8Array[], includeUsage: boolean, failure?: HubError) {
  const tap = openaiChat.createTap({ family: "openai", includeUsage });
  const out: Uint8Array[] = [];
  for (const p of pieces) out.push(tap.push(p));
  out.push(tap.end(failure));
  return { bytes: concat(out), tap };
}

/** Oracle: the recording with its usage-only events (`choices: []` + usage object) cut out, by plain text ops. */
function withoutUsageChunk(raw: string): string {
  return raw
    .split(/(?<=\n\n)/)
    .filter((ev) => {
      if (!ev.startsWith("data: {")) return true;
      const j = JSON.parse(ev.slice(6));
      return !(Array.isArray(j.choices) && j.choices.length === 0 && j.usage && typeof j.usage === "object");
    })
    .join("");
}

/** The first 6 and last 4 SSE events of a recording. */
function trimmed(raw: Uint8Array): Uint8Array {
  const events = text(raw).split(/(?<=\n\n)/);
  return utf8.encode(events.slice(0, 6).concat(events.slice(-4)).join(""));
}

const FINISH_MEANS: Record<string, string> = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens" };

describe("recorded streams through the tap", () => {
  for (const entry of entries) {
    test(`${entry.file}: include_usage true → every byte forwarded unchanged; state observed`, async () => {
      const raw = await recordedBytes(entry.file);
      const { bytes, tap } = tapRun([raw], true);
      expect(bytes).toEqual(raw);
      const rec = entry.recorded!;
      expect(tap.state.terminal).toBe(true);
      expect(tap.state.sawContent).toBe(true);
      expect(tap.state.error).toBeUndefined();
      expect(tap.state.stopReason).toBe(FINISH_MEANS[rec.finish_reason] as never);
      if (rec.usage === null) expect(tap.state.usage).toEqual({});
      else {
        expect(tap.state.usage.inputTokens).toBe(rec.usage.prompt_tokens - (rec.usage.cached_tokens ?? 0));
        expect(tap.state.usage.cacheReadTokens).toBe(rec.usage.cached_tokens ?? 0);
        expect(tap.state.usage.reasoningTokens).toBe(rec.usage.reasoning_tokens);
      }
    });

    test(`${entry.file}: include_usage false → only the usage-only chunk is withheld, usage still observed`, async () => {
      const raw = await recordedBytes(entry.file);
      const { bytes, tap } = tapRun([raw], false);
      const expected = withoutUsageChunk(text(raw));
      expect(text(bytes)).toBe(expected);
      if (entry.recorded!.usage !== null) expect(tap.state.usage.outputTokens).toBeGreaterThan(0);
      const payloads = ssePayloads(text(bytes));
      expect(payloads.some((p) => p !== "[DONE]" && p.choices?.length === 0 && p.usage)).toBe(false);
    });

    // The reads: one byte per read (every offset of the recording a read boundary); then of the
    // recording when small, else of a trimmed copy (first 6 and last 4 events: role chunk, content,
    // tool call, finish, usage chunk, [DONE]; the events between are more of the same content),
    // two pieces at every offset when short, else test/support/split-reads.ts's cuts (every offset
    // near each line end, multi-byte character and escape, each with everything before it read, and a
    // seeded sample of two-piece splits). Every offset in two pieces was quadratic, up to 3.4 s a test
    // under load.
    test(`${entry.file}: split reads (every offset in two pieces when short, or one byte per read) the tap forwards the same bytes, state identical`, async () => {
      const raw = await recordedBytes(entry.file);
      for (const includeUsage of [true, false]) {
        const decode = (reads: Uint8Array[]) => {
          const { bytes, tap } = tapRun(reads, includeUsage);
          return { includeUsage, bytes: Buffer.from(bytes).toString("latin1"), state: tap.state };
        };
        expect(decode(readsAt(raw, Array.from({ length: raw.length - 1 }, (_, i) => i + 1)))).toEqual(decode([raw]));
        const src = raw.length <= 8_000 ? raw : trimmed(raw);
        const whole = decode([src]);
        if (src !== raw) expect(Buffer.from(whole.bytes, "latin1").toString()).toBe(includeUsage ? text(src) : withoutUsageChunk(text(src)));
        if (src.length > SHORT) expectSplitReadsDecodeAlike(src, decode);
        else
          for (let k = 1; k < src.length; k++) {
            const got = decode([src.subarray(0, k), src.subarray(k)]);
            if (!Bun.deepEquals(got, whole)) expect({ k, ...got }).toEqual({ k, ...whole });
          }
      }
    }, 60_000);
  }

  test("tapped text.sse without usage is what the SDK accepts; with usage the SDK gets the usage", async () => {
    const raw = await recordedBytes("openai-chat/text.sse");
    const noUsage = await sdkFinalChatCompletion(tapRun([raw], false).bytes);
    expect(noUsage.usage ?? null).toBeNull(); // text.sse sends "usage": null on every other chunk
    expect(noUsage.choices[0].finish_reason).toBe("stop");
    const withUsage = await sdkFinalChatCompletion(tapRun([raw], true).bytes, true);
    expect(withUsage.usage?.completion_tokens).toBe(300);
  });
});

describe("tap endings (SPEC 6.4)", () => {
  const role = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`;
  const hi = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n`;
  const fin = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`;
  const usage = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}\n\n`;
  const done = "data: [DONE]\n\n";
  const failure: HubError = { kind: "api_error", status: 502, message: "upstream connection reset" };

  test("a complete stream: end() adds nothing", () => {
    const tap = openaiChat.createTap({ family: "openai", includeUsage: true });
    tap.push(utf8.encode(role + hi + fin + usage + done));
    expect(tap.end()).toEqual(new Uint8Array(0));
  });

  test("cut before the finish: the half event is dropped, the error frame and [DONE] follow; the SDK raises", async () => {
    const cut = role + hi + fin.slice(0, 40);
    const { bytes, tap } = tapRun([utf8.encode(cut)], false, failure);
    expect(text(bytes)).toBe(role + hi + `data: {"error":{"message":"upstream connection reset","type":"server_error","param":null,"code":null}}\n\n` + done);
    expect(tap.state.stopReason).toBeNull();
    expect(tap.state.terminal).toBe(false);
    await expect(sdkFinalChatCompletion(bytes)).rejects.toBeInstanceOf(APIError);
  });

  test("EOF before the finish without a failure given: the truncation error is sent", async () => {
    const { bytes } = tapRun([utf8.encode(role + hi)], true);
    expect(ssePayloads(text(bytes)).at(-2)).toMatchObject({ error: { code: "upstream_truncated" } });
  });

  test("finish arrived, [DONE] did not: only [DONE] is added (also when a failure is reported)", async () => {
    for (const f of [undefined, failure]) {
      const { bytes, tap } = tapRun([utf8.encode(role + hi + fin)], false, f);
      expect(text(bytes)).toBe(role + hi + fin + done);
      expect(tap.state.stopReason).toBe("end_turn");
      const c = await sdkFinalChatCompletion(bytes);
      expect(c.choices[0].message.content).toBe("Hi");
    }
  });

  test("[DONE] before any finish_reason (a cut-off reply): it is withheld, the truncation error and [DONE] follow; the SDK raises", async () => {
    for (const pieces of [[role + hi + done], [role + hi, done], [role + hi + "data: [DONE]"]]) {
      const { bytes, tap } = tapRun(pieces.map((p) => utf8.encode(p)), true);
      expect(text(bytes)).toBe(role + hi + `data: {"error":{"message":"The upstream stream ended before the reply was complete.","type":"server_error","param":null,"code":"upstream_truncated"}}\n\n` + done);
      expect(tap.state.error).toMatchObject({ code: "upstream_truncated" });
      expect(tap.state.stopReason).toBeNull();
      await expect(sdkFinalChatCompletion(bytes)).rejects.toBeInstanceOf(APIError);
    }
  });

  // Nothing was begun, so nothing was cut: an empty reply (SPEC 6.3's last row), as only `choices: []`
  // chunks then [DONE] are, not the truncation (the 5xx row, retried) it was.
  test("[DONE] alone (no chunk at all): the tap reports an empty reply as an error before content", () => {
    const { tap } = tapRun([utf8.encode(done)], true);
    // (the pipeline fails the attempt on this error before content; no byte reaches the client)
    expect(tap.state.sawContent).toBe(false);
    expect(tap.state.error).toMatchObject({ code: "upstream_empty_reply", status: 502 });
  });

  test('a failure finish_reason ("error") then [DONE]: forwarded as is, observed as the reply\'s failure', () => {
    const errFin = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"error"}]}\n\n`;
    const { bytes, tap } = tapRun([utf8.encode(role + hi + errFin + done)], true);
    expect(text(bytes)).toBe(role + hi + errFin + done);
    expect(tap.state.error).toMatchObject({ kind: "api_error", code: "error" });
    expect(tap.state.stopReason).toBeNull();
  });

  test("a last event without its blank line is completed, not lost", () => {
    const { bytes, tap } = tapRun([utf8.encode(role + hi + fin + "data: [DONE]\n")], true);
    expect(text(bytes)).toBe(role + hi + fin + done);
    expect(tap.state.terminal).toBe(true);
  });

  test("an in-band upstream error is forwarded as is, observed, and closed with [DONE]", async () => {
    const err = `data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n`;
    const { bytes, tap } = tapRun([utf8.encode(role + hi), utf8.encode(err)], true);
    expect(text(bytes)).toBe(role + hi + err + done);
    expect(tap.state.error).toMatchObject({ kind: "api_error", message: "The server had an error while processing your request." });
    await expect(sdkFinalChatCompletion(bytes)).rejects.toBeInstanceOf(APIError);
  });

  test("tool calls latch tool_use even when the provider says stop; sawContent waits for real content", () => {
    const tap = openaiChat.createTap({ family: "openai", includeUsage: false });
    tap.push(utf8.encode(role));
    expect(tap.state.sawContent).toBe(false);
    tap.push(
      utf8.encode(
        `data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}\n\n` +
          fin,
      ),
    );
    expect(tap.state.sawContent).toBe(true);
    expect(tap.state.stopReason).toBe("tool_use");
  });

  test("many events in one read after the content: keys spaced out by JSON whitespace are still seen, text that only quotes them is not", () => {
    // Deltas whose text mentions the keys (escaped quotes) must not count as a finish, usage or tool call.
    const quoting = `data: {"id":"c","choices":[{"index":0,"delta":{"content":"say \\"finish_reason\\":\\"stop\\" and \\"usage\\":{ and \\"tool_calls\\":["},"finish_reason":null}]}\n\n`;
    const spacedFinish = `data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason" :\t "length"}]}\n\n`;
    const spacedUsage = `data: {"id":"c","choices":[],"usage" : {"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}\n\n`;
    const tap = openaiChat.createTap({ family: "openai", includeUsage: false });
    const out = [tap.push(utf8.encode(role + hi + quoting + quoting)), tap.push(utf8.encode(quoting + spacedFinish + spacedUsage + done))];
    expect(tap.state.stopReason).toBe("max_tokens");
    expect(tap.state.usage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
    out.push(tap.end());
    // The usage-only chunk is withheld (the client did not ask for usage); everything else as sent.
    expect(text(concat(out))).toBe(role + hi + quoting + quoting + quoting + spacedFinish + done);
    expect(tap.state.terminal).toBe(true);
  });

  test("an error after the content inside a read of several events is observed", () => {
    const err = `data: {"error":{"message":"boom","type":"server_error","param":null,"code":null}}\n\n`;
    const { bytes, tap } = tapRun([utf8.encode(role + hi + hi + err)], true);
    expect(text(bytes)).toBe(role + hi + hi + err + done);
    expect(tap.state.error).toMatchObject({ message: "boom" });
  });

  test("an event of two lines after plain ones in the same read is read whole (its event name too)", () => {
    // The `event: error` line comes second: only the line count tells this event from a plain one.
    const named = `data: {"message":"overloaded","type":"server_error"}\nevent: error\n\n`;
    for (const pieces of [[role + hi + hi + named], [role, hi + hi + named], [role + hi, hi + named.slice(0, 20), named.slice(20)]]) {
      const { bytes, tap } = tapRun(pieces.map((p) => utf8.encode(p)), true);
      expect(tap.state.error).toMatchObject({ message: "overloaded" });
      expect(text(bytes)).toBe(role + hi + hi + named + done);
    }
  });

  test("CRLF framing: events are cut at \\r\\n\\r\\n and the usage chunk is withheld whole", () => {
    const crlf = (s: string) => s.replace(/\n/g, "\r\n");
    const input = crlf(role + fin + usage + done);
    for (let k = 1; k < input.length; k++) {
      const b = utf8.encode(input);
      const { bytes } = tapRun([b.subarray(0, k), b.subarray(k)], false);
      expect(text(bytes)).toBe(crlf(role + fin + done));
    }
  });
});

describe("content a custom tool's call carries", () => {
  test("a piece of a custom call's input (no id, no function) counts as content, as a function's argument text does", () => {
    const head = `data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"custom","custom":{"name":"run","input":""}}]},"finish_reason":null}]}\n\n`;
    const more = `data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":"print(1)"}}]},"finish_reason":null}]}\n\n`;
    const tap = openaiChat.createTap({ family: "openai", includeUsage: true });
    tap.push(utf8.encode(head));
    expect(tap.state.contentEvents).toBe(1);
    tap.state.looking = true; // the reader asks again
    tap.push(utf8.encode(more));
    expect(tap.state.contentEvents).toBe(2);
  });
});
