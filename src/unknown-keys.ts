/**
 * The message for an object's unknown keys, shared by the config loader's mappings
 * (src/config/errors.ts `strictObj`) and the admin API's JSON bodies (src/admin/replies.ts
 * `strictBody`), and the "did you mean" guess both use. No I/O.
 */
import type * as v from "valibot";

/** Edit distance counting a swap of two neighbours as one edit (optimal string alignment), for "did you mean". */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The closest of `candidates` to `word` when it is plausibly a typo of it, else undefined. */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  if (best === undefined) return undefined;
  const limit = best.length <= 3 ? 1 : best.length <= 6 ? 2 : 3;
  return bestD <= limit ? best : undefined;
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
