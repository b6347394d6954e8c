/**
 * How deep a JSON text nests, checked on its bytes before it is parsed (SPEC G-4: a body the gateway
 * cannot handle is a 400, not a stalled event loop). JavaScriptCore's `JSON.parse` takes 100,000
 * levels, but `JSON.stringify` of a value nested beyond ~26,000 levels takes 0.5–1.8 s of CPU before it
 * succeeds or runs out of stack (measured with Bun 1.4.5, 2026-12-02), and every request of the process
 * waits meanwhile; recursive walks of a body (redaction, schema cleaning, translation) have the same
 * limit. No request of an LLM client nests anywhere near {@link MAX_JSON_DEPTH}.
 *
 * The reply side checks the same limit ({@link upstreamNestedTooDeep}) where the gateway would
 * serialise a parsed upstream value again, the only walk of a reply's values that depth makes costly:
 * a tool call's input or arguments object that a decoder (stream or whole reply) turns into arguments
 * text, or whose length a native reply's facts measure ({@link valueNestsDeeperThan}), and tool-call
 * arguments text a client encoder parses into an object ({@link checkArgumentsDepth}). Everything else
 * of a reply is read by property, never walked whole, and relayed as it came. `JSON.parse` itself is
 * iterative: 5,000,000 levels parse (~1 µs per level, measured 2026-12-03, the same order as as many
 * arrays side by side), so its cost follows the number of arrays and objects, which the bounds on one
 * event and one reply limit (64 MiB), not their depth; checking every event's or reply's text would
 * cost a bracket count on each one longer than 2,000 characters. A whole reply longer than
 * {@link DEPTH_CHECKED_BYTES} (1 MiB) is checked before it is parsed (pipeline/whole-reply-bound.ts
 * `nestsTooDeepToParse`), and so is one upstream SSE event's data ({@link checkEventDepth}, called by
 * formats/sse.ts `SseReader` and the Chat tap), where the count is small beside the parse.
 */

import { FormatError, hubError, type HubError } from "./hub.ts";

/** Levels of arrays and objects a JSON text may nest (the body object itself is level 1). */
export const MAX_JSON_DEPTH = 1000;

/**
 * Upstream JSON texts longer than this (bytes of a whole reply, characters of one SSE event's data) are
 * checked for nesting past {@link MAX_JSON_DEPTH} before they are parsed: 1 MiB. `JSON.parse` holds the
 * event loop ~0.2 µs for every level it opens (33.5 million nested arrays in 64 MiB: 6.8 s of CPU,
 * Bun 1.4.5, 2026-12-03); a text of at most 1 MiB nests at most 524,288 levels (~0.1 s), and the usual
 * one, far shorter, pays only a length compare.
 */
export const DEPTH_CHECKED_BYTES = 1024 * 1024;

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
    return textDepth(json, limit) > limit;
  }
  if (countInBytes(json, OPEN_ARRAY, limit) + countInBytes(json, OPEN_OBJECT, limit) <= limit) return false;
  return bytesDepth(json, limit) > limit;
}

/**
 * {@link maxDepth} of a text, and of bytes below: functions of their own, so that the reader each makes
 * (which holds `json`) does not make {@link nestsDeeperThan} allocate its scope (two objects, with its
 * default parameter) on every call, which returns early on nearly every body (JavaScriptCore makes a
 * function's captured variables at its entry: docs/performance.md item 255).
 */
function textDepth(json: string, limit: number): number {
  return maxDepth((k) => json.charCodeAt(k), json.length, limit);
}

function bytesDepth(json: Uint8Array, limit: number): number {
  return maxDepth((k) => json[k]!, json.length, limit);
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

/**
 * The failure of an upstream reply that nests arrays and objects more than {@link MAX_JSON_DEPTH}
 * levels deep (`what`: "a reply", "a stream event" or "tool-call arguments"): 502, code
 * `upstream_nested_too_deep`, an upstream error like a malformed event. Before the commit point it is a
 * failed attempt; after it, the format's in-band error.
 */
export function upstreamNestedTooDeep(what: string): HubError {
  return hubError("api_error", `The upstream sent ${what} nesting arrays and objects more than ${MAX_JSON_DEPTH} levels deep; the gateway does not relay JSON that deep.`, {
    status: 502,
    code: "upstream_nested_too_deep",
  });
}

/**
 * Throws the FormatError of {@link upstreamNestedTooDeep} ("a stream event") when one upstream SSE
 * event's data is longer than {@link DEPTH_CHECKED_BYTES} characters and nests more than
 * {@link MAX_JSON_DEPTH} levels, before anything parses it: the bound a whole reply has
 * (pipeline/whole-reply-bound.ts), for the same text sent as one event. Costs a length compare for
 * every event of 1 MiB or less; a longer one costs a native search per bracket up to 1,001 of each
 * kind, then ~1 ns per character (a 64 MiB event: at most ~0.1–0.3 s, against the seconds its parse
 * would cost when it nests that deep).
 */
export function checkEventDepth(data: string): void {
  if (data.length > DEPTH_CHECKED_BYTES && nestsDeeperThan(data)) throw new FormatError(upstreamNestedTooDeep("a stream event"));
}

/**
 * Throws the FormatError of {@link upstreamNestedTooDeep} when a tool call's arguments (hub `tool_args`
 * JSON text, which reaches the gateway inside a string: the checks on a reply's or an event's text do
 * not count its brackets) nest more than {@link MAX_JSON_DEPTH} levels. A client encoder calls it before
 * it parses the arguments into an object it serialises again (Gemini `args`, Anthropic `input`, a
 * Responses `local_shell_call` action). Costs a length check for arguments of up to 2,000 characters.
 */
export function checkArgumentsDepth(json: string): void {
  if (nestsDeeperThan(json)) throw new FormatError(upstreamNestedTooDeep("tool-call arguments"));
}

/**
 * Whether the parsed JSON value `value` nests arrays and objects more than `limit` levels (the value
 * itself, when it is one, is level 1). Iterative (no recursion to run out of stack), stopping at the
 * first level past `limit`; costs a visit of each array and object, fewer than the `JSON.stringify` of
 * the same value that it guards.
 */
export function valueNestsDeeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop() as Record<string, unknown> | unknown[];
    const d = depths.pop()!;
    if (d > limit) return true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        if (typeof x === "object" && x !== null) {
          stack.push(x);
          depths.push(d + 1);
        }
      }
    } else {
      for (const k in v) {
        const x = v[k];
        if (typeof x === "object" && x !== null) {
          stack.push(x);
          depths.push(d + 1);
        }
      }
    }
  }
  return false;
}

/**
 * `JSON.stringify` of a tool call's input or arguments object parsed from an upstream reply (the hub
 * carries arguments as JSON text); throws the FormatError of {@link upstreamNestedTooDeep} instead when
 * it nests more than {@link MAX_JSON_DEPTH} levels. For a whole reply's decode (`decodeResponse`, whose
 * FormatError makes the reply a failed attempt).
 */
export function argumentsText(value: unknown): string {
  if (valueNestsDeeperThan(value)) throw new FormatError(upstreamNestedTooDeep("tool-call arguments"));
  return JSON.stringify(value);
}
