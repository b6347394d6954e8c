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
