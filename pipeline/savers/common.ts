/**
 * Shared pieces of the tool-result compression rules (SPEC S-1): the rule contract, elision markers
 * and number formatting. Every rule is a pure function of its input lines: the same text always
 * compresses to the same bytes (prompt caches of OpenAI-style providers depend on stable prefixes).
 */

/** What a rule made of a tool result's body. */
export interface RuleOutput {
  /** The shortened body (lines joined with `\n`). */
  text: string;
  /** What was elided, for the one-line note appended to the result, e.g. `312 similar lines`. */
  elided: string[];
}

/** One compression rule: recognises its kind of output and shortens it, or returns undefined. */
export interface SaverRule {
  /** Short name recorded in the route trace (`diff`, `git_status`, `compiler`, `search`, `listing`, `tree`, `log`). */
  readonly name: RuleName;
  /** `lines` is the body split on `\n` (no `\r`). Returns undefined when the text is not this kind. */
  apply(lines: string[]): RuleOutput | undefined;
}

/** The rules, by name. */
export type RuleName = "diff" | "git_status" | "compiler" | "search" | "listing" | "tree" | "log";

/** `1,234` style grouping, locale-independent (deterministic across machines). */
export function count(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `1 line` / `2 lines`. */
export function plural(n: number, one: string, many = one + "s"): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** An inline elision marker line, e.g. `… 312 similar lines elided`, with optional indentation. */
export function marker(what: string, indent = ""): string {
  return `${indent}… ${what} elided`;
}

/** Lines longer than this are cut (minified code, lockfile JSON). */
export const LONG_LINE = 400;
/** How much of a long line is kept. */
export const LONG_LINE_KEEP = 240;

/** Cuts a line longer than {@link LONG_LINE}; returns it unchanged otherwise. */
export function cutLine(line: string): string {
  if (line.length <= LONG_LINE) return line;
  return `${line.slice(0, LONG_LINE_KEEP)}… (+${count(line.length - LONG_LINE_KEEP)} chars)`;
}

/** Lines {@link mostly} samples before it bails out. */
const SAMPLE = 40;

/**
 * Whether at least `minShare` (0…1) of the non-empty lines satisfy `pred`, and at least `minHits` do.
 * Stops as soon as the answer is known, or when the first {@link SAMPLE} non-empty lines fall well
 * short of the share (unrecognised text costs little).
 */
export function mostly(lines: string[], pred: (l: string) => boolean, minShare: number, minHits = 1): boolean {
  let nonEmpty = 0;
  for (const l of lines) if (l.length > 0 && l.trim() !== "") nonEmpty++;
  const maxMisses = Math.floor(nonEmpty * (1 - minShare));
  let hits = 0;
  let misses = 0;
  for (const l of lines) {
    if (l.length === 0 || l.trim() === "") continue;
    if (pred(l)) hits++;
    else if (++misses > maxMisses) return false;
    // Outputs these rules read are uniform: a sample of the first lines already tells (cheap bail-out).
    if (hits + misses === SAMPLE && hits < SAMPLE * minShare * 0.8) return false;
  }
  return hits >= minHits;
}

/** Count of non-empty lines satisfying `pred`, and of non-empty lines overall. */
export function share(lines: string[], pred: (l: string) => boolean): { hits: number; nonEmpty: number } {
  let hits = 0;
  let nonEmpty = 0;
  for (const l of lines) {
    if (l.trim() === "") continue;
    nonEmpty++;
    if (pred(l)) hits++;
  }
  return { hits, nonEmpty };
}

/**
 * Codex's own cut of a long command output (0.171.0, its binary's strings and newuser13's tryout): the
 * middle of the output replaced by `…77892 chars truncated…` (or `tokens`), which joins the line before
 * the cut with the line after it. A rule keeps such a line as it is rather than giving up on the text.
 */
export const CLIENT_CUT = /…\d+ (?:chars|tokens) truncated…/;
