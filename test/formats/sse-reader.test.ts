/**
 * formats/sse.ts SseReader decodes each read of upstream bytes as one stream of UTF-8 would be decoded:
 * whatever the reads' boundaries (a character split across reads, a read ending in ASCII, a BOM at the
 * start or later), its events are those of the whole stream decoded at once (a BOM stripped only at the
 * very start, a lone invalid byte turned into U+FFFD).
 */
import { describe, expect, test } from "bun:test";
import { createParser } from "eventsource-parser";
import { SseReader, type SseEvent } from "../../formats/sse.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);
const join = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

/** The events of `bytes` decoded in one piece (a leading BOM stripped, as TextDecoder does) and parsed. */
function reference(bytes: Uint8Array): string[] {
  const out: string[] = [];
  const parser = createParser({ onEvent: (ev) => out.push(`${ev.event ?? ""}|${ev.data}`) });
  parser.feed(new TextDecoder("utf-8").decode(bytes));
  parser.feed("\n\n");
  return out;
}

/** The events SseReader dispatches for `bytes` pushed in the given reads, then ended. */
function read(reads: Uint8Array[]): string[] {
  const out: string[] = [];
  const reader = new SseReader((ev: SseEvent) => out.push(`${ev.event ?? ""}|${ev.data}`));
  for (const r of reads) reader.push(r);
  reader.end();
  return out;
}

const STREAMS: Record<string, Uint8Array> = {
  ascii: utf8('data: {"a":"plain"}\n\ndata: {"b":2}\n\n'),
  "multi-byte text": utf8('data: {"t":"héllo — 日本語 🎉"}\n\nevent: x\ndata: "ß"\n\ndata: end ü\n\n'),
  "leading BOM": join(BOM, utf8('data: {"a":1}\n\ndata: 2\n\n')),
  "two leading BOMs": join(BOM, BOM, utf8("data: 1\n\n")),
  "BOM inside the stream": join(utf8("data: 1\n\ndata: x"), BOM, utf8("y\n\n")),
  "invalid bytes": join(utf8("data: a"), new Uint8Array([0xff, 0x80]), utf8("b\n\ndata: c"), new Uint8Array([0xe6, 0x97]), utf8("\n\n")),
  "ends inside a character": join(utf8("data: 1\n\ndata: é"), new Uint8Array([0xe6, 0x97])),
};

describe("SseReader decodes reads as one UTF-8 stream", () => {
  for (const [name, bytes] of Object.entries(STREAMS)) {
    test(`${name}: every split into one, two or three reads gives the events of the whole stream`, () => {
      const want = reference(bytes);
      expect(want.length).toBeGreaterThan(0);
      expect(read([bytes])).toEqual(want);
      for (let i = 0; i <= bytes.length; i++) {
        expect(read([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(want);
        for (let j = i; j <= bytes.length; j += 3) expect(read([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)])).toEqual(want);
      }
      // one byte per read
      expect(read(Array.from(bytes, (_, k) => bytes.subarray(k, k + 1)))).toEqual(want);
    });
  }

  test("a BOM is stripped only at the start: later it is text", () => {
    expect(read([join(BOM, utf8("data: 1\n\n"))])).toEqual(["|1"]);
    expect(read([utf8("data: 1\n\n"), join(utf8("data: "), BOM, utf8("2\n\n"))])).toEqual(["|1", "|\uFEFF2"]);
  });
});
