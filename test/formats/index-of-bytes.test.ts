import { expect, test } from "bun:test";
import { indexOfBytes } from "../../formats/index-of-bytes.ts";

const enc = (s: string) => new TextEncoder().encode(s);

test("indexOfBytes finds a needle in a plain Uint8Array and in a view into a larger buffer, from an offset, as Buffer#indexOf does", () => {
  const hay = enc('{"a":"sy|x","b":"sy|y"}');
  const needle = enc('"sy|');
  expect(indexOfBytes(hay, needle)).toBe(5);
  expect(indexOfBytes(hay, needle, 6)).toBe(16);
  expect(indexOfBytes(hay, needle, 17)).toBe(-1);
  expect(indexOfBytes(hay, enc("zz"))).toBe(-1);
  // A view at an offset into a larger buffer: positions are the view's own.
  const big = new Uint8Array(hay.length + 7);
  big.set(enc("sy|sy|x"), 0);
  big.set(hay, 7);
  const view = big.subarray(7);
  expect(indexOfBytes(view, needle)).toBe(5);
  expect(indexOfBytes(view, needle, 6)).toBe(16);
  expect(indexOfBytes(view, enc("sy|sy|"))).toBe(-1); // before the view's start: not seen
});
