/**
 * Writes JSON text with a large tool list's text remembered across requests (issue 17): a coding agent
 * resends the same tools every turn (Claude Code ~47 KB, Codex ~18 KB), and writing them is the costly
 * part of `JSON.stringify` (nested objects: ~13 µs for Codex's 18 KB), while the members around them
 * (messages, `previous_response_id`, settings) change from turn to turn. So the JSON text of a few
 * distinct tool lists is kept and reused when a later list is equal, compared member by member with a
 * snapshot read back from the remembered text: a hit gives exactly the text `JSON.stringify` would
 * write, a difference anywhere a miss (never a wrong hit).
 *
 * Format-neutral: used for every format's upstream request body built or tidied for a provider
 * ({@link bodyJson}, pipeline/translate.ts; docs/performance.md item 115) and for the request echo of a
 * Responses reply ({@link membersJson}, formats/openai-responses/echo-memo.ts; items 103 and 114). One
 * memo serves both: the same list, as a client sent it and as built for a provider, may be remembered
 * in two forms. A tool's name and description are read from the tool or, for a Chat tool, from its
 * `function`.
 *
 * Bounds: at most {@link TOOLS_MEMO_ENTRIES} tool lists whose text is {@link TOOLS_MEMO_MIN_CHARS} to
 * {@link TOOLS_MEMO_MAX_CHARS} characters (smaller ones cost less to write than to compare; larger ones
 * are not kept), the least recently used dropped first; an entry holds its text and the values read
 * back from it (never a request's own objects).
 */

type Json = Record<string, any>;

/** Tool lists remembered at most (a Responses client's echo and its upstream body's list may differ: two each). */
export const TOOLS_MEMO_ENTRIES = 8;
/** Smallest tool list text remembered (characters). */
export const TOOLS_MEMO_MIN_CHARS = 4096;
/** Largest tool list text remembered (characters). */
export const TOOLS_MEMO_MAX_CHARS = 256 * 1024;

interface Entry {
  tools: Snapshot;
  json: string;
}

/** Remembered tool lists by {@link signature}, least recently used first (Map insertion order). */
const memo = new Map<number, Entry>();

/**
 * A number two equal tool lists share, cheap to compute (their count and the lengths of each tool's
 * type, name and description): unequal lists usually differ in it, so they are seldom compared whole.
 */
function signature(tools: unknown[]): number {
  let sig = tools.length;
  for (const t of tools) {
    if (typeof t !== "object" || t === null) continue;
    // A Chat tool keeps its name and description in `function`.
    const fn = (t as Json).function;
    const { type } = t as Json;
    const { name, description } = typeof fn === "object" && fn !== null ? (fn as Json) : (t as Json);
    sig = (Math.imul(sig, 31) + (typeof name === "string" ? name.length : 0) + (typeof description === "string" ? description.length << 8 : 0) + (typeof type === "string" ? type.length << 20 : 0)) | 0;
  }
  return sig;
}

/** An object of a remembered tool list: its member names in order and their values. */
export class Members {
  constructor(
    readonly keys: string[],
    readonly values: Snapshot[],
  ) {}
}

/** A remembered tool list's values: primitives as they are, arrays of snapshots, objects as {@link Members}. */
export type Snapshot = string | number | boolean | null | Snapshot[] | Members;

/** The snapshot of JSON data as `JSON.parse` made it (member names listed once here, not at every compare). */
export function snapshotOf(v: unknown): Snapshot {
  if (typeof v !== "object" || v === null) return v as Snapshot;
  if (Array.isArray(v)) return v.map(snapshotOf);
  const keys = Object.keys(v);
  return new Members(keys, keys.map((k) => snapshotOf((v as Json)[k])));
}

/**
 * Whether `JSON.stringify(v)` writes the text the snapshot was read from, for `v` made of JSON data
 * (what `JSON.parse` makes, and plain objects and arrays of it: a request's tools): the same
 * primitives, arrays and members in the same order (`for…in` order, which is the order
 * `JSON.stringify` writes for plain objects). A value JSON drops or changes (undefined, a function,
 * NaN, Infinity, an array hole) compares unequal: a miss, never a wrong hit. Allocates nothing.
 */
