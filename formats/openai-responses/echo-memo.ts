/**
 * The request echo's members as JSON text (issue 17, docs/performance.md items 103, 114 and 151): every
 * response object of a Responses reply repeats the request's `instructions`, tools and settings
 * (REFERENCE §3.2–3.3), and a client sends the same ones on every turn (Codex ~18 KB of tools, the
 * bench 1.6 KB of instructions). The tools' text comes from the format-neutral memo of
 * formats/write-body-json.ts (which also writes every format's upstream body), so equal tool lists are
 * written once across requests. The other members are remembered too, as the text around the two that
 * change from turn to turn: `previous_response_id` (a new id each turn over HTTP) and `tools` (their
 * own memo) are written into it each time; everything else is compared member by member with a
 * snapshot read back from the remembered text, as the tools memo compares (a hit gives exactly the
 * text `JSON.stringify` would write, a difference anywhere a miss, never a wrong hit).
 */
import { flat } from "../json-text.ts";
import { matches, membersJson, snapshotOf, toolsJson, type Members, type RequestText, type Snapshot } from "../write-body-json.ts";

type Json = Record<string, any>;

/** Echoes remembered at most (the most recent first): a few clients with their own instructions or settings. */
export const ECHO_MEMO_ENTRIES = 4;
/** Largest text of an echo's remembered members (characters); larger echoes are written each time. */
export const ECHO_MEMO_MAX_CHARS = 256 * 1024;

/**
 * One remembered echo: its member names in order, the snapshot of each member's value (undefined for
 * the two written each time), and the text around those two: `head` + `previous_response_id`'s JSON +
 * `middle` + the tools' JSON + `tail` is the echo's members text.
 */
interface Entry {
  keys: string[];
  values: (Snapshot | undefined)[];
  head: string;
  middle: string;
  tail: string;
}

/** Remembered echoes, the most recently used first. */
const memo: Entry[] = [];

/** Whether `echo` has the entry's members, in the same order, with equal values (the two written each time aside). */
function same(e: Entry, echo: Json): boolean {
  const { keys, values } = e;
  let i = 0;
  for (const k in echo) {
    if (i >= keys.length || k !== keys[i]) return false;
    const s = values[i];
    if (s !== undefined && !matches(s, echo[k])) return false;
    i++;
  }
  return i === keys.length;
}

/** The members of `JSON.stringify(o)` without braces, followed by a comma, or "" for an object without members. */
const membersOf = (t: string): string => (t.length > 2 ? t.slice(1, -1) + "," : "");

/**
 * The members of `JSON.stringify(echo)` (without its braces) followed by a comma, or "" for an echo
 * without members: the same text, with a non-empty `tools` array's JSON from the tools memo and the
 * other members from this module's memo when an equal echo was written before. `echo` is the
 * response echo of formats/openai-responses/response.ts `responseEcho` (plain JSON data). `text`, the
 * request's body as it arrived, lets the tools memo find tools that mirror the request's own by their
 * bytes (write-body-json.ts `RequestText`).
 */
export function echoMembers(echo: Json, text?: RequestText): string {
  const prev = echo.previous_response_id;
  const tools = echo.tools;
  // The two members written each time must be ones JSON writes (a string or null, an array).
  if ((typeof prev !== "string" && prev !== null) || !Array.isArray(tools)) return written(echo, text);
  for (let i = 0; i < memo.length; i++) {
    const e = memo[i]!;
    if (!same(e, echo)) continue;
    if (i > 0) {
      memo.splice(i, 1);
      memo.unshift(e);
    }
    return `${e.head}${JSON.stringify(prev)}${e.middle}${tools.length === 0 ? "[]" : toolsJson(tools, text)}${e.tail}`;
  }
  return remember(echo, prev, tools, text);
}

/** {@link echoMembers} without the memo of this module. */
function written(echo: Json, text?: RequestText): string {
  const members = membersJson(echo, text);
  return members.length > 0 ? members + "," : "";
}

/** Writes an echo not remembered yet and remembers it (when its shape and size allow). */
function remember(echo: Json, prev: string | null, tools: unknown[], text?: RequestText): string {
  const keys = Object.keys(echo);
  const p = keys.indexOf("previous_response_id");
  const t = keys.indexOf("tools");
  if (t < p) return written(echo, text);
  // The members before `previous_response_id`, between it and `tools`, and after `tools`, written as
  // three objects (JSON.stringify leaves out members it has no text for, as it does in one object).
  const parts: [Json, Json, Json] = [{}, {}, {}];
  for (let i = 0; i < keys.length; i++) {
    if (i === p || i === t) continue;
    parts[i < p ? 0 : i < t ? 1 : 2][keys[i]!] = echo[keys[i]!];
  }
  const texts = parts.map((o) => JSON.stringify(o));
  const head = membersOf(texts[0]!) + '"previous_response_id":';
  const middle = "," + membersOf(texts[1]!) + '"tools":';
  const tail = (texts[2]!.length > 2 ? "," + texts[2]!.slice(1, -1) : "") + ",";
  const members = `${head}${JSON.stringify(prev)}${middle}${tools.length === 0 ? "[]" : toolsJson(tools, text)}${tail}`;
  const snaps = head.length + middle.length + tail.length <= ECHO_MEMO_MAX_CHARS ? texts.map((x) => snapshotOf(JSON.parse(x)) as Members) : undefined;
  // An echo with a member JSON leaves out would never match its entry (it has a key the entry lacks): not kept.
  if (snaps !== undefined && snaps[0]!.keys.length + snaps[1]!.keys.length + snaps[2]!.keys.length === keys.length - 2) {
    // The snapshots are read back from the texts: equal to them whatever later happens to the request's values.
    const entry: Entry = {
      keys: [...snaps[0]!.keys, "previous_response_id", ...snaps[1]!.keys, "tools", ...snaps[2]!.keys],
      values: [...snaps[0]!.values, undefined, ...snaps[1]!.values, undefined, ...snaps[2]!.values],
      head: flat(head),
      middle: flat(middle),
      tail: flat(tail),
    };
    memo.unshift(entry);
    if (memo.length > ECHO_MEMO_ENTRIES) memo.pop();
  }
  return members;
}

/** Echoes remembered now (for tests). */
export function echoMemoSize(): number {
  return memo.length;
}
