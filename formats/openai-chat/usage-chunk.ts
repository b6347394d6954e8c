/**
 * The usage-only chunk of a Chat stream, for a native passthrough whose upstream sent none
 * (pipeline/add-usage-chunk.ts): OpenAI sends it, when the request says `stream_options.include_usage:
 * true`, as the last chunk before `data: [DONE]`, with `choices: []` and the reply's `usage`
 * (REFERENCE §6.2). Pure: byte searches and text.
 */
import type { Usage } from "../hub.ts";
import { isObj } from "../json.ts";
import { tryParseJson } from "../sse.ts";
import { holdsBytesAt, indexOfBytes, lastIndexOfBytes } from "../index-of-bytes.ts";
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
export interface HeadFields {
  id: string;
  created?: number;
  model?: string;
  system_fingerprint?: string;
}

/**
 * One member of a chunk's head as the line it was read from wrote it, for {@link lastChunkHead}'s
 * no-parse compare: `"name":` and the value's JSON (`"created":7`, `"model":"gpt-x"`, with the separator
 * that line had). `number`: the value is not a string, so what follows it must end it (`"created":7` is
 * no match in `"created":71`).
 */
interface HeadMember {
  readonly bytes: Uint8Array;
  readonly number: boolean;
}

/** A head and how its line wrote it: what {@link lastChunkHead} returns and takes back as `known`. */
export interface ChunkHead extends HeadFields {
  /** `"id":` and the id as JSON writes it (`"id":"chatcmpl-1"`): how {@link lastChunkHead} finds a chunk of the same id without a parse. */
  readonly idMember: Uint8Array;
  /**
   * The line's bytes from the byte before its first head member (`id`, `created`, `model`,
   * `system_fingerprint`) to the byte after its last (`{"id":"c-1","object":"chat.completion.chunk","created":7,"model":"gpt-x","system_fingerprint":"fp_1",`
   * in OpenAI's order; `,"created":…,"id":…,"model":…,"system_fingerprint":…,` in llama.cpp's), when
   * no `"choices"` lies between them; a later line holding these bytes around its id member holds the
   * same members (native compares; the byte after a number ends it). `idAt`: where `idMember` begins in them.
   */
  readonly span: Uint8Array | undefined;
  readonly idAt: number;
  /** `created`, `model`, `system_fingerprint` as the line wrote them, those it had (the compare when the span's does not hold). */
  readonly present: readonly HeadMember[];
  /** `"name":` of each of them it lacked: a later line that has one is parsed. */
  readonly absent: readonly Uint8Array[];
}

/** `"id"`: a member name in JSON text, or a string value (then no colon follows it). */
const ID_KEY = new Uint8Array([34, 105, 100, 34]);
/** A line feed, to search for natively. */
const LF_BYTE = new Uint8Array([LF]);
/** `"choices"` */
const CHOICES_KEY = new Uint8Array([34, 99, 104, 111, 105, 99, 101, 115, 34]);
const utf8 = new TextEncoder();
/** The head members other than `id` a usage chunk copies (what the openai SDK's result takes from the last chunk with an id). */
const HEAD_NAMES = ["created", "model", "system_fingerprint"] as const;
/** A member no JSON text holds (a NUL byte): a value with no byte form to compare (an object or array). */
const NEVER: HeadMember = { bytes: new Uint8Array([0]), number: false };

/** Whether the JSON text of `b` from `j` is a colon then a non-empty string (`: "x…`, JSON whitespace allowed). */
function nonEmptyStringValue(b: Uint8Array, j: number): boolean {
  while (j < b.length && (b[j] === 32 || b[j] === 9 || b[j] === LF || b[j] === CR)) j++;
  if (b[j] !== 58) return false;
  j++;
  while (j < b.length && (b[j] === 32 || b[j] === 9)) j++;
  return b[j] === 34 && j + 1 < b.length && b[j + 1] !== 34;
}

