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

/**
 * The head of the first `data: {…}` line in `bytes` (whole Chat events, as the passthrough tap
 * forwards them) whose JSON has a non-empty string `id`; undefined when none of the lines looked at
 * has one. Azure's prompt-filter chunk (`"id":""`) and an SSE comment are passed over, as is a line
 * longer than `limit` bytes (not parsed). `search.left`: how many `data: {` lines may still be looked
 * at, lowered by each one looked at (parsed or passed over), so a stream read in several outputs is
 * looked at as the same lines in the same order as one read whole; nothing is read once it is 0.
 */
export function chunkHead(bytes: Uint8Array, limit: number, search: { left: number }): ChunkHead | undefined {
  for (let at = 0; at < bytes.length && search.left > 0; ) {
    let end = at;
    while (end < bytes.length && bytes[end] !== LF && bytes[end] !== CR) end++;
    if (holds(bytes, at, DATA)) {
      const v = bytes[at + 5] === 32 ? at + 6 : at + 5;
      if (bytes[v] === 123) {
        search.left--;
        const p = end - v <= limit ? tryParseJson(text.decode(bytes.subarray(v, end))) : undefined;
        if (isObj(p) && typeof p.id === "string" && p.id !== "") {
          const head: ChunkHead = { id: p.id };
          if (typeof p.created === "number") head.created = p.created;
          if (typeof p.model === "string") head.model = p.model;
          if (typeof p.system_fingerprint === "string") head.system_fingerprint = p.system_fingerprint;
          return head;
        }
      }
    }
    while (end < bytes.length && (bytes[end] === LF || bytes[end] === CR)) end++;
    at = end;
  }
  return undefined;
}

/**
 * The usage-only chunk `data: {"id", "object": "chat.completion.chunk", "created", "model",
 * ["system_fingerprint",] "choices": [], "usage"}` + a blank line, its fields those of the stream's
 * first chunk with an id (`head`, {@link chunkHead}; a member it lacks is left out, and all but
 * `object` when there is none) and `usage` written as mapping.ts `usageToChat` writes it (the
 * translated Chat stream's usage chunk).
 */
export function usageChunk(head: ChunkHead | undefined, usage: Usage): string {
  return `data: ${JSON.stringify({ id: head?.id, object: "chat.completion.chunk", created: head?.created, model: head?.model, system_fingerprint: head?.system_fingerprint, choices: [], usage: usageToChat(usage) })}\n\n`;
}
