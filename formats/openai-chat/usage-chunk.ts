/**
 * The usage-only chunk of a Chat stream, for a native passthrough whose upstream sent none
 * (pipeline/add-usage-chunk.ts): OpenAI sends it, when the request says `stream_options.include_usage:
 * true`, as the last chunk before `data: [DONE]`, with `choices: []` and the reply's `usage`
 * (REFERENCE §6.2). Pure: byte searches and text.
 */
import type { Usage } from "../hub.ts";
import { isObj } from "../json.ts";
import { tryParseJson } from "../sse.ts";
import { usageToChat } from "./mapping.ts";

const LF = 10;
const CR = 13;
/** "data:" */
const DATA = [100, 97, 116, 97, 58];
/** "[DONE]" */
const DONE = [91, 68, 79, 78, 69, 93];

/** Whether `b` holds `word` at `at`. */
function holds(b: Uint8Array, at: number, word: readonly number[]): boolean {
  if (at + word.length > b.length) return false;
  for (let i = 0; i < word.length; i++) if (b[at + i] !== word[i]) return false;
  return true;
}

/**
 * Where the `data: [DONE]` line begins in `bytes` (SSE text of whole Chat events, as the passthrough
 * tap forwards them): the first line that is `data:`, one optional space and `[DONE]`, at the start of
 * `bytes` or after a line end; -1 when there is none. A JSON payload cannot hold a raw line end, so such
 * a line is never inside a chunk's text.
 */
export function doneLineAt(bytes: Uint8Array): number {
  for (let at = 0; at < bytes.length; ) {
    if (holds(bytes, at, DATA)) {
      const v = bytes[at + 5] === 32 ? at + 6 : at + 5;
      if (holds(bytes, v, DONE) && (v + 6 === bytes.length || bytes[v + 6] === LF || bytes[v + 6] === CR)) return at;
    }
    // the next line
    let i = at;
    while (i < bytes.length && bytes[i] !== LF && bytes[i] !== CR) i++;
    while (i < bytes.length && (bytes[i] === LF || bytes[i] === CR)) i++;
    at = i;
  }
  return -1;
}

/**
 * The data of the first `data: {…}` line in `bytes` (the first events a Chat stream forwarded), for
 * {@link usageChunk}'s `id`, `created`, `model` and `system_fingerprint`; undefined when none begins
 * within the first `limit` bytes or its line is longer than that. A view of `bytes`, not a copy.
 */
export function firstChunkLine(bytes: Uint8Array, limit: number): Uint8Array | undefined {
  const n = Math.min(bytes.length, limit);
  for (let at = 0; at < n; ) {
    let end = at;
    while (end < bytes.length && bytes[end] !== LF && bytes[end] !== CR) end++;
    if (holds(bytes, at, DATA)) {
      const v = bytes[at + 5] === 32 ? at + 6 : at + 5;
      if (bytes[v] === 123 && end < bytes.length && end - v <= limit) return bytes.subarray(v, end);
    }
    while (end < bytes.length && (bytes[end] === LF || bytes[end] === CR)) end++;
    at = end;
  }
  return undefined;
}

/**
 * The usage-only chunk `data: {"id", "object": "chat.completion.chunk", "created", "model",
 * ["system_fingerprint",] "choices": [], "usage"}` + a blank line, its fields those of the stream's
 * first chunk (`first`: its JSON text, {@link firstChunkLine}; a member it lacks is left out, as is
 * each when it is not JSON) and `usage` written as mapping.ts `usageToChat` writes it (the translated
 * Chat stream's usage chunk).
 */
export function usageChunk(first: string | undefined, usage: Usage): string {
  const p = first === undefined ? undefined : tryParseJson(first);
  const head: Record<string, unknown> = {};
  if (isObj(p)) {
    if (typeof p.id === "string") head.id = p.id;
    head.object = "chat.completion.chunk";
    if (typeof p.created === "number") head.created = p.created;
    if (typeof p.model === "string") head.model = p.model;
    if (typeof p.system_fingerprint === "string") head.system_fingerprint = p.system_fingerprint;
  } else head.object = "chat.completion.chunk";
  return `data: ${JSON.stringify({ ...head, choices: [], usage: usageToChat(usage) })}\n\n`;
}
