import { describe, expect, test } from "bun:test";
import { gemini } from "../../../formats/gemini/index.ts";
import { hubError } from "../../../formats/hub.ts";
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
