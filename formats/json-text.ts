/**
 * Helpers for the client encoders that write JSON text by hand (the per-delta frames of a translated
 * stream). Pure functions; they run per stream event.
 */

/** Longest text {@link isPlainJsonText} scans; longer texts go through `JSON.stringify`. */
const PLAIN_SCAN_MAX = 256;

/**
 * Whether `JSON.stringify(s)` is `s` between two quotes: no character JSON escapes (a quote, a
 * backslash, a control character below U+0020, a lone surrogate; ECMA-262 QuoteJSONString). An
 * encoder then writes the quotes into its constant text around `s` instead of calling
 * `JSON.stringify` (~20 ns less per short delta, and no extra string piece). Texts longer than 256
 * characters answer false (the native scan is faster there); so does a surrogate pair, which is
 * valid but rare enough to leave to `JSON.stringify`.
 */
export function isPlainJsonText(s: string): boolean {
  const n = s.length;
  if (n > PLAIN_SCAN_MAX) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** Where {@link flat} keeps its `indexOf` results, so that the optimising compiler cannot drop the call. */
let resolved = 0;

/**
 * `s` as one flat string. A string built by concatenation is a rope in JavaScriptCore, and every
 * rope a later concatenation puts it in walks its pieces again when that is encoded; a constant that
 * goes into every frame of a reply is flattened once here (`indexOf` resolves a rope in place). The
 * result of `indexOf` is kept: unused, JavaScriptCore's optimising tiers (DFG, FTL) drop the call as
 * having no effect, and in optimised code the rope stayed a rope (docs/performance.md item 152).
 */
export function flat(s: string): string {
  resolved ^= s.indexOf("\u0000");
  return s;
}

/**
 * `JSON.stringify(s)` for a string: `s` between quotes when {@link isPlainJsonText} says JSON escapes
 * nothing in it (a minted id, always), else `JSON.stringify`'s text. Same text either way.
 */
export function jsonString(s: string): string {
  return isPlainJsonText(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * `JSON.stringify(n)` for a number: its `String` form when finite (the same Number-to-String text JSON
 * writes), `null` otherwise (what JSON writes for NaN and the infinities).
 */
export function jsonNumber(n: number): string {
  return Number.isFinite(n) ? `${n}` : "null";
}
