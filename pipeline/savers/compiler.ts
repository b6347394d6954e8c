/**
 * Compiler and linter diagnostics (gcc, clang, `cc` under make; any tool printing
 * `path:line[:col]: warning|error|note: message`, the GNU diagnostic format) for the tool-result
 * compressor (SPEC S-1; try17 T11: such output read as grep results lost the error that failed the
 * build).
 *
 * Output is read as a compiler's only when it has {@link MIN_DIAGNOSTICS} diagnostics and diagnostics
 * with their echo lines are at least half of its non-empty lines (a long build log with a few warnings
 * is left to the log rule). It is read as blocks: a diagnostic line and the echo lines after it (gcc's
 * `   10 |     int x;` source echo and `      |     ^~~` caret lines, clang's source line and caret
 * line), with a `note:` joining the block before it. Any other line, indented or not (`  CC
 * src/mod1.o`), is the build's own output.
 * - Kept verbatim: every error block (`error:`, `fatal error:`) with its notes and echo, the first
 *   {@link HEAD} blocks of each kind of warning, and every line that is not part of a block, where it
 *   was (the compiler command, automake's `  CC` lines, `src/mod2.c: In function ‘run2’:` and
 *   `In file included from …` lines, `make: *** [Makefile:12: engine.o] Error 1`, `2 warnings and 1
 *   error generated.`).
 * - Collapsed: the further warnings of a kind (a kind is the warning's flag, `[-Wunused-variable]`,
 *   or its message with quoted names and numbers masked), a run of them replaced by one marker line
 *   that counts them and their lines: `… 198 warnings elided (594 lines): 198 [-Wunused-variable], in
 *   src/engine.c`. A run never spans a kept line.
 * A line is never rewritten: what stays is byte for byte the compiler's.
 *
 * rustc and cargo's format (`warning: …` / `error[E0308]: …` over a ` --> path:line:col` line, its
 * echo and `= note:` lines up to the blank line) is read into the same blocks by rustc.ts and
 * collapsed the same way.
 */
import { count, mostly, plural, type RuleOutput, type SaverRule } from "./common.ts";
import { kindOf, type Block, type Severity } from "./diagnostic-block.ts";
import { parseRustc } from "./rustc.ts";

/** Warning blocks of one kind kept before the rest of that kind is collapsed. */
const HEAD = 2;
/** Diagnostics needed before output is read as a compiler's. */
const MIN_DIAGNOSTICS = 5;

/** `path:line[:col]: [fatal ]error|warning|note|remark[ [code]]: text`. */
export const DIAGNOSTIC = /^([^\s:][^:\n]*):(\d+)(?::(\d+))?: (fatal error|error|warning|note|remark)(?:\[[\w-]+\])?: (.*)$/;
/** Lines gcc prints before a diagnostic to say where it is. */
const PRELUDE = /^(?:In file included from .*[:,]$|\s+from .*[:,]$|[^\s:][^:\n]*: (?:In |At )[^\n]*:$)/;

/** gcc's source echo, caret, label and fix-it lines: `  12 |   int x;`, `     |       ^~`. */
const ECHO = /^\s*\d*\s*\|/;
/** A caret line without gcc's `|` (clang, gcc -fno-diagnostics-show-line-numbers): `      ^~~~`. */
const CARET = /^\s*[\^~][\s^~]*$/;

/** Whether a line reads as part of a diagnostic (the line, its echo, carets, `In function` lines). */
function diagnosticLike(l: string): boolean {
  return ECHO.test(l) || CARET.test(l) || PRELUDE.test(l) || (l.includes(": ") && DIAGNOSTIC.test(l));
}

/**
 * Splits the output into kept lines and diagnostic blocks; undefined when it is not compiler output
 * (fewer than {@link MIN_DIAGNOSTICS} diagnostics, or diagnostics and their echo lines less than half
 * of the non-empty lines: a build log with a few warnings is the log rule's).
 *
 * A block takes after its diagnostic only echo shapes: gcc's `|` lines, caret lines, and a line just
 * before a caret line (clang's source echo); any other line is the build's own output (`  CC
 * src/mod1.o`), kept where it is. `In function …` / `In file included from …` lines are kept verbatim
 * where they are (never in a collapsed run); one before a `note:` joins its block, which is then kept.
 */
function parse(lines: string[]): Array<string | Block> | undefined {
  let diagnostics = 0;
  for (const l of lines) if (l.includes(": ") && DIAGNOSTIC.test(l) && ++diagnostics >= MIN_DIAGNOSTICS) break;
  if (diagnostics < MIN_DIAGNOSTICS) return undefined;
  if (!mostly(lines, diagnosticLike, 0.5, MIN_DIAGNOSTICS)) return undefined;
  const items: Array<string | Block> = [];
  /** The block echo lines continue. */
  let current: Block | undefined;
  /** The block a `note:` joins: the last one, until a line of the build's own output. */
  let last: Block | undefined;
  let prelude: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const d = l.includes(": ") ? DIAGNOSTIC.exec(l) : null;
    if (d) {
      const sev = d[4];
      if (sev === "note" && last) {
        if (prelude.length > 0) last.pinned = true;
        last.lines.push(...prelude, l);
        prelude = [];
        current = last;
        continue;
      }
      items.push(...prelude);
      prelude = [];
      const severity: Severity = sev === "error" || sev === "fatal error" ? "error" : "warning";
      current = { severity, kind: severity === "error" ? "" : kindOf(d[5]), path: d[1], lines: [l], pinned: false };
      items.push(current);
      last = current;
      continue;
    }
    if (PRELUDE.test(l)) {
      prelude.push(l);
      current = undefined;
      continue;
    }
    if (current && prelude.length === 0 && l.trim() !== "" && (ECHO.test(l) || CARET.test(l) || CARET.test(lines[i + 1] ?? ""))) {
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
    const items = parse(lines) ?? parseRustc(lines, MIN_DIAGNOSTICS);
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
      if (it.severity === "warning" && !it.pinned) {
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
