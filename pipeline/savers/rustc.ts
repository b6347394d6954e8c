/**
 * rustc's and cargo's diagnostics for the compiler rule (compiler.ts; SPEC S-1; try17 T11: only the GNU
 * format was read, so a Rust build's repeated warnings reached the model whole).
 *
 * rustc prints a diagnostic as a block (rustc's human output, as `cargo build` shows it):
 * ```
 * warning: unused variable: `x`
 *  --> src/main.rs:2:9
 *   |
 * 2 |     let x = 5;
 *   |         ^ help: if this is intentional, prefix it with an underscore: `_x`
 *   |
 *   = note: `#[warn(unused_variables)]` on by default
 *
 * ```
 * A header `warning: …`, `error: …` or `error[E0308]: …` is a diagnostic only when its next line is
 * a ` --> path:line:col` location; the block is every line after it up to and including the blank
 * line that ends it. A header without a location is cargo's or rustc's own line (`warning: \`demo\`
 * (bin "demo") generated 40 warnings`, `error: could not compile …`, `error: aborting due to …`) and is
 * kept where it is, as every other line (`   Compiling demo v0.1.0`, `For more information …`).
 *
 * A warning's kind is its message with quoted names and numbers masked (`unused variable: '…'`): the
 * `#[warn(lint)]` note that names the lint is printed only on the lint's first warning.
 */
import { kindOf, type Block } from "./diagnostic-block.ts";

/** `warning: text`, `error: text`, `error[E0308]: text`. */
const HEADER = /^(warning|error)(?:\[\w+\])?: (.*)$/;
/** The location line under a header: ` --> src/main.rs:3:5` (`::: path` lines are inside the block). */
const LOCATION = /^\s*--> (.+?):(\d+):(\d+)$/;

/** Whether line `i` opens a diagnostic: a header whose next line is a location. */
function opensBlock(lines: string[], i: number): RegExpExecArray | null {
  const next = lines[i + 1];
  if (next === undefined || !next.includes("-->")) return null;
  const h = HEADER.exec(lines[i]!);
  return h && LOCATION.test(next) ? h : null;
}

/**
 * Splits rustc output into kept lines and diagnostic blocks; undefined when it is not rustc's (fewer
 * than `minDiagnostics` located diagnostics, or their blocks less than half of the non-empty lines).
 */
export function parseRustc(lines: string[], minDiagnostics: number): Array<string | Block> | undefined {
  let located = 0;
  for (let i = 0; i < lines.length && located < minDiagnostics; i++) if (opensBlock(lines, i)) located++;
  if (located < minDiagnostics) return undefined;
  const items: Array<string | Block> = [];
  let inBlocks = 0;
  for (let i = 0; i < lines.length; i++) {
    const h = opensBlock(lines, i);
    if (!h) {
      items.push(lines[i]!);
      continue;
    }
    const severity = h[1] === "error" ? "error" : "warning";
    const path = LOCATION.exec(lines[i + 1]!)![1]!;
    const block: Block = { severity, kind: severity === "error" ? "" : kindOf(h[2]!), path, lines: [lines[i]!], pinned: false };
    // The block runs to its blank line (kept in it, so a run of collapsed warnings is not split by
    // the blank lines between them), or to the next header.
    for (i++; i < lines.length; i++) {
      const l = lines[i]!;
      if (block.lines.length > 1 && HEADER.test(l)) {
        i--;
        break;
      }
      block.lines.push(l);
      if (l.trim() === "") break;
    }
    inBlocks += block.lines.filter((l) => l.trim() !== "").length;
    items.push(block);
  }
  const nonEmpty = lines.filter((l) => l.trim() !== "").length;
  if (inBlocks < nonEmpty * 0.5) return undefined;
  return items;
}

