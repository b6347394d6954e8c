/** The command line's plain-text tables (`usage`, `calls list`, `keys list`). */
import { visible } from "./terminal.ts";

/** Longest cell printed in a column other than the last (a client's model name can be any length; `--json` has it whole). */
const CELL_MAX = 64;

/** What a cut keeps whole: an escape {@link visible} wrote (`\u001b`, `\n`…), else one code point (a surrogate pair is one). */
const UNIT = /\\u[0-9a-fA-F]{4}|\\[bfnrt]|[\s\S]/gu;

/**
 * `cell` (already {@link visible}) cut to at most {@link CELL_MAX} code points, its last one `…`, when
 * it is longer: cut between code points and never inside an escape, so an emoji does not become U+FFFD
 * and `\u001b` does not read as a stray `\u00`.
 */
export function cutCell(cell: string): string {
  if (cell.length <= CELL_MAX || [...cell].length <= CELL_MAX) return cell; // UTF-16 units are never fewer
  let points = 0;
  let end = 0;
  for (const m of cell.matchAll(UNIT)) {
    const n = m[0].length === 2 && m[0].codePointAt(0)! > 0xffff ? 1 : m[0].length;
    if (points + n > CELL_MAX - 1) return cell.slice(0, end) + "…";
    points += n;
    end += m[0].length;
  }
  return cell;
}

/**
 * A plain-text table: columns padded to their widest cell, cells of all but the last column cut at
 * {@link CELL_MAX} code points with `…` ({@link cutCell}). A cell's control characters (a client's CR/LF,
 * ESC…) are escaped ({@link visible}) before it is measured and cut, so a row stays one line.
 */
export function table(head: string[], rows: unknown[][]): string {
  const cut = (c: string, i: number) => (i < head.length - 1 ? cutCell(c) : c);
  const cells = [head, ...rows.map((r) => r.map((c, i) => cut(visible(c === undefined || c === null || c === "" ? "-" : String(c)), i)))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd()).join("\n");
}
