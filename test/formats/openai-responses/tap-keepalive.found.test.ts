/**
 * Found (report-only, review43b): a native Responses stream that began without `response.created` (a
 * third-party Responses server; the tap makes one and re-serialises every event since 383e98d3) no
 * longer passes its SSE comment keep-alives (`: keep-alive`) to the client: only the repaired events go
 * out, so a client reading a long silent wait (reasoning) behind such a server sees nothing until the
 * next event. Before 383e98d3 the bytes went out as they came, comments included (checked with the
 * tap of 5581796a: ": keep-alive\n\n" -> ": keep-alive\n\n"). A stream that begins with
 * `response.created` (OpenAI's) still forwards them (second case, a guard).
 */
import { describe, expect, test } from "bun:test";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
const ADDED = ev("response.output_item.added", { sequence_number: 0, output_index: 0, item: { type: "message", id: "m", role: "assistant", content: [] } });
const CREATED = ev("response.created", { sequence_number: 0, response: { id: "r", object: "response", output: [] } });

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
});
