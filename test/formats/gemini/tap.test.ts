import { describe, expect, test } from "bun:test";
import { gemini } from "../../../formats/gemini/index.ts";
import { hubError, mergeUsage, type Usage } from "../../../formats/hub.ts";
import { mapUsage } from "../../../formats/gemini/mapping.ts";
import { PENDING_MAX } from "../../../formats/gemini/tap.ts";
import { TRUNCATED_ERROR } from "../../../formats/normalize.ts";
import { SseReader } from "../../../formats/sse.ts";
import { manifest, recordedBytes } from "../../support/fixtures.ts";
import { bytewise, geminiSse } from "../../support/gemini-harness.ts";
import { concatBytes } from "../../../formats/sse.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

const concat = (parts: Uint8Array[]) => concatBytes(parts);

/** What a spec SSE client parses out of bytes: the data payloads. */
function clientEvents(bytes: Uint8Array): string[] {
  const out: string[] = [];
  const r = new SseReader((e) => out.push(e.data));
  r.push(bytes);
  return out;
}

const entries = (await manifest()).filter((e) => e.format === "gemini" && e.kind === "sse");

describe("gemini passthrough tap", () => {
  for (const entry of entries) {
    test(`${entry.file}: bytes unchanged (one byte per read), usage and finish observed, nothing appended`, async () => {
      const bytes = await recordedBytes(entry.file);
      const tap = gemini.createTap({ family: "gemini" });
      const out = concat(bytewise(bytes).map((p) => tap.push(p)));
      expect(out).toEqual(bytes);
      expect(tap.end().length).toBe(0);
      const rec = entry.recorded!;
      expect(tap.state.terminal).toBe(true);
      expect(tap.state.stopReason).toBe(rec.finish_reason === null ? "refusal" : "end_turn");
      expect(tap.state.sawContent).toBe(true);
      expect(tap.state.usage.inputTokens).toBe(rec.usage.promptTokenCount - (rec.usage.cachedContentTokenCount ?? 0));
      expect(tap.state.usage.reasoningTokens).toBe(rec.usage.thoughtsTokenCount);
      expect(tap.state.error).toBeUndefined();
    });
  }

  test("no finishReason: end() appends one in-band error chunk; end(failure) appends that failure", () => {
    const bytes = geminiSse({ candidates: [{ content: { parts: [{ text: "partial" }] } }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1 } });
    const tap = gemini.createTap({ family: "gemini" });
    expect(tap.push(bytes)).toBe(bytes);
    expect(tap.state.sawContent).toBe(true);
    expect(tap.state.terminal).toBe(false);
    const tail = tap.end();
    expect(text(tail)).toBe(`data: ${JSON.stringify(gemini.errorBody(TRUNCATED_ERROR))}\n\n`);
    expect(tap.end().length).toBe(0); // once

    const tap2 = gemini.createTap({ family: "gemini" });
    tap2.push(bytes);
    const failure = hubError("timeout", "The upstream went silent.");
    expect(JSON.parse(clientEvents(tap2.end(failure))[0]!)).toEqual(gemini.errorBody(failure));
  });

  test("cut inside an event: the torn event is never forwarded; the error arrives as an event of its own", () => {
    const bytes = geminiSse({ candidates: [{ content: { parts: [{ text: "a" }] } }] }, { candidates: [{ content: { parts: [{ text: "b" }] } }] });
    const firstEnd = text(bytes).indexOf("\r\n\r\n") + 4;
    const a = { candidates: [{ content: { parts: [{ text: "a" }] } }] };
    const b = { candidates: [{ content: { parts: [{ text: "b" }] } }] };
    // Cut before the blank line only (the data is whole: completed and forwarded) or inside the data (torn: dropped).
    const cuts: Array<[number, unknown[]]> = [[bytes.length - 2, [a, b]], [bytes.length - 1, [a, b]], [bytes.length - 10, [a]], [firstEnd + 8, [a]]];
    for (const [cut, forwarded] of cuts) {
      for (const reads of [[bytes.subarray(0, cut)], bytewise(bytes.subarray(0, cut))]) {
        const tap = gemini.createTap({ family: "gemini" });
        const shown = concat([...reads.map((r) => tap.push(r)), tap.end()]);
        // What Gemini CLI parses: every event is whole JSON, then the error.
        const events = clientEvents(shown).map((e) => JSON.parse(e));
        expect(events).toEqual([...forwarded, gemini.errorBody(TRUNCATED_ERROR)]);
        expect(tap.state.error).toEqual(TRUNCATED_ERROR);
      }
    }
  });

  test("a read ending inside an event forwards only the complete events before it", () => {
    const bytes = geminiSse({ candidates: [{ content: { parts: [{ text: "a" }] } }] }, { candidates: [{ content: { parts: [{ text: "b" }] } }] });
    const firstEnd = text(bytes).indexOf("\r\n\r\n") + 4;
    const tap = gemini.createTap({ family: "gemini" });
    expect(text(tap.push(bytes.subarray(0, firstEnd + 8)))).toBe(text(bytes.subarray(0, firstEnd)));
    expect(text(tap.push(bytes.subarray(firstEnd + 8)))).toBe(text(bytes.subarray(firstEnd)));
  });

  test("a finish in an event that lacked its blank line: the event is completed, no error", () => {
    const whole = geminiSse({ candidates: [{ content: { parts: [{ text: "done" }] }, finishReason: "STOP" }] });
    for (const cut of [whole.length - 2, whole.length - 4]) {
      const tap = gemini.createTap({ family: "gemini" });
      const shown = concat([tap.push(whole.subarray(0, cut)), tap.end()]);
      expect(clientEvents(shown).map((e) => JSON.parse(e))).toEqual([{ candidates: [{ content: { parts: [{ text: "done" }] }, finishReason: "STOP" }] }]);
      expect(tap.state.stopReason).toBe("end_turn");
      expect(tap.state.error).toBeUndefined();
    }
  });

  test("an upstream in-band error is observed and not duplicated", () => {
    const bytes = geminiSse({ error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } });
    const tap = gemini.createTap({ family: "gemini" });
    tap.push(bytes);
    expect(tap.state.error).toMatchObject({ kind: "rate_limit", status: 429 });
    expect(tap.end().length).toBe(0);
  });
});

