/**
 * The message for an object's unknown keys, shared by the config loader's mappings
 * (src/config/errors.ts `strictObj`) and the admin API's JSON bodies (src/admin/replies.ts
 * `strictBody`), and the "did you mean" guess both use. No I/O.
 */
import type * as v from "valibot";

/**
 * Edit distance counting a swap of two neighbours as one edit (optimal string alignment), for "did you
 * mean", exact up to `cap`; above it, some number over `cap`. Only cells within `cap` of the diagonal
 * are computed (any other is more than `cap` edits away): time `a.length` × (2 `cap` + 1), three rows
 * of `b.length + 1` numbers.
 */
function distance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  const over = cap + 1;
  let before = new Array<number>(b.length + 1).fill(over); // row i - 2
  let prev = Array.from({ length: b.length + 1 }, (_, j) => Math.min(j, over)); // row i - 1
  let row = new Array<number>(b.length + 1).fill(over);
  for (let i = 1; i <= a.length; i++) {
    const lo = Math.max(1, i - cap);
    const hi = Math.min(b.length, i + cap);
    // The cells next to the band read as "too far" (this row's array last held row i - 3).
    row[lo - 1] = lo === 1 ? Math.min(i, over) : over;
    if (hi < b.length) row[hi + 1] = over;
    const ai = a.charCodeAt(i - 1);
    const aBefore = i > 1 ? a.charCodeAt(i - 2) : -1;
    for (let j = lo; j <= hi; j++) {
      const bj = b.charCodeAt(j - 1);
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (ai === bj ? 0 : 1));
      if (j > 1 && ai === b.charCodeAt(j - 2) && aBefore === bj) d = Math.min(d, before[j - 2]! + 1);
      row[j] = Math.min(d, over);
    }
    const oldest = before;
    before = prev;
    prev = row;
    row = oldest;
  }
  return prev[b.length];
}

/** The most edits a guess may be away from the word (for a candidate of `length` characters). */
const editsAllowed = (length: number) => (length <= 3 ? 1 : length <= 6 ? 2 : 3);
/** The most {@link editsAllowed} gives any candidate. */
const MAX_EDITS = 3;

/**
 * The closest of `candidates` to `word` when it is plausibly a typo of it (at most 1, 2 or 3 edits
 * away for a candidate of up to 3, 6 or more characters), else undefined. Of candidates equally close,
 * the one that shares the longest beginning with `word` (`acc` → `ac`, not `cc`; a typo keeps the
 * start more often than not), then the first. Distances are measured only
 * up to {@link MAX_EDITS}, so a hostile word (a 300,000-character alias target in an admin body) costs a
 * length comparison per candidate of another length, and a few operations per character for one of
 * about its length, instead of an edit-distance table of its length times theirs.
 */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const lc = c.toLowerCase();
    const d = distance(w, lc, MAX_EDITS);
    if (d < bestD || (d === bestD && sharedStart(w, lc) > sharedStart(w, best!.toLowerCase()))) {
      bestD = d;
      best = c;
    }
  }
  if (best === undefined) return undefined;
  return bestD <= editsAllowed(best.length) ? best : undefined;
}

/** How many characters `a` and `b` share at their start. */
function sharedStart(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** How the messages of {@link unknownKeysMessage} are worded. */
export interface UnknownKeysWording {
  /**
   * `"key"`, the config file's word: `unknown key "modle" in a combo target (did you mean "model"?);
   * allowed: model, account, …`. `"field"`, the admin API's: `unknown fields "colour", "owner"; a key
   * has the fields name, scopes, tag, limits`.
   */
  noun: "key" | "field";
  /** The object as the message names it: "a combo target", "a key". */
  what: string;
  /**
   * Every unknown key of the object (read from the issue's object), or only the issue's own (valibot
   * reports the first). The config loader reports one problem per path; an admin 400 has one message.
   */
  all: boolean;
}

/**
 * The message of a valibot `strict_object` issue for an unknown key (`issue.expected === "never"`):
 * names the unknown key(s), each quoted as JSON and cut at 40 characters, suggests the intended key
 * when a single one is unknown and looks like a typo ({@link suggest}), and lists `allowed` in order.
 */
export function unknownKeysMessage(issue: v.BaseIssue<unknown>, allowed: readonly string[], wording: UnknownKeysWording): string {
  const obj = wording.all ? issue.path?.[issue.path.length - 1]?.input : undefined;
  const unknown = obj && typeof obj === "object" ? Object.keys(obj).filter((k) => !allowed.includes(k)) : [String(issue.input)];
  const hint = unknown.length === 1 ? suggest(unknown[0], allowed) : undefined;
  const named = `unknown ${wording.noun}${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k)).join(", ")}`;
  const guess = hint ? ` (did you mean "${hint}"?)` : "";
  return wording.noun === "key"
    ? `${named} in ${wording.what}${guess}; allowed: ${allowed.join(", ")}`
    : `${named}${guess}; ${wording.what} has the fields ${allowed.join(", ")}`;
}
