/**
 * Compiler and linter diagnostics (gcc, clang, `cc` under make; any tool printing
 * `path:line[:col]: warning|error|note: message`, the GNU diagnostic format) for the tool-result
 * compressor (SPEC S-1; try17 T11: such output read as grep results lost the error that failed the
 * build).
 *
 * The output is read as blocks: a diagnostic line, the `In function …` / `In file included from …`
 * lines just before it, and the indented lines after it (gcc's `   10 |     int x;` source echo and
 * `      |     ^~~` caret lines, clang's caret lines), with a `note:` joining the block before it.
 * - Kept verbatim: every error block (`error:`, `fatal error:`) with its notes and context, the first
 *   {@link HEAD} blocks of each kind of warning, and every line that is not part of a block (the
 *   compiler command, `make: *** [Makefile:12: engine.o] Error 1`, `2 warnings and 1 error generated.`).
 * - Collapsed: the further warnings of a kind (a kind is the warning's flag, `[-Wunused-variable]`,
 *   or its message with quoted names and numbers masked), a run of them replaced by one marker line
 *   that counts them and their lines: `… 198 warnings elided (594 lines): 198 [-Wunused-variable], in
 *   src/engine.c`.
 * A line is never rewritten: what stays is byte for byte the compiler's.
 */
import { count, plural, type RuleOutput, type SaverRule } from "./common.ts";

/** Warning blocks of one kind kept before the rest of that kind is collapsed. */
const HEAD = 2;
/** Diagnostics needed before output is read as a compiler's. */
const MIN_DIAGNOSTICS = 5;

/** `path:line[:col]: [fatal ]error|warning|note|remark[ [code]]: text`. */
export const DIAGNOSTIC = /^([^\s:][^:\n]*):(\d+)(?::(\d+))?: (fatal error|error|warning|note|remark)(?:\[[\w-]+\])?: (.*)$/;
/** Lines gcc prints before a diagnostic to say where it is. */
const PRELUDE = /^(?:In file included from .*[:,]$|\s+from .*[:,]$|[^\s:][^:\n]*: (?:In |At )[^\n]*:$)/;
/** The warning's flag or check name at the end of its message: `[-Wunused-variable]`, `[readability-x]`. */
const FLAG = /\[([-\w=.,+]+)\]$/;

type Severity = "error" | "warning";

interface Block {
  severity: Severity;
  /** Kind of a warning (its flag or its masked message); "" for an error. */
  kind: string;
  path: string;
  lines: string[];
}

/** A warning's kind: its flag, or its message with quoted names and numbers masked. */
function kindOf(message: string): string {
  const flag = FLAG.exec(message);
  if (flag) return `[${flag[1]}]`;
  return message.replace(/(['"‘`])[^'"’`]*['"’`]/g, "'…'").replace(/\d+/g, "#");
}

/** Splits the output into kept lines and diagnostic blocks; undefined when it is not compiler output. */
function parse(lines: string[]): Array<string | Block> | undefined {
  let diagnostics = 0;
  for (const l of lines) if (l.includes(": ") && DIAGNOSTIC.test(l) && ++diagnostics >= MIN_DIAGNOSTICS) break;
  if (diagnostics < MIN_DIAGNOSTICS) return undefined;
  const items: Array<string | Block> = [];
  /** The block indented lines continue. */
  let current: Block | undefined;
  /** The block a `note:` joins: the last one, until a line of the build's own output. */
  let last: Block | undefined;
  let prelude: string[] = [];
  for (const l of lines) {
    const d = l.includes(": ") ? DIAGNOSTIC.exec(l) : null;
    if (d) {
      const sev = d[4];
      if (sev === "note" && last) {
        last.lines.push(...prelude, l);
        prelude = [];
        current = last;
        continue;
      }
      const severity: Severity = sev === "error" || sev === "fatal error" ? "error" : "warning";
      current = { severity, kind: severity === "error" ? "" : kindOf(d[5]), path: d[1], lines: [...prelude, l] };
      prelude = [];
      items.push(current);
      last = current;
      continue;
    }
    if (PRELUDE.test(l)) {
      prelude.push(l);
      current = undefined;
      continue;
    }
    if (current && prelude.length === 0 && /^\s/.test(l) && l.trim() !== "") {
      current.lines.push(l);
      continue;
    }
    // Anything else is the build's own output: kept where it is (a prelude not followed by a
    // diagnostic too).
    items.push(...prelude, l);
    prelude = [];
    current = undefined;
    last = undefined;
  }
  items.push(...prelude);
  return items;
}

/** The marker for a run of collapsed warnings. */
function runMarker(blocks: Block[]): string {
  const byKind = new Map<string, number>();
  const paths: string[] = [];
  let n = 0;
  for (const b of blocks) {
    byKind.set(b.kind, (byKind.get(b.kind) ?? 0) + 1);
    if (!paths.includes(b.path)) paths.push(b.path);
    n += b.lines.length;
  }
  const kinds = [...byKind].map(([k, c]) => `${count(c)} ${k}`).join(", ");
  const where = paths.length <= 3 ? paths.join(", ") : `${paths.slice(0, 3).join(", ")} and ${plural(paths.length - 3, "more file")}`;
  return `… ${plural(blocks.length, "warning")} elided (${plural(n, "line")}): ${kinds}, in ${where}`;
}

/** The compiler-output rule (see the module doc). */
export const compilerRule: SaverRule = {
  name: "compiler",
  apply(lines: string[]): RuleOutput | undefined {
    const items = parse(lines);
    if (!items) return undefined;
    const seen = new Map<string, number>();
    const out: string[] = [];
    let run: Block[] = [];
    let warnings = 0;
    let gone = 0;
    const flush = () => {
      if (run.length === 0) return;
      out.push(runMarker(run));
      warnings += run.length;
      for (const b of run) gone += b.lines.length;
      run = [];
    };
    for (const it of items) {
      if (typeof it === "string") {
        flush();
        out.push(it);
        continue;
      }
      if (it.severity === "warning") {
        const n = (seen.get(it.kind) ?? 0) + 1;
        seen.set(it.kind, n);
        if (n > HEAD) {
          run.push(it);
          continue;
        }
      }
      flush();
      out.push(...it.lines);
    }
    flush();
    if (warnings === 0) return undefined;
    return { text: out.join("\n"), elided: [`${plural(warnings, "warning")} (${plural(gone, "line")}) beyond the first ${HEAD} of each kind`] };
  },
};
