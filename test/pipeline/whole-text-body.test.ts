/**
 * A reply the commit point sends whole as an HTTP body is handed to the Response as the text the
 * driver wrote (`endWhole`, `wholeBody` in pipeline/re-translate.ts, docs/performance.md item 186): the
 * client must read exactly the bytes `end` gives, and the reply's byte count must be that of its UTF-8
 * bytes (multi-byte text included), whatever mix of empty reads and text the parts are.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { AccumulatedDriver, TranslatedStreamDriver, wholeBody, WholeBodyDriver } from "../../pipeline/re-translate.ts";
import { manifest, recordedBytes } from "../support/fixtures.ts";

const CLIENTS: WireFormat[] = ["openai-chat", "anthropic-messages", "openai-responses", "gemini"];
const utf8 = new TextEncoder();
const family = (f: WireFormat) => (f === "anthropic-messages" ? "anthropic" : f === "gemini" ? "gemini" : "openai");

// Ids and times the encoders would draw at random are fixed, so two drivers write the same bytes.
const realRandom = Math.random;
beforeAll(() => {
  Math.random = () => 0.5;
});
afterAll(() => {
  Math.random = realRandom;
});

function encoderOptions(client: WireFormat) {
  let n = 0;
  const request = client === "openai-responses" ? codecFor(client).parseRequest!({ model: "m", input: "hi" }) : undefined;
  return { model: "m", includeUsage: true, request, now: () => 1_700_000_000_000, newId: (prefix: string) => `${prefix}id${n++}` };
}

/** What a client reads from a Response made of `body`. */
const served = async (body: Uint8Array | string) => new Uint8Array(await new Response(body).arrayBuffer());
const byteCount = (body: Uint8Array | string) => (typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);

const entries = await manifest();

describe("a reply sent whole from the driver's text", () => {
  for (const entry of entries.filter((e) => e.kind === "sse")) {
    test(`${entry.file}: every client's streamed and gathered reply reads as end() writes it`, async () => {
      const bytes = await recordedBytes(entry.file);
      for (const client of CLIENTS) {
        for (const make of [
          () => new TranslatedStreamDriver(codecFor(entry.format), codecFor(client), { family: family(entry.format) }, encoderOptions(client)),
          () => new AccumulatedDriver(codecFor(entry.format), codecFor(client), { family: family(entry.format) }, encoderOptions(client)),
        ]) {
          const byEnd = make();
          const expected = [byEnd.push(bytes), byEnd.end()];
          const byText = make();
          const body = wholeBody([byText.push(bytes), byText.endWhole()]);
          const read = await served(body);
          expect(new TextDecoder().decode(read)).toBe(new TextDecoder().decode(wholeBody(expected) as Uint8Array));
          expect(byteCount(body)).toBe(read.byteLength);
          expect({ usage: byText.usage, stop: byText.stopReason, error: byText.earlyError ?? byText.lateError }).toEqual({
            usage: byEnd.usage,
            stop: byEnd.stopReason,
            error: byEnd.earlyError ?? byEnd.lateError,
          });
        }
      }
    });
  }

  test("a translated JSON reply (and one replayed as a stream) reads as end() writes it", async () => {
    const json = entries.filter((e) => e.kind === "json" && !e.file.includes("error"));
    expect(json.length).toBeGreaterThan(0);
    for (const entry of json) {
      const bytes = await recordedBytes(entry.file);
      for (const client of CLIENTS) {
        for (const clientStream of [false, true]) {
          const make = () => new WholeBodyDriver(codecFor(entry.format), codecFor(client), { family: family(entry.format) }, encoderOptions(client), { native: entry.format === client, clientStream });
          const byEnd = make();
          byEnd.push(bytes);
          const expected = byEnd.end();
          const byText = make();
          const body = wholeBody([byText.push(bytes), byText.endWhole()]);
          expect(await served(body)).toEqual(await served(expected));
          expect(byteCount(body)).toBe(expected.byteLength);
        }
      }
    }
  });

  test("parts of text and bytes: one text goes as it is; with other bytes, all are joined as UTF-8", async () => {
    const empty = new Uint8Array(0);
    const text = 'data: {"text":"héllo 🎉"}\n\n';
    expect(wholeBody([empty, empty, text])).toBe(text);
    expect(byteCount(wholeBody([empty, text]))).toBe(utf8.encode(text).byteLength);
    const joined = wholeBody([utf8.encode("data: a\n\n"), empty, text]);
    expect(joined).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(joined as Uint8Array)).toBe("data: a\n\n" + text);
    expect(new TextDecoder().decode(wholeBody([text, text]) as Uint8Array)).toBe(text + text);
    expect(wholeBody([utf8.encode("x"), utf8.encode("y")])).toEqual(utf8.encode("xy"));
    // Text before the last part (no caller makes it: `delivery.end` gives text, last) is still joined.
    expect(new TextDecoder().decode(wholeBody([text, utf8.encode("x")]) as Uint8Array)).toBe(text + "x");
    expect(new TextDecoder().decode(wholeBody([text, empty, utf8.encode("x")]) as Uint8Array)).toBe(text + "x");
  });
});
