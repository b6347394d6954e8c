import { describe, expect, test } from "bun:test";
import { utf8Range, utf8RangeWithBom } from "../../formats/utf8-range.ts";
import { SseReader, type SseEvent } from "../../formats/sse.ts";

/** Byte values that make valid, cut and invalid UTF-8 sequences and byte-order marks when mixed. */
const PIECES = [0x61, 0x7b, 0x0a, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xed, 0xa0, 0xbf, 0xff, 0xc0, 0xef, 0xbb, 0xbf];

function randomBytes(n: number, seed: { s: number }): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    seed.s = (seed.s * 1103515245 + 12345) & 0x7fffffff;
    out[i] = PIECES[seed.s % PIECES.length]!;
  }
  return out;
}

describe("utf8Range", () => {
  test("a range reads as TextDecoder reads its subarray: invalid sequences, cut characters, a leading byte-order mark", () => {
    const stripping = new TextDecoder("utf-8");
    const keeping = new TextDecoder("utf-8", { ignoreBOM: true });
    const seed = { s: 7 };
    for (let i = 0; i < 5000; i++) {
      const bytes = randomBytes(2 + (i % 14), seed);
      const start = i % 3;
      const end = bytes.length - (i % 2);
      expect(utf8Range(bytes, start, end)).toBe(stripping.decode(bytes.subarray(start, end)));
      expect(utf8RangeWithBom(bytes, start, end)).toBe(keeping.decode(bytes.subarray(start, end)));
    }
    const bom = new Uint8Array([0x20, 0xef, 0xbb, 0xbf, 0x7b, 0x7d]);
    expect(utf8Range(bom, 1, 6)).toBe("{}");
    expect(utf8RangeWithBom(bom, 1, 6)).toBe("\ufeff{}");
  });
});

describe("SseReader.pushRange", () => {
  test("events read from ranges are those read from the ranges' subarrays", () => {
    const text = '\ufeffevent: a\ndata: {"x":"é€😀"}\n\ndata: 1\n\n\ufeffdata: 2\n\nevent: b\ndata: {"y":3}\n\n';
    const bytes = new TextEncoder().encode(text);
    for (const cuts of [[0, bytes.length], [0, 3, 30, bytes.length], [0, 1, 2, 25, 26, 50, bytes.length], [0, 5, 40, 41, bytes.length]]) {
      const viaRange: SseEvent[] = [];
      const viaPush: SseEvent[] = [];
      const a = new SseReader((ev) => viaRange.push({ ...ev }));
      const b = new SseReader((ev) => viaPush.push({ ...ev }));
      for (let i = 0; i + 1 < cuts.length; i++) {
        a.pushRange(bytes, cuts[i]!, cuts[i + 1]!);
        b.push(bytes.subarray(cuts[i]!, cuts[i + 1]!));
      }
      a.end();
      b.end();
      expect(viaRange).toEqual(viaPush);
      expect(viaRange.length).toBe(3); // a byte-order mark past the start is text: its line is no `data:` field
    }
  });
});
