/**
 * How deep a JSON text nests, checked on its bytes before it is parsed (SPEC G-4: a body the gateway
 * cannot handle is a 400, not a stalled event loop). JavaScriptCore's `JSON.parse` takes 100,000
 * levels, but `JSON.stringify` of a value nested beyond ~26,000 levels takes 0.5–1.8 s of CPU before it
 * succeeds or runs out of stack (measured with Bun 1.4.5, 2026-12-02), and every request of the process
 * waits meanwhile; recursive walks of a body (redaction, schema cleaning, translation) have the same
 * limit. No request of an LLM client nests anywhere near {@link MAX_JSON_DEPTH}.
 */

/** Levels of arrays and objects a request body may nest (the body object itself is level 1). */
export const MAX_JSON_DEPTH = 1000;

/**
 * Whether the JSON text `json` (UTF-8 bytes, or a string) opens more than `limit` arrays and objects
 * inside each other. Brackets inside strings do not count. Malformed text is measured as far as it goes
 * (the parser rejects it afterwards either way).
 *
 * Cost: a text with at most `limit` `[` and `{` cannot nest deeper, and counting them is native
 * `indexOf` calls (memchr on bytes), one per bracket: ~5 µs for Claude Code's 93 KB tool-use turn,
 * which has 189. Only a text with more brackets is walked character by character (~1 ns each).
 */
export function nestsDeeperThan(json: Uint8Array | string, limit: number = MAX_JSON_DEPTH): boolean {
  // Every level takes at least two characters.
  if (json.length <= 2 * limit) return false;
  if (typeof json === "string") {
    if (countInString(json, "[", limit) + countInString(json, "{", limit) <= limit) return false;
    return maxDepth((k) => json.charCodeAt(k), json.length, limit) > limit;
  }
  if (countInBytes(json, OPEN_ARRAY, limit) + countInBytes(json, OPEN_OBJECT, limit) <= limit) return false;
  return maxDepth((k) => json[k]!, json.length, limit) > limit;
}

/** Occurrences of the byte `what` in `bytes` (native `indexOf`, one call each), counted up to `limit` + 1. */
function countInBytes(bytes: Uint8Array, what: number, limit: number): number {
  let n = 0;
  for (let i = bytes.indexOf(what); i !== -1 && n <= limit; i = bytes.indexOf(what, i + 1)) n++;
  return n;
}

/** Occurrences of `what` in `text` (native `indexOf`, one call each), counted up to `limit` + 1. */
function countInString(text: string, what: string, limit: number): number {
  let n = 0;
  for (let i = text.indexOf(what); i !== -1 && n <= limit; i = text.indexOf(what, i + 1)) n++;
  return n;
}

const OPEN_ARRAY = 0x5b; // [
const OPEN_OBJECT = 0x7b; // {

/** The deepest nesting of arrays and objects outside strings, stopping once it passes `stopAbove`. */
function maxDepth(at: (i: number) => number, length: number, stopAbove: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < length; i++) {
    const c = at(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max && (max = depth) > stopAbove) return max;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return max;
}
