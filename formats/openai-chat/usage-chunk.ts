/**
 * The usage-only chunk of a Chat stream, for a native passthrough whose upstream sent none
 * (pipeline/add-usage-chunk.ts): OpenAI sends it, when the request says `stream_options.include_usage:
 * true`, as the last chunk before `data: [DONE]`, with `choices: []` and the reply's `usage`
 * (REFERENCE §6.2). Pure: byte searches and text.
 */
import type { Usage } from "../hub.ts";
import { isObj } from "../json.ts";
import { tryParseJson } from "../sse.ts";
import { indexOfBytes } from "../index-of-bytes.ts";
import { usageToChat } from "./mapping.ts";

const LF = 10;
const CR = 13;
/** "data:" */
const DATA = [100, 97, 116, 97, 58];
/** "[DONE]" */
const DONE = [91, 68, 79, 78, 69, 93];
const text = new TextDecoder();

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

/** What {@link usageChunk} copies from the stream's first chunk with an id: its `id` (non-empty), `created`, `model`, `system_fingerprint`. */
export interface ChunkHead {
  id: string;
  created?: number;
  model?: string;
  system_fingerprint?: string;
}

/** `"id"`: a member name in JSON text, or a string value (then no colon follows it). */
const ID_KEY = new Uint8Array([34, 105, 100, 34]);

/** Whether the JSON text of `b` from `j` is a colon then a non-empty string (`: "x…`, JSON whitespace allowed). */
function nonEmptyStringValue(b: Uint8Array, j: number): boolean {
  while (j < b.length && (b[j] === 32 || b[j] === 9 || b[j] === LF || b[j] === CR)) j++;
  if (b[j] !== 58) return false;
  j++;
  while (j < b.length && (b[j] === 32 || b[j] === 9)) j++;
  return b[j] === 34 && j + 1 < b.length && b[j + 1] !== 34;
}

/**
 * The head of the first `data: {…}` line in `bytes` (whole Chat events, as the passthrough tap
 * forwards them) whose JSON has a non-empty string `id`; undefined when none has one. A line is parsed
 * only when its bytes hold a member `"id"` with a non-empty string value (a native search over all of
 * `bytes`; in JSON text an unescaped `"id"` followed by a colon is a member name, of the chunk or of a
 * nested object such as a tool call, never text inside a string), so Azure's prompt-filter chunk
 * (`"id":""`), a chunk without an id and an SSE comment cost no parse; a line that passes and whose
 * chunk has no such `id` of its own (a tool call's id only) costs one and is passed over. A chunk
 * split over several `data:` lines is not read.
 */
export function chunkHead(bytes: Uint8Array): ChunkHead | undefined {
  for (let i = indexOfBytes(bytes, ID_KEY); i !== -1; ) {
    if (!nonEmptyStringValue(bytes, i + ID_KEY.length)) {
      i = indexOfBytes(bytes, ID_KEY, i + 1);
      continue;
    }
    const start = Math.max(bytes.lastIndexOf(LF, i), bytes.lastIndexOf(CR, i)) + 1;
    let end = bytes.indexOf(LF, i);
    const cr = bytes.indexOf(CR, i);
    if (end === -1 || (cr !== -1 && cr < end)) end = cr;
    if (end === -1) end = bytes.length;
    if (holds(bytes, start, DATA)) {
      const v = bytes[start + 5] === 32 ? start + 6 : start + 5;
      const p = bytes[v] === 123 ? tryParseJson(text.decode(bytes.subarray(v, end))) : undefined;
      if (isObj(p) && typeof p.id === "string" && p.id !== "") {
        const head: ChunkHead = { id: p.id };
        if (typeof p.created === "number") head.created = p.created;
        if (typeof p.model === "string") head.model = p.model;
        if (typeof p.system_fingerprint === "string") head.system_fingerprint = p.system_fingerprint;
        return head;
      }
    }
    i = indexOfBytes(bytes, ID_KEY, end);
  }
  return undefined;
}

/**
 * The usage-only chunk `data: {"id", "object": "chat.completion.chunk", "created", "model",
 * ["system_fingerprint",] "choices": [], "usage"}` + a blank line, its fields those of the stream's
 * first chunk with an id (`head`, {@link chunkHead}; a member it lacks is left out) and `usage` written as mapping.ts `usageToChat` writes it (the
 * translated Chat stream's usage chunk).
 */
export function usageChunk(head: ChunkHead, usage: Usage): string {
  return `data: ${JSON.stringify({ id: head.id, object: "chat.completion.chunk", created: head.created, model: head.model, system_fingerprint: head.system_fingerprint, choices: [], usage: usageToChat(usage) })}\n\n`;
}
