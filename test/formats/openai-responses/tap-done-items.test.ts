/**
 * What the native Responses tap holds of the completed items for the closing `response.failed` (its
 * `output`) — issue 17: an `image_generation_call`'s base64 `result` (MBs) was kept whole for the
 * stream's life, a second copy of what had been forwarded. Now an item event over 64 KiB is kept as its
 * item's id and type, a small one whole; a repaired stream (no `response.created` first) keeps none
 * (its item snapshot has them). The `response.failed` the client gets names the items either way.
 */
import { describe, expect, test } from "bun:test";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
const CREATED = ev("response.created", { sequence_number: 0, response: { id: "r", object: "response", output: [] } });
const IMAGE = { id: "ig_1", type: "image_generation_call", status: "completed", result: "A".repeat(1024 * 1024) };
const MESSAGE = { id: "m_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "here", annotations: [] }] };
const done = (seq: number, at: number, item: object) => ev("response.output_item.done", { sequence_number: seq, output_index: at, item });

/** The characters the tap holds of the done items (its private list: what this test measures). */
const held = (tap: object) => ((tap as { doneItems?: string[] }).doneItems ?? []).reduce((n, s) => n + s.length, 0);

function failedOutput(out: string): any[] {
  const line = out.split("\n").find((l) => l.startsWith("data: ") && l.includes('"response.failed"'))!;
  return JSON.parse(line.slice(6)).response.output;
}

describe("the native Responses tap's completed items (issue 17)", () => {
  test("OpenAI's stream with a 1 MB image item: under 1 KB held (was the whole event, ~1 MB); a cut names the image by id and type, the message whole", () => {
    const tap = openaiResponses.createTap({ family: "openai" });
    tap.push(enc.encode(CREATED));
    tap.push(enc.encode(done(1, 0, MESSAGE)));
    tap.push(enc.encode(done(2, 1, IMAGE)));
    const bytes = held(tap);
    console.log(`held done-item characters with a 1 MB image item: ${bytes}`);
    expect(bytes).toBeLessThan(1024);
    const output = failedOutput(dec.decode(tap.end()));
    expect(output).toEqual([MESSAGE, { id: "ig_1", type: "image_generation_call" }]);
  });

  test("a repaired stream keeps none beside its snapshot; a cut's output still has both items whole", () => {
    const tap = openaiResponses.createTap({ family: "openai" });
    tap.push(enc.encode(done(0, 0, MESSAGE)));
    tap.push(enc.encode(done(1, 1, IMAGE)));
    expect(held(tap)).toBe(0);
    expect(failedOutput(dec.decode(tap.end()))).toEqual([MESSAGE, IMAGE]);
  });
});
