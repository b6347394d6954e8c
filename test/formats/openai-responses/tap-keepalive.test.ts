/**
 * SSE comment keep-alives (`: keep-alive`), `data: [DONE]` and `id:` / `retry:` lines on the native
 * Responses lane's byte tap. A stream that begins with `response.created` (OpenAI's) goes out byte for
 * byte; one that began without it (a third-party Responses server) is repaired, its events
 * re-serialised (formats/openai-responses/tap.ts), and those lines still reach the client, in order
 * with the events (until 2026-12-07 only the repaired events went out: a client behind such a server
 * saw nothing through a long silent wait).
 */
import { describe, expect, test } from "bun:test";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
const ADDED = ev("response.output_item.added", { sequence_number: 0, output_index: 0, item: { type: "message", id: "m", role: "assistant", content: [] } });
const CREATED = ev("response.created", { sequence_number: 0, response: { id: "r", object: "response", output: [] } });
const DELTA = ev("response.output_text.delta", { sequence_number: 1, item_id: "m", output_index: 0, content_index: 0, delta: "hi" });
/** DELTA as the repair sends it: its sequence_number one higher. */
const DELTA_OUT = ev("response.output_text.delta", { sequence_number: 2, item_id: "m", output_index: 0, content_index: 0, delta: "hi" });

describe("SSE comment keep-alives on the native Responses lane", () => {
  for (const [name, first] of [
    ["a stream that began without response.created (repaired)", ADDED],
    ["a stream that began with response.created (byte-exact)", CREATED],
  ] as const) {
    test(`${name}: the upstream's ': keep-alive' comment reaches the client`, () => {
      const tap = openaiResponses.createTap({ family: "openai" });
      tap.push(enc.encode(first));
      const out = dec.decode(tap.push(enc.encode(": keep-alive\n\n")));
      expect(out).toBe(": keep-alive\n\n");
    });
  }

  test("repaired: comments, [DONE], id and retry lines go out in order with the repaired events, in one read and across reads", () => {
    const tap = openaiResponses.createTap({ family: "openai" });
    const first = dec.decode(tap.push(enc.encode(`: hello\n\n${ADDED}`)));
    expect(first.startsWith("event: response.created\n")).toBe(true);
    expect(first).toContain('"type":"response.output_item.added","sequence_number":1');
    const read = `: ping\n\nid: 7\n${DELTA}retry: 3000\n\n: two\r\n\r\n`;
    const body = dec.decode(tap.push(enc.encode(read.slice(0, 40)))) + dec.decode(tap.push(enc.encode(read.slice(40))));
    expect(body).toBe(`: ping\n\nid: 7\n${DELTA_OUT}retry: 3000\n\n: two\r\n\r\n`);
    expect(dec.decode(tap.push(enc.encode("data: [DONE]\n\n")))).toBe("data: [DONE]\n\n");
  });

  test("repaired: a comment line inside an event's block goes out before the repaired event", () => {
    const tap = openaiResponses.createTap({ family: "openai" });
    tap.push(enc.encode(ADDED));
    expect(dec.decode(tap.push(enc.encode(`: note\n${DELTA}`)))).toBe(`: note\n${DELTA_OUT}`);
  });

  test("byte-exact: the same reads go out as they came", () => {
    const tap = openaiResponses.createTap({ family: "openai" });
    tap.push(enc.encode(CREATED));
    const read = `: ping\n\nid: 7\n${DELTA}retry: 3000\n\ndata: [DONE]\n\n`;
    expect(dec.decode(tap.push(enc.encode(read)))).toBe(read);
  });
});