/** Where the line holding offset `i` of `b` begins and ends (its first byte; the offset of its LF or CR, or `b.length`). */
function lineAround(b: Uint8Array, i: number): [number, number] {
  const start = Math.max(b.lastIndexOf(LF, i), b.lastIndexOf(CR, i)) + 1;
  let end = b.indexOf(LF, i);
  const cr = b.indexOf(CR, i);
  if (end === -1 || (cr !== -1 && cr < end)) end = cr;
  return [start, end === -1 ? b.length : end];
}

/** Where `m` is in the line `b[start, end)` (its first match from `start`, a number's value ended there), or -1. */
function memberAt(b: Uint8Array, m: HeadMember, start: number, end: number): number {
  const at = indexOfBytes(b, m.bytes, start);
  if (at === -1 || at + m.bytes.length > end) return -1;
  if (m.number) {
    const next = b[at + m.bytes.length];
    // `,` `}` or JSON whitespace: not a digit, `.`, `e`
    if (next !== 44 && next !== 125 && next !== 32 && next !== 9) return -1;
  }
  return at;
}

/**
 * Whether the line of `b` that holds `known.idMember` at `idAt` holds the rest of `known`'s head as
 * written and no head member `known` lacked, without a parse: `known.span` compared at the id (the
 * usual chunk), else each member looked for in the line (a server that puts other members between
 * them). A member written otherwise than JSON.stringify writes it (a `\u` escape, `7.0`) only costs a
 * parse. A member of the same name and value in a nested object would pass for the chunk's own; Chat
 * chunks have none.
 */
function sameHead(b: Uint8Array, idAt: number, known: ChunkHead): boolean {
  const from = idAt - known.idAt;
  const spanHolds = known.span !== undefined && holdsBytesAt(b, from, known.span);
  if (spanHolds && known.absent.length === 0) return true;
  if (!spanHolds) {
    const [start, end] = lineAround(b, idAt);
    for (const m of known.present) if (memberAt(b, m, start, end) === -1) return false;
  }
  if (known.absent.length === 0) return true;
  // a member the known head lacked, looked for after the span when it begins with its object's `{`, else
  // from the line's start (after an LF; a CR-only line's start is before it: a find there only costs a parse)
  const start = spanHolds && known.span![0] === 123 ? from + known.span!.length : lastIndexOfBytes(b, LF_BYTE, idAt) + 1;
  for (const key of known.absent) {
    const at = indexOfBytes(b, key, start);
    if (at !== -1 && at < lineAround(b, idAt)[1]) return false;
  }
  return true;
}

/**
 * The head of the chunk `p`, parsed from the line `b[v, end)` (`v` its `{`) that wrote its members
 * `"name"`, `sep`, value (`sep` `:` or `: `).
 */
function headOf(p: Record<string, unknown> & { id: string }, sep: string, b: Uint8Array, v: number, end: number): ChunkHead {
  const idMember = utf8.encode(`"id"${sep}${JSON.stringify(p.id)}`);
  const present: HeadMember[] = [];
  const absent: Uint8Array[] = [];
  for (const name of HEAD_NAMES) {
    const value = p[name];
    if (!(name in p)) absent.push(utf8.encode(`"${name}"${sep}`));
    else if (value === null || typeof value !== "object") present.push({ bytes: utf8.encode(`"${name}"${sep}${JSON.stringify(value)}`), number: typeof value !== "string" });
    else present.push(NEVER);
  }
  // the span: from the byte before the first member to the byte after the last, when each is found and no "choices" is between
  const idPos = indexOfBytes(b, idMember, v);
  let lo = idPos;
  let hi = idPos + idMember.length;
  for (const m of present) {
    const at = memberAt(b, m, v, end);
    if (at === -1) lo = -1;
    else if (lo !== -1) {
      lo = Math.min(lo, at);
      hi = Math.max(hi, at + m.bytes.length);
    }
  }
  const choices = lo === -1 ? -1 : indexOfBytes(b, CHOICES_KEY, lo);
  const spanned = idPos !== -1 && idPos < end && lo > v && hi < end && (choices === -1 || choices >= hi);
  const head: ChunkHead = { id: p.id, idMember, span: spanned ? b.slice(lo - 1, hi + 1) : undefined, idAt: spanned ? idPos - lo + 1 : 0, present, absent };
  if (typeof p.created === "number") head.created = p.created;
  if (typeof p.model === "string") head.model = p.model;
  if (typeof p.system_fingerprint === "string") head.system_fingerprint = p.system_fingerprint;
  return head;
}

