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
  /** `json` as UTF-8, made on the first {@link RequestText} check against this entry. */
  bytes?: Bytes;
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

/**
 * The JSON text of a request's tool list: from the memo when an equal list was written before, else
 * written now (and remembered when its size is within the bounds). With `text`, the request's body as
 * it arrived, a list that mirrors the body's own top-level `tools` ({@link mirrors}) is found by the
 * body's bytes instead: the remembered text at the place of that member ({@link RequestText.holdsTools})
 * decides the hit without the member-by-member compare (docs/performance.md item 164).
 */
export function toolsJson(tools: unknown[], text?: RequestText): string {
  const sig = signature(tools);
  const hit = memo.get(sig);
  if (hit !== undefined && ((text !== undefined && text.holdsTools(hit, tools)) || matches(hit.tools, tools))) {
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
 * Whether `a` and `b`, plain JSON data, have the same JSON text because they are the same values: each
 * object or array of `a` is the one of `b` at its place, or has the same members (names in the same
 * order) or elements, themselves mirrors; primitives are equal (`===`: NaN never is, a miss). Walks
 * only what `a` built anew around `b`'s values (a Responses echo's tool shells around the request's
 * own schemas), not what they share. Allocates an array of member names per object walked.
 */
export function mirrors(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!mirrors(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const names = Object.keys(b);
  let i = 0;
  for (const k in a) {
    if (i >= names.length || k !== names[i] || !mirrors((a as Json)[k], (b as Json)[k])) return false;
    i++;
  }
  return i === names.length;
}

/**
 * Node's `Buffer` as Bun provides it, typed by the calls made here (native `compare` of byte ranges):
 * this module is also type-checked for the dashboard's browser code, without Node's types
 * (test/dashboard/typecheck.test.ts), which imports its types only.
 */
interface Bytes extends Uint8Array {
  compare(target: Uint8Array, targetStart: number, targetEnd: number, sourceStart: number, sourceEnd: number): number;
}
const Bytes = (globalThis as unknown as { Buffer: { from(text: string): Bytes; from(buffer: ArrayBufferLike, offset: number, length: number): Bytes } }).Buffer;

/** The UTF-8 of `"tools":`. */
const TOOLS_KEY_TEXT = '"tools":';
const TOOLS_KEY = Bytes.from(TOOLS_KEY_TEXT);
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * A request body as it arrived and the object `JSON.parse` made of it (docs/performance.md items 164,
 * 167): `source` must be the text `body` was parsed from, as UTF-8 bytes (the HTTP body the guard read)
 * or as the string itself (a Responses WebSocket `response.create` frame, src/http/responses-socket.ts:
 * `body` is then the whole frame, whose `tools` the request's body shares), and nothing may have
 * changed `body` since (the guard sets both; redaction, which edits the body in place, writes the bytes
 * again: the same pair a native passthrough relies on when it forwards the bytes of the body it read).
 * Lets the tools memo find a request's own tool list by its text ({@link holdsTools}).
 */
export class RequestText {
  /** Where the top-level `tools` value ends in `source` (its last byte or code unit + 1); -1 when not in the layout looked for; undefined until looked for. */
  private toolsEnd: number | undefined;
  private view: Bytes | undefined;

  constructor(
    readonly body: Json,
    readonly source: Uint8Array | string,
  ) {}

  /**
   * Whether `tools`' JSON text is the entry's: `tools` mirrors the body's own `tools` ({@link mirrors})
   * and the bytes hold `"tools":` followed by the entry's text right before the members that come
   * after `tools` (written as `JSON.stringify` writes them) and the body's closing brace, at its end.
   *
   * Why that is a proof: the bytes are valid JSON (they parsed), and such a text read backwards from its
   * last byte splits into the same tokens as read forwards (a quote is escaped exactly when an odd run
   * of backslashes precedes it, and a backslash occurs only inside strings). Read backwards, the end is
   * the top-level object's closing brace, then the members after `tools` (whole values, none named
   * `tools`: they are `Object.keys` of the body), then a comma, then the entry's text (a whole value,
   * since it is `JSON.stringify` output), then `:` and the string `"tools"`, whose opening quote follows
   * a comma or `{` (so it is not escaped): the last top-level member named `tools`, the one `JSON.parse`
   * keeps. So the body's `tools` was parsed from the entry's text, and `JSON.stringify` of what
   * `JSON.parse` made of its own output writes that output again; `tools` mirrors it, so it writes the
   * same. A body sent in another layout (whitespace, escapes, members in another order) is a miss here
   * and is compared as before; never a wrong hit. A string source is read the same way by UTF-16 code
   * units (the remembered text is `JSON.stringify` output, so equal code units are the same tokens).
   */
  holdsTools(entry: { json: string; bytes?: Bytes }, tools: unknown[]): boolean {
    if (!mirrors(tools, this.body.tools)) return false;
    const end = this.toolsEnd ??= this.findToolsEnd();
    if (end < 0) return false;
    const s = this.source;
    if (typeof s === "string") {
      const json = entry.json;
      const start = end - json.length;
      const key = start - TOOLS_KEY_TEXT.length;
      if (key < 1) return false;
      const c = s.charCodeAt(key - 1);
      return (c === COMMA || c === OPEN_BRACE) && s.startsWith(TOOLS_KEY_TEXT, key) && s.startsWith(json, start);
    }
    const want = (entry.bytes ??= Bytes.from(entry.json));
    const start = end - want.length;
    const b = s;
    const key = start - TOOLS_KEY.length;
    if (key < 1 || (b[key - 1] !== COMMA && b[key - 1] !== OPEN_BRACE)) return false;
    const v = this.view!;
    return v.compare(TOOLS_KEY, 0, TOOLS_KEY.length, key, start) === 0 && v.compare(want, 0, want.length, start, end) === 0;
  }

  /** Where the top-level `tools` value ends, read from the end of the source (see {@link holdsTools}), or -1. */
  private findToolsEnd(): number {
    const body = this.body;
    const b = this.source;
    const n = b.length;
    const last = typeof b === "string" ? b.charCodeAt(n - 1) : b[n - 1];
    if (n < 2 || last !== CLOSE_BRACE || !Array.isArray(body.tools)) return -1;
    const names = Object.keys(body);
    const at = names.indexOf("tools");
    const after: Json = Object.create(null); // a `__proto__` member stays a member (membersJson)
    for (let i = at + 1; i < names.length; i++) after[names[i]!] = body[names[i]!];
    const text = JSON.stringify(after);
    if (typeof b === "string") {
      if (text.length === 2) return n - 1;
      const rest = text.slice(1, -1);
      const comma = n - 1 - rest.length - 1;
      return comma >= 0 && b.charCodeAt(comma) === COMMA && b.startsWith(rest, comma + 1) ? comma : -1;
    }
    this.view = Bytes.from(b.buffer, b.byteOffset, n);
    // `tools` the last member: its value ends at the closing brace.
    if (text.length === 2) return n - 1;
    const rest = Bytes.from(text.slice(1, -1));
    const comma = n - 1 - rest.length - 1;
    if (comma < 0 || b[comma] !== COMMA || this.view.compare(rest, 0, rest.length, comma + 1, n - 1) !== 0) return -1;
    return comma;
  }
}

/**
 * `JSON.stringify(body)` for a plain JSON object, with a non-empty top-level `tools` array's JSON from
 * the memo: an upstream request body built or tidied for a provider, in any of the four formats (a
 * Chat tool's name and description in `function`, the others' on the tool), the same tools every turn
 * of a coding agent (issue 17, docs/performance.md item 115). A body whose tools' descriptions are
 * shorter than 1,024 characters in all is one `JSON.stringify`. Throws what `JSON.stringify` throws
 * (a cycle, a BigInt).
 */
export function bodyJson(body: Json, text?: RequestText): string {
  // Tools whose descriptions are short are seldom large enough to be remembered: one stringify.
  const tools = body.tools;
  if (!Array.isArray(tools) || describedChars(tools) < BODY_MEMO_MIN_DESCRIBED) return JSON.stringify(body);
  return `{${membersJson(body, text)}}`;
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
export function membersJson(o: Json, text?: RequestText): string {
  const tools = o.tools;
  if (!Array.isArray(tools) || tools.length === 0) return JSON.stringify(o).slice(1, -1);
  // The members before `tools` and those after it written as two objects (in order; JSON.stringify
  // leaves out members it has no text for, as it does in one object), the tools' text between them.
  const keys = Object.keys(o);
  const at = keys.indexOf("tools");
  // Without a prototype, so that a member named `__proto__` (JSON.parse makes it an own member) is
  // written as one too, not taken as the object's prototype and left out.
  const before: Json = Object.create(null);
  const after: Json = Object.create(null);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (i < at) before[k] = o[k];
    else if (i > at) after[k] = o[k];
  }
  const b = JSON.stringify(before);
  const a = JSON.stringify(after);
  return `${b.length > 2 ? b.slice(1, -1) + "," : ""}"tools":${toolsJson(tools, text)}${a.length > 2 ? "," + a.slice(1, -1) : ""}`;
}

/** Tool lists remembered now (for tests). */
export function toolsMemoSize(): number {
  return memo.size;
}
