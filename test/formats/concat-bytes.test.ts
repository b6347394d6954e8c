import { describe, expect, test } from "bun:test";
import { concatBytes } from "../../formats/sse.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const EMPTY = new Uint8Array(0);

describe("concatBytes", () => {
  test("a whole reply beside a driver's empty output is returned as it is, not copied", () => {
    const reply = bytes('data: {"choices":[]}\n\ndata: [DONE]\n\n');
    expect(concatBytes([reply, EMPTY])).toBe(reply);
    expect(concatBytes([EMPTY, reply])).toBe(reply);
    expect(concatBytes([EMPTY, reply, EMPTY], reply.byteLength)).toBe(reply);
  });

  test("a view keeps exactly its own bytes", () => {
    const whole = bytes("xxdata: a\n\nyy");
    const view = whole.subarray(2, 11);
    const out = concatBytes([EMPTY, view]);
    expect(out.byteLength).toBe(9);
    expect(text(out)).toBe("data: a\n\n");
  });

  test("several parts with bytes are joined in order into a new array", () => {
    const a = bytes("data: 1\n\n");
    const b = bytes("data: 2\n\n");
    const out = concatBytes([a, EMPTY, b]);
    expect(out).not.toBe(a);
    expect(text(out)).toBe("data: 1\n\ndata: 2\n\n");
    expect(text(concatBytes([a, b], a.byteLength + b.byteLength))).toBe("data: 1\n\ndata: 2\n\n");
  });

  test("no parts, or only empty ones, give an empty array", () => {
    expect(concatBytes([]).byteLength).toBe(0);
    expect(concatBytes([EMPTY, EMPTY]).byteLength).toBe(0);
  });
});