/**
 * The head of the last `data: {…}` line in `bytes` (whole Chat events, as the passthrough tap forwards
 * them) whose JSON has a non-empty string `id`; `known` (the head found so far, undefined before the
 * first) when that line holds `known`'s id member and its `created`, `model` and `system_fingerprint`
 * members as they were written, and none it lacked (byte compares, no parse: the usual chunk of a
 * stream whose head does not change; {@link sameHead}); undefined when no line has one. The official
 * openai SDK's `ChatCompletionStream` keeps the last chunk's head (it copies `id`, `created`, `model`,
 * … of each chunk that has an id into its result, the last read winning), so a usage chunk added after
 * them carries the last, however the reads fell: a line of the known id whose `created` (a server that
 * stamps each chunk), `model` or fingerprint changed, or that has one the known head lacked, is parsed.
 * A line is parsed only when its bytes hold a member `"id"` with a non-empty string value (a native
 * search from the end of `bytes`; in JSON text an unescaped `"id"` followed by a colon is a member name,
 * of the chunk or of a nested object such as a tool call, never text inside a string), so Azure's
 * prompt-filter chunk (`"id":""`), a chunk without an id and an SSE comment cost no parse; a line that
 * passes and whose chunk has no such `id` of its own (a tool call's id only) costs one and the lines
 * before it are looked at. A chunk split over several `data:` lines is not read. Members are compared
 * with the separator the parsed line had after `"id"` (`"id":"…"`, or `"id": "…"` as Python's
 * `json.dumps` writes).
 */
export function lastChunkHead(bytes: Uint8Array, known?: ChunkHead): ChunkHead | undefined {
  for (let i = lastIndexOfBytes(bytes, ID_KEY); i !== -1; ) {
    // the usual chunk: its own id, the last member named "id" of its line, the one known, and the rest of its head as known
    if (known !== undefined && holds(bytes, i, known.idMember) && sameHead(bytes, i, known)) return known;
    if (!nonEmptyStringValue(bytes, i + ID_KEY.length)) {
      i = lastIndexOfBytes(bytes, ID_KEY, i - 1);
      continue;
    }
    const [start, end] = lineAround(bytes, i);
    if (holds(bytes, start, DATA)) {
      const v = bytes[start + 5] === 32 ? start + 6 : start + 5;
      if (known !== undefined && bytes[v] === 123) {
        const same = indexOfBytes(bytes, known.idMember, v);
        if (same !== -1 && same + known.idMember.length <= end && sameHead(bytes, same, known)) return known;
      }
      const p = bytes[v] === 123 ? tryParseJson(text.decode(bytes.subarray(v, end))) : undefined;
      if (isObj(p) && typeof p.id === "string" && p.id !== "") {
        // the separator after this "id" (a member name, nonEmptyStringValue: a colon, JSON whitespace), up to its value's quote
        let q = i + ID_KEY.length;
        while (q < end && bytes[q] !== 34) q++;
        return headOf(p as Record<string, unknown> & { id: string }, text.decode(bytes.subarray(i + ID_KEY.length, q)), bytes, v, end);
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
export function usageChunk(head: HeadFields, usage: Usage): string {
  return `data: ${JSON.stringify({ id: head.id, object: "chat.completion.chunk", created: head.created, model: head.model, system_fingerprint: head.system_fingerprint, choices: [], usage: usageToChat(usage) })}\n\n`;
}
