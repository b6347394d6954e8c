/**
 * A compiler diagnostic as the compiler rule reads it (compiler.ts for the GNU format, rustc.ts for
 * rustc's): its severity, its kind and the lines that belong to it.
 */

/** The warning's flag or check name at the end of its message: `[-Wunused-variable]`, `[readability-x]`. */
const FLAG = /\[([-\w=.,+]+)\]$/;

/** An error or a warning. */
export type Severity = "error" | "warning";

/** One diagnostic and the lines that belong to it (its echo, carets, notes). */
export interface Block {
  severity: Severity;
  /** Kind of a warning (its flag or its masked message); "" for an error. */
  kind: string;
  path: string;
  lines: string[];
  /** Holds an `In file included from …` line (before a note): kept verbatim, never collapsed. */
  pinned: boolean;
}

/** A warning's kind: its flag, or its message with quoted names and numbers masked. */
export function kindOf(message: string): string {
  const flag = FLAG.exec(message);
  if (flag) return `[${flag[1]}]`;
  return message.replace(/(['"‘`])[^'"’`]*['"’`]/g, "'…'").replace(/\d+/g, "#");
}
