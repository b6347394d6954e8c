/** The command line's plain-text tables (`usage`, `calls list`, `keys list`). */
import { visible } from "./terminal.ts";

/** Longest cell printed in a column other than the last (a client's model name can be any length; `--json` has it whole). */
const CELL_MAX = 64;

/**
 * A plain-text table: columns padded to their widest cell, cells of all but the last column cut at
 * {@link CELL_MAX} with `…`. A cell's control characters (a client's CR/LF, ESC…) are escaped
 * ({@link visible}) before it is measured and cut, so a row stays one line.
 */
export function table(head: string[], rows: unknown[][]): string {
  const cut = (c: string, i: number) => (i < head.length - 1 && c.length > CELL_MAX ? c.slice(0, CELL_MAX - 1) + "…" : c);
  const cells = [head, ...rows.map((r) => r.map((c, i) => cut(visible(c === undefined || c === null || c === "" ? "-" : String(c)), i)))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd()).join("\n");
}
