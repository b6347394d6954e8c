import { describe, expect, test } from "bun:test";
import { isRope, numberOfDFGCompiles, optimizeNextInvocation } from "bun:jsc";
import { flat, isPlainJsonText, jsonNumber, jsonString } from "../../formats/json-text.ts";
import type { HubEvent } from "../../formats/hub.ts";
import { codecFor } from "../../formats/index.ts";

/** Texts a delta can carry: plain ones, and every kind of character JSON escapes. */
const TEXTS = [
  "The",
  " quick brown fox",
  "",
  'say "hi"',
  "back\\slash",
  "new\nline",
  "tab\there",
  "\u0000nul",
  "\u001f",
  "\u007f del",
  "é ü ß",
  "\u2028 and \u2029",
  "emoji 😀",
  "lone \ud800 high",
  "lone \udc00 low",
  "x".repeat(256),
  "x".repeat(257),
  "</script>",
];

describe("isPlainJsonText", () => {
  test("true exactly when JSON.stringify only adds the quotes, for every UTF-16 code unit alone", () => {
    for (let c = 0; c < 0x10000; c++) {
      const s = "a" + String.fromCharCode(c) + "b";
      expect(isPlainJsonText(s)).toBe(JSON.stringify(s) === `"${s}"`);
    }
  });

  test("a surrogate pair and a text over 256 characters are left to JSON.stringify (answer false)", () => {
    expect(JSON.stringify("😀")).toBe('"😀"');
    expect(isPlainJsonText("😀")).toBe(false);
    expect(isPlainJsonText("x".repeat(256))).toBe(true);
    expect(isPlainJsonText("x".repeat(257))).toBe(false);
  });

  test("whenever it answers true, the quoted text is JSON.stringify's output", () => {
    for (const t of TEXTS) if (isPlainJsonText(t)) expect(`"${t}"`).toBe(JSON.stringify(t));
  });

  test("flat returns the same text", () => {
    const rope = "a" + String(Math.random()) + "b";
    expect(flat(rope)).toBe(rope);
  });

  test("flat resolves a rope in code the optimising compiler made too (docs/performance.md item 152)", () => {
    // Called from a function the DFG has compiled, a flat() whose indexOf result went unused was
    // dropped by the optimiser: the text stayed a rope.
    const piece = "x".repeat(40);
    const make = (i: number) => flat(piece + "," + i);
    for (let i = 0; numberOfDFGCompiles(make) === 0 && i < 2_000_000; i++) {
      make(i);
      if (i === 1000) optimizeNextInvocation(make);
    }
    expect(numberOfDFGCompiles(make)).toBeGreaterThan(0);
    const text = make(7);
    expect(isRope(text)).toBe(false);
    expect(isRope(piece + "," + String(Math.random()))).toBe(true);
    expect(text).toBe(piece + ",7");
  });
});

/** A text block with one delta per text, as the normalizer hands it to an encoder. */
function textReply(texts: string[]): HubEvent[] {
  return [
    { type: "message_start", id: "up-1" },
    { type: "block_start", index: 0, block: { type: "text" } },
    ...texts.map((text): HubEvent => ({ type: "block_delta", index: 0, delta: { type: "text", text } })),
    { type: "block_stop", index: 0 },
    { type: "finish", reason: "end_turn" },
    { type: "usage", usage: { inputTokens: 3, outputTokens: 4 } },
  ];
}

/** The `data:` payloads of an SSE text, in order. */
function dataLines(sse: string): string[] {
  return sse
    .split("\n\n")
    .filter((f) => f.length > 0)
    .map((f) => f.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
}

describe("client encoders: a text delta's frame is JSON.stringify's, plain text or not", () => {
  const texts = TEXTS.filter((t) => t.length > 0);
  const cases: Array<{ format: "anthropic-messages" | "openai-responses" | "gemini"; deltaText: (d: any) => string | undefined }> = [
    { format: "anthropic-messages", deltaText: (d) => (d.type === "content_block_delta" ? d.delta.text : undefined) },
    { format: "openai-responses", deltaText: (d) => (d.type === "response.output_text.delta" ? d.delta : undefined) },
    { format: "gemini", deltaText: (d) => (d.candidates?.[0]?.finishReason === undefined ? d.candidates?.[0]?.content?.parts?.[0]?.text : undefined) },
  ];
  for (const c of cases) {
    test(c.format, () => {
      let out = "";
      let n = 0;
      const enc = codecFor(c.format).createEncoder!({ model: "m", newId: (p) => `${p}${++n}`, now: () => 0 }, (t) => (out += t));
      for (const ev of textReply(texts)) enc.event(ev);
      enc.end();
      const frames = dataLines(out);
      const seen: string[] = [];
      for (const data of frames) {
        const parsed = JSON.parse(data);
        // The frame's bytes are what JSON.stringify writes for the same object.
        expect(JSON.stringify(parsed)).toBe(data);
        const t = c.deltaText(parsed);
        if (t !== undefined) seen.push(t);
      }
      expect(seen).toEqual(texts);
    });
  }

  test("openai-responses event encoder: the same data as the SSE encoder", () => {
    let sse = "";
    const events: string[] = [];
    const make = () => {
      let n = 0;
      return { model: "m", newId: (p: string) => `${p}${++n}`, now: () => 0 };
    };
    const a = codecFor("openai-responses").createEncoder!(make(), (t) => (sse += t));
    const b = codecFor("openai-responses").createEventEncoder!(make(), (event, data) => events.push(`event: ${event}\ndata: ${data}\n\n`));
    for (const ev of textReply(texts)) {
      a.event(ev);
      b.event(ev);
    }
    a.end();
    b.end();
    expect(events.join("")).toBe(sse);
  });
});

describe("jsonString and jsonNumber", () => {
  test("write what JSON.stringify writes, for every kind of text and number", () => {
    for (const t of TEXTS) expect(jsonString(t)).toBe(JSON.stringify(t));
    for (const n of [0, -0, 7, -3, 1.5, 1e21, 1e-7, 2 ** 53 + 2, Number.MAX_VALUE, NaN, Infinity, -Infinity]) expect(jsonNumber(n)).toBe(JSON.stringify(n));
  });
});