export function matches(s: Snapshot, v: unknown): boolean {
  if (s instanceof Members) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
    const keys = s.keys;
    let i = 0;
    for (const k in v) {
      if (i >= keys.length || k !== keys[i] || !matches(s.values[i]!, (v as Json)[k])) return false;
      i++;
    }
    return i === keys.length;
  }
  if (Array.isArray(s)) {
    if (!Array.isArray(v) || v.length !== s.length) return false;
    for (let i = 0; i < s.length; i++) if (!matches(s[i]!, v[i])) return false;
    return true;
  }
  return s === v;
}

/** The JSON text of a request's tool list: from the memo when an equal list was written before, else written now (and remembered when its size is within the bounds). */
export function toolsJson(tools: unknown[]): string {
  const sig = signature(tools);
  const hit = memo.get(sig);
  if (hit !== undefined && matches(hit.tools, tools)) {
    // Now the newest: the lists in use stay while others come and go.
    memo.delete(sig);
    memo.set(sig, hit);
    return hit.json;
  }
  const json = JSON.stringify(tools);
  if (json.length >= TOOLS_MEMO_MIN_CHARS && json.length <= TOOLS_MEMO_MAX_CHARS) {
    memo.delete(sig);
    if (memo.size >= TOOLS_MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
    // Kept as its own copy, read back from the text: equal to the text whatever later happens to the
    // request's values (a member that JSON drops or changes, e.g. undefined, then only misses).
    memo.set(sig, { tools: snapshotOf(JSON.parse(json)), json });
  }
  return json;
}

/**
 * `JSON.stringify(body)` for a plain JSON object, with a non-empty top-level `tools` array's JSON from
 * the memo: an upstream request body built or tidied for a provider, in any of the four formats (a
 * Chat tool's name and description in `function`, the others' on the tool), the same tools every turn
 * of a coding agent (issue 17, docs/performance.md item 115). A body whose tools' descriptions are
 * shorter than 1,024 characters in all is one `JSON.stringify`. Throws what `JSON.stringify` throws
 * (a cycle, a BigInt).
 */
export function bodyJson(body: Json): string {
  // Tools whose descriptions are short are seldom large enough to be remembered: one stringify.
  const tools = body.tools;
  if (!Array.isArray(tools) || describedChars(tools) < BODY_MEMO_MIN_DESCRIBED) return JSON.stringify(body);
  return `{${membersJson(body)}}`;
}

/** Description characters of a tool list below which {@link bodyJson} writes the body in one stringify. */
const BODY_MEMO_MIN_DESCRIBED = 1024;

/** The characters of a tool list's descriptions (a Chat tool's in `function`). */
function describedChars(tools: unknown[]): number {
  let n = 0;
  for (const t of tools) {
    if (typeof t !== "object" || t === null) continue;
    const fn = (t as Json).function;
    const d = (typeof fn === "object" && fn !== null ? (fn as Json) : (t as Json)).description;
    if (typeof d === "string") n += d.length;
  }
  return n;
}

/**
 * The members of `JSON.stringify(o)` without its braces, for a plain JSON object `o`: the same text,
 * with a non-empty top-level `tools` array's JSON from the memo (the Responses echo's members,
 * formats/openai-responses/echo-memo.ts, and {@link bodyJson}'s). "" for an object without members.
 */
export function membersJson(o: Json): string {
  const tools = o.tools;
  if (!Array.isArray(tools) || tools.length === 0) return JSON.stringify(o).slice(1, -1);
  // The members before `tools` and those after it written as two objects (in order; JSON.stringify
  // leaves out members it has no text for, as it does in one object), the tools' text between them.
  const keys = Object.keys(o);
  const at = keys.indexOf("tools");
  const before: Json = {};
  const after: Json = {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (i < at) before[k] = o[k];
    else if (i > at) after[k] = o[k];
  }
  const b = JSON.stringify(before);
  const a = JSON.stringify(after);
  return `${b.length > 2 ? b.slice(1, -1) + "," : ""}"tools":${toolsJson(tools)}${a.length > 2 ? "," + a.slice(1, -1) : ""}`;
}

/** Tool lists remembered now (for tests). */
export function toolsMemoSize(): number {
  return memo.size;
}
