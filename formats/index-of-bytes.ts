/**
 * A byte search over a plain `Uint8Array` without a `Buffer` view of it: Bun's `Buffer#indexOf` takes a
 * plain `Uint8Array` as its receiver (as its `utf8Slice` does: formats/utf8-range.ts), so a search makes
 * no view object (nor the `ArrayBuffer` object that reading `.buffer` makes) per call
 * (docs/performance.md items 265, 294).
 */

const bufferIndexOf = Buffer.prototype.indexOf as (this: Uint8Array, value: Uint8Array, byteOffset?: number) => number;

/** The offset of the first `needle` in `hay` at or after `from` (a byte offset), or -1 (native search; no decode). */
export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  return bufferIndexOf.call(hay, needle, from);
}

const bufferLastIndexOf = Buffer.prototype.lastIndexOf as (this: Uint8Array, value: Uint8Array, byteOffset?: number) => number;

/** The offset of the last `needle` in `hay` starting at or before `from` (a byte offset; default the end), or -1 (native search; no decode). */
export function lastIndexOfBytes(hay: Uint8Array, needle: Uint8Array, from = hay.length): number {
  return from < 0 ? -1 : bufferLastIndexOf.call(hay, needle, from);
}

const bufferCompare = Buffer.prototype.compare as (this: Uint8Array, target: Uint8Array, targetStart: number, targetEnd: number, sourceStart: number, sourceEnd: number) => number;

/** Whether `hay` holds the bytes of `word` at the byte offset `at` (false when they would pass its end or `at` < 0): one native compare, no view made. */
export function holdsBytesAt(hay: Uint8Array, at: number, word: Uint8Array): boolean {
  return at >= 0 && at + word.length <= hay.length && bufferCompare.call(hay, word, 0, word.length, at, at + word.length) === 0;
}
