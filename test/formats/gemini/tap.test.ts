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

  test("cut inside an event: the error still arrives as an event of its own", () => {
    const bytes = geminiSse({ candidates: [{ content: { parts: [{ text: "a" }] } }] }, { candidates: [{ content: { parts: [{ text: "b" }] } }] });
    for (const cut of [bytes.length - 2, bytes.length - 1, bytes.length - 10]) {
      const tap = gemini.createTap({ family: "gemini" });
      const shown = concat([tap.push(bytes.subarray(0, cut)), tap.end()]);
      const events = clientEvents(shown);
      expect(JSON.parse(events.at(-1)!)).toEqual(gemini.errorBody(TRUNCATED_ERROR));
    }
  });

  test("a finish in an event that lacked its blank line: only the blank line is added, no error", () => {
    const whole = geminiSse({ candidates: [{ content: { parts: [{ text: "done" }] }, finishReason: "STOP" }] });
    const tap = gemini.createTap({ family: "gemini" });
    tap.push(whole.subarray(0, whole.length - 2));
    const tail = tap.end();
    expect(text(tail)).toBe("\n");
    expect(tap.state.stopReason).toBe("end_turn");
  });

  test("an upstream in-band error is observed and not duplicated", () => {
    const bytes = geminiSse({ error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } });
    const tap = gemini.createTap({ family: "gemini" });
    tap.push(bytes);
    expect(tap.state.error).toMatchObject({ kind: "rate_limit", status: 429 });
    expect(tap.end().length).toBe(0);
  });
});