describe("gemini passthrough tap: usage of every chunk (events after the first content are parsed only for what they can still change)", () => {
  /** The usage a tap that parsed every payload in turn would hold: each chunk's usage merged in order, until an in-band error. */
  function everyChunkUsage(bytes: Uint8Array): Usage {
    const usage: Usage = {};
    let stopped = false;
    new SseReader((e) => {
      if (stopped) return;
      let obj: unknown;
      try {
        obj = JSON.parse(e.data);
      } catch {
        return;
      }
      if (typeof obj !== "object" || obj === null || Array.isArray(obj)) return;
      const o = obj as Record<string, unknown>;
      if (typeof o.error === "object" && o.error !== null) {
        stopped = true;
        return;
      }
      mergeUsage(usage, mapUsage(o.usageMetadata));
    }).push(bytes);
    return usage;
  }
  const chunk = (parts: unknown[], usage?: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    "data: " + JSON.stringify({ candidates: [{ content: { role: "model", parts }, index: 0, ...extra }], ...(usage ? { usageMetadata: usage } : {}) }) + "\r\n\r\n";
  const u = (p: number, c: number, more: Record<string, unknown> = {}) => ({ promptTokenCount: p, candidatesTokenCount: c, totalTokenCount: p + c, ...more });
  const streams: Array<[string, string]> = [
    ["usage on every chunk, growing", [chunk([{ text: "a" }], u(9, 1)), chunk([{ text: "b" }], u(9, 2)), chunk([{ text: "c" }], u(9, 3)), chunk([{ text: "" }], u(9, 3), { finishReason: "STOP" })].join("")],
    ["usage on every chunk but the finish chunk", [chunk([{ text: "a" }], u(9, 1)), chunk([{ text: "b" }], u(9, 2)), chunk([{ text: "" }], undefined, { finishReason: "STOP" })].join("")],
    ["thoughts counted on early chunks only", [chunk([{ text: "a" }], u(9, 1, { thoughtsTokenCount: 50 })), chunk([{ text: "b" }], u(9, 2, { thoughtsTokenCount: 60 })), chunk([{ text: "c" }], u(9, 3)), chunk([{ text: "" }], u(9, 3), { finishReason: "STOP" })].join("")],
    ["cached tokens on one middle chunk only", [chunk([{ text: "a" }], u(90, 1)), chunk([{ text: "b" }], u(90, 2, { cachedContentTokenCount: 40 })), chunk([{ text: "c" }], u(90, 3)), chunk([{ text: "" }], { candidatesTokenCount: 4 }, { finishReason: "STOP" })].join("")],
    ["prompt count dropped from later chunks; no finish", [chunk([{ text: "a" }], u(9, 1, { toolUsePromptTokenCount: 3 })), chunk([{ text: "b" }], { candidatesTokenCount: 2 }), chunk([{ text: "c" }], { candidatesTokenCount: 5 })].join("")],
    ["a non-JSON and a non-object payload between usage chunks", [chunk([{ text: "a" }], u(9, 1)), "data: {not json\r\n\r\n", "data: [1,2]\r\n\r\n", chunk([{ text: "b" }], u(9, 2)), chunk([{ text: "" }], undefined, { finishReason: "STOP" })].join("")],
    ["an escaped member name (usage under \\u escapes)", [chunk([{ text: "a" }], u(9, 1)), 'data: {"candidates":[{"content":{"parts":[{"text":"b"}]}}],"\\u0075sageMetadata":{"\\u0070romptTokenCount":11,"\\u0063andidatesTokenCount":7}}\r\n\r\n', chunk([{ text: "" }], undefined, { finishReason: "STOP" })].join("")],
    ["an in-band error after usage chunks; later chunks ignored", [chunk([{ text: "a" }], u(9, 1)), chunk([{ text: "b" }], u(9, 2)), 'data: {"error":{"code":500,"message":"boom","status":"INTERNAL"}}\r\n\r\n', chunk([{ text: "c" }], u(9, 30))].join("")],
    [
      "more usage-only chunks than the tap keeps unparsed (merged every PENDING_MAX); cached tokens on an early one",
      [chunk([{ text: "a" }], u(90, 1)), chunk([{ text: "b" }], u(90, 2, { cachedContentTokenCount: 40 })), ...Array.from({ length: 2 * PENDING_MAX + 5 }, (_, i) => chunk([{ text: "x" }], u(90, 3 + i))), chunk([{ text: "" }], { candidatesTokenCount: 99 }, { finishReason: "STOP" })].join(""),
    ],
    ["the word error in a text part and usage", [chunk([{ text: "a" }], u(9, 1)), chunk([{ text: "no error here" }], u(9, 4, { thoughtsTokenCount: 2 })), chunk([{ text: "c" }], u(9, 5)), chunk([{ text: "" }], u(9, 5), { finishReason: "STOP" })].join("")],
  ];
  for (const [name, body] of streams) {
    test(`${name}: the usage of every chunk merged in order, at every split into two reads and one byte per read`, () => {
      const bytes = new TextEncoder().encode(body);
      const want = everyChunkUsage(bytes);
      const splits: Uint8Array[][] = [bytewise(bytes), [bytes]];
      for (let i = 1; i < bytes.length; i += 7) splits.push([bytes.subarray(0, i), bytes.subarray(i)]);
      for (const reads of splits) {
        const tap = gemini.createTap({ family: "gemini" });
        // usage read in the middle of the stream too (a read merges what is pending; later events still count)
        reads.forEach((r, i) => {
          tap.push(r);
          if (i === 0) void tap.state.usage;
        });
        tap.end();
        expect(tap.state.usage).toEqual(want);
      }
    });
  }

  test("the recorded streams: the usage of every chunk merged", async () => {
    for (const entry of entries) {
      const bytes = await recordedBytes(entry.file);
      const tap = gemini.createTap({ family: "gemini" });
      tap.push(bytes);
      tap.end();
      expect(tap.state.usage, entry.file).toEqual(everyChunkUsage(bytes));
    }
  });
});
