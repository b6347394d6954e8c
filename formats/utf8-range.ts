/**
 * UTF-8 text of a range of a byte array without a view of the range: `TextDecoder.decode` takes a
 * `BufferSource`, so decoding [start, end) of a chunk made a `subarray` (a typed-array object) per call.
 */

/** Bun's native UTF-8 slice of a `Buffer`, which takes a plain `Uint8Array` as its receiver too. */
const utf8Slice = (Buffer.prototype as unknown as { utf8Slice(this: Uint8Array, start: number, end: number): string }).utf8Slice;

/**
 * The text `new TextDecoder("utf-8").decode(bytes.subarray(start, end))` gives (WHATWG UTF-8 decode:
 * each invalid sequence a U+FFFD, a leading byte-order mark dropped), without the subarray. `start` and
 * `end` are byte offsets, 0 ≤ start ≤ end ≤ bytes.length.
 */
export function utf8Range(bytes: Uint8Array, start: number, end: number): string {
  // TextDecoder's default (`ignoreBOM: false`) drops a leading EF BB BF; the Buffer slice keeps it.
  if (end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf) start += 3;
  return utf8Slice.call(bytes, start, end);
}

/**
 * The text `new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes.subarray(start, end))` gives:
 * {@link utf8Range} with a leading byte-order mark kept as text.
 */
export function utf8RangeWithBom(bytes: Uint8Array, start: number, end: number): string {
  return utf8Slice.call(bytes, start, end);
}
