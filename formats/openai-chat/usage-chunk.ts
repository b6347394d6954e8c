/**
 * The usage-only chunk of a Chat stream, for a native passthrough whose upstream sent none
 * (pipeline/add-usage-chunk.ts): OpenAI sends it, when the request says `stream_options.include_usage:
 * true`, as the last chunk before `data: [DONE]`, with `choices: []` and the reply's `usage`
 * (REFERENCE §6.2). Pure: byte searches and text.
 */
import type { Usage } from "../hub.ts";
import { isObj } from "../json.ts";
import { tryParseJson } from "../sse.ts";
import { indexOfBytes, lastIndexOfBytes } from "../index-of-bytes.ts";
import { usageToChat } from "./mapping.ts";

const LF = 10;
const CR = 13;
/** "data:" */
const DATA = [100, 97, 116, 97, 58];
/** "[DONE]" */
const DONE = [91, 68, 79, 78, 69, 93];
const text = new TextDecoder();

/** Whether `b` holds `word` at `at`. */
function holds(b: Uint8Array, at: number, word: ArrayLike<number>): boolean {
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

/** What {@link usageChunk} copies from the stream's last chunk with an id: its `id` (non-empty), `created`, `model`, `system_fingerprint`. */
export interface ChunkHead {
  id: string;
  created?: number;
  model?: string;
  system_fingerprint?: string;
  /** `"id":` and the id as JSON writes it (`"id":"chatcmpl-1"`): how {@link lastChunkHead} knows a chunk of the same id without a parse. */
  readonly idMember: Uint8Array;
}

/** `"id"`: a member name in JSON text, or a string value (then no colon follows it). */
const ID_KEY = new Uint8Array([34, 105, 100, 34]);
const utf8 = new TextEncoder();

/** Whether the JSON text of `b` from `j` is a colon then a non-empty string (`: "x…`, JSON whitespace allowed). */
function nonEmptyStringValue(b: Uint8Array, j: number): boolean {
  while (j < b.length && (b[j] === 32 || b[j] === 9 || b[j] === LF || b[j] === CR)) j++;
  if (b[j] !== 58) return false;
  j++;
  while (j < b.length && (b[j] === 32 || b[j] === 9)) j++;
  return b[j] === 34 && j + 1 < b.length && b[j + 1] !== 34;
}

/**
 * The head of the last `data: {…}` line in `bytes` (whole Chat events, as the passthrough tap forwards
 * them) whose JSON has a non-empty string `id`; `known` (the head found so far, undefined before the
 * first) when that line holds `known`'s id member as written (`"id":"…"`, no parse: the usual chunk of
 * a stream whose id does not change); undefined when no line has one. The official openai SDK's
 * `ChatCompletionStream` keeps the last chunk's id (it copies `id`, `model`, … of each chunk that has
 * an id into its result, the last read winning), so a usage chunk added after them carries the last. A line is parsed only when its
 * bytes hold a member `"id"` with a non-empty string value (a native search from the end of `bytes`; in
 * JSON text an unescaped `"id"` followed by a colon is a member name, of the chunk or of a nested
 * object such as a tool call, never text inside a string), so Azure's prompt-filter chunk (`"id":""`),
 * a chunk without an id and an SSE comment cost no parse; a line that passes and whose chunk has no
 * such `id` of its own (a tool call's id only) costs one and the lines before it are looked at. A
 * chunk split over several `data:` lines is not read.
 */
export function lastChunkHead(bytes: Uint8Array, known?: ChunkHead): ChunkHead | undefined {
  for (let i = lastIndexOfBytes(bytes, ID_KEY); i !== -1; ) {
    // the usual chunk: its own id, the last member named "id" of its line, the one known
    if (known !== undefined && holds(bytes, i, known.idMember)) return known;
    if (!nonEmptyStringValue(bytes, i + ID_KEY.length)) {
      i = lastIndexOfBytes(bytes, ID_KEY, i - 1);
      continue;
    }
    const start = Math.max(bytes.lastIndexOf(LF, i), bytes.lastIndexOf(CR, i)) + 1;
    let end = bytes.indexOf(LF, i);
    const cr = bytes.indexOf(CR, i);
    if (end === -1 || (cr !== -1 && cr < end)) end = cr;
    if (end === -1) end = bytes.length;
    if (holds(bytes, start, DATA)) {
      const v = bytes[start + 5] === 32 ? start + 6 : start + 5;
      if (known !== undefined && bytes[v] === 123) {
        const same = indexOfBytes(bytes, known.idMember, v);
        if (same !== -1 && same + known.idMember.length <= end) return known;
      }
      const p = bytes[v] === 123 ? tryParseJson(text.decode(bytes.subarray(v, end))) : undefined;
      if (isObj(p) && typeof p.id === "string" && p.id !== "") {
        const head: ChunkHead = { id: p.id, idMember: utf8.encode(`"id":${JSON.stringify(p.id)}`) };
        if (typeof p.created === "number") head.created = p.created;
        if (typeof p.model === "string") head.model = p.model;
        if (typeof p.system_fingerprint === "string") head.system_fingerprint = p.system_fingerprint;
        return head;
      }
    }
    i = lastIndexOfBytes(bytes, ID_KEY, start - 1);
  }
  return undefined;
}

/**
 * The usage-only chunk `data: {"id", "object": "chat.completion.chunk", "created", "model",
 * ["system_fingerprint",] "choices": [], "usage"}` + a blank line, its fields those of the stream's
 * last chunk with an id (`head`, {@link lastChunkHead}; a member it lacks is left out) and `usage`
 * written as mapping.ts `usageToChat` writes it (the translated Chat stream's usage chunk).
 */
export function usageChunk(head: Omit<ChunkHead, "idMember">, usage: Usage): string {
  return `data: ${JSON.stringify({ id: head.id, object: "chat.completion.chunk", created: head.created, model: head.model, system_fingerprint: head.system_fingerprint, choices: [], usage: usageToChat(usage) })}\n\n`;
}
