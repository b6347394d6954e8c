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
  // Gemini frames its events with CRLF: split by the reader itself as the same lines with LF ends.
  "CRLF framing": utf8('data: {"candidates":[{"content":{"parts":[{"text":"日本"}]}}]}\r\n\r\nevent: x\r\ndata: 2\r\n\r\n: note\r\ndata: 3\r\ndata: 4\r\n\r\ndata: 5\r\n\r\n'),
  "CRLF, then a lone CR": utf8("data: 1\r\n\r\ndata: 2\r\rdata: 3\r\n\r\n"),
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

/**
 * The reader splits LF-framed text itself and hands anything else to eventsource-parser (formats/sse.ts,
 * docs/performance.md item 132): whatever the stream's shapes and reads, its events (name, data, and how
 * the quick look saw them) are the parser's for the whole stream.
 */
describe("SseReader's own splitter reads as eventsource-parser does", () => {
  /** `text` cut into reads of random length (half 1–5 characters, half 1–400), as a socket may hand them. */
  function randomReads(text: string, next: (n: number) => number): string[] {
    const reads: string[] = [];
    for (let at = 0; at < text.length; ) {
      const len = 1 + next(next(2) === 0 ? 5 : 400);
      reads.push(text.slice(at, at + len));
      at += len;
    }
    return reads;
  }

  /** A deterministic generator (the same streams every run). */
  function rng(seed: number) {
    let x = seed >>> 0 || 1;
    return (n: number) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
  }
  const PIECES = [
    "data: {\"a\":1}\n\n",
    "data:{\"b\":2}\n\n",
    "data: \n\n",
    "data:\n\n",
    "event: message_start\ndata: {\"x\":1}\n\n",
    "event:\ndata: no-name\n\n",
    "event:ping\ndata:{}\n\n",
    "data: one\ndata: two\n\n",
    ": comment\n\n",
    ": keep-alive\ndata: after a comment\n\n",
    "id: 7\ndata: with id\n\n",
    "retry: 100\ndata: with retry\n\n",
    "data: before id\nid: 8\n\n",
    "<p>no field</p>\ndata: html before\n\n",
    "data\n\n",
    "\n",
    "\n\n\n",
    "data: line\r\n\r\n",
    "data: cr\r\r",
    "event: x\r\ndata: y\r\n\r\n",
    "data: ü 日本 🎉\n\n",
    "\uFEFFdata: mid-stream BOM\n\n",
    "data: 1\nevent: late-name\n\n",
    "event: a\nevent: b\ndata: two names\n\n",
    "data: " + "L".repeat(20_000) + "\n\n",
    "data: unterminated",
  ];
  function reference(text: string): string[] {
    const out: string[] = [];
    const parser = createParser({ onEvent: (ev) => out.push(`${ev.event ?? ""}|${ev.data}`) });
    parser.feed(text);
    parser.feed("\n\n");
    return out;
  }
  function readText(reads: string[], quick: boolean): string[] {
    const out: string[] = [];
    const reader = new SseReader(
      (ev) => out.push(`${ev.event ?? ""}|${ev.data}`),
      undefined,
      quick ? (s, a, b) => (s.charCodeAt(a) === 123 ? (out.push(`|${s.slice(a, b)}`), true) : false) : undefined,
      // The named look takes the events whose name starts with "m" (message_start among the pieces), as the Messages tap does.
      quick ? (s, n, m, a, b) => (s.charCodeAt(n) === 109 ? (out.push(`${s.slice(n, m)}|${s.slice(a, b)}`), true) : false) : undefined,
    );
    for (const r of reads) reader.pushText(r);
    reader.end();
    return out;
  }

  test("600 generated streams, each read whole, in random reads and with a quick look", () => {
    const next = rng(132);
    for (let k = 0; k < 600; k++) {
      const count = 1 + next(8);
      let text = k % 7 === 0 ? "\uFEFF" : "";
      for (let i = 0; i < count; i++) text += PIECES[next(k % 3 === 0 ? PIECES.length : PIECES.length - 8)];
      const want = reference(text);
      expect(readText([text], false)).toEqual(want);
      expect(readText([text], true)).toEqual(want);
      const reads = randomReads(text, next);
      expect(readText(reads, true)).toEqual(want);
    }
  });

  test("400 generated CRLF-framed streams (Gemini's framing; some with a line end of another kind), each read whole and in random reads", () => {
    const next = rng(300);
    const crlfPieces = [...PIECES, "event: message_delta\ndata: {}\n\n", "event:m\ndata: short name\n\n"].filter((p) => !p.includes("\r") && !p.includes("\uFEFF")).map((p) => p.replaceAll("\n", "\r\n"));
    const others = ["data: lf\n\n", "data: cr\r\r", "data: mixed\r\n\n", "\n", "\r", ": x\r\n\n"];
    for (let k = 0; k < 400; k++) {
      const count = 1 + next(8);
      let text = "";
      for (let i = 0; i < count; i++) text += k % 4 === 3 && next(4) === 0 ? others[next(others.length)] : crlfPieces[next(crlfPieces.length)];
      const want = reference(text);
      expect(readText([text], false)).toEqual(want);
      expect(readText([text], true)).toEqual(want);
      const reads = randomReads(text, next);
      expect(readText(reads, true)).toEqual(want);
      expect(readText(reads, false)).toEqual(want);
    }
  });

  test("a BOM later in the stream is text, also where the parser takes over", () => {
    expect(readText(["data: 1\n\n", "\uFEFF: c\n\n", "\uFEFFdata: 2\n\ndata: 3\n\n"], false)).toEqual(reference("data: 1\n\n\uFEFF: c\n\n\uFEFFdata: 2\n\ndata: 3\n\n"));
    expect(readText(["data: 1\n\n", "\uFEFFdata: 2\r\n\r\n"], false)).toEqual(["|1"]);
    expect(readText(["\uFEFFdata: 1\n\n"], false)).toEqual(["|1"]);
  });
});
