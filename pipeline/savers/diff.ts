/**
 * Unified diffs (`git diff`, `git show`, `git log -p`, `diff -u`) for the tool-result compressor
 * (SPEC S-1). Kept: every file header (`diff --git`, `---`/`+++`, mode, rename, binary lines), every
 * hunk header, every changed line, and {@link CONTEXT} unchanged line(s) next to each change; text
 * before the first file (a commit header) is kept as it is. Elided: `index <hash>..<hash>` lines,
 * unchanged context beyond {@link CONTEXT} line(s) (a gap inside a hunk becomes
 * `… N unchanged lines elided`), the middle of very long runs of added or removed lines (generated
 * files, lockfiles: `… N added lines elided`), and the tail of very long lines.
 */
import { cutLine, marker, plural, type RuleOutput, type SaverRule } from "./common.ts";

/** Unchanged lines kept on each side of a change. */
export const CONTEXT = 1;
/** A run of added (or removed) lines longer than this keeps only its head and tail. */
const LONG_RUN = 60;
const RUN_HEAD = 30;
const RUN_TAIL = 10;

const FILE_HEADER = /^(diff --git |diff -|--- |\+\+\+ |new file mode |deleted file mode |old mode |new mode |similarity index |dissimilarity index |rename from |rename to |copy from |copy to |Binary files |GIT binary patch)/;
const HUNK = /^@@+ -\d+(?:,\d+)? (?:-\d+(?:,\d+)? )*\+\d+(?:,\d+)? @@+/;
const INDEX = /^index [0-9a-f]+(?:,[0-9a-f]+)*\.\.[0-9a-f]+/;

/** Whether `lines` hold a unified diff: a `diff --git` line, or `---`/`+++` followed by a hunk. */
function isDiff(lines: string[]): boolean {
  let files = 0;
  let hunks = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith("diff --git ")) files++;
    else if (l.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) files++;
    else if (HUNK.test(l)) hunks++;
  }
  return files > 0 && hunks > 0;
}

type Kind = "ctx" | "add" | "del" | "meta";

function kindOf(l: string): Kind | undefined {
  if (l === "" || l[0] === " ") return "ctx";
  if (l[0] === "+") return "add";
  if (l[0] === "-") return "del";
  if (l[0] === "\\") return "meta"; // "\ No newline at end of file"
  return undefined;
}

interface Tally {
  context: number;
  index: number;
  added: number;
  removed: number;
  cut: number;
}

/** Compresses one hunk body (the lines after its `@@` header) into `out`. */
function hunk(body: string[], out: string[], t: Tally): void {
  // Split into runs of context and runs of changes (meta lines travel with the changes).
  const runs: { ctx: boolean; lines: string[] }[] = [];
  for (const l of body) {
    const ctx = kindOf(l) === "ctx";
    const last = runs[runs.length - 1];
    if (last && last.ctx === ctx) last.lines.push(l);
    else runs.push({ ctx, lines: [l] });
  }
  const emit = (l: string) => {
    const c = cutLine(l);
    if (c !== l) t.cut++;
    out.push(c);
  };
  for (let r = 0; r < runs.length; r++) {
    const { ctx, lines } = runs[r];
    if (ctx) {
      const first = r === 0;
      const last = r === runs.length - 1;
      if (first && last) {
        for (const l of lines) emit(l); // a hunk of context only: nothing to anchor on, keep it
      } else if (first) {
        t.context += Math.max(0, lines.length - CONTEXT);
        for (const l of lines.slice(-CONTEXT)) emit(l);
      } else if (last) {
        t.context += Math.max(0, lines.length - CONTEXT);
        for (const l of lines.slice(0, CONTEXT)) emit(l);
      } else if (lines.length - 2 * CONTEXT >= 3) {
        const gap = lines.length - 2 * CONTEXT;
        t.context += gap;
        for (const l of lines.slice(0, CONTEXT)) emit(l);
        out.push(marker(plural(gap, "unchanged line")));
        for (const l of lines.slice(-CONTEXT)) emit(l);
      } else {
        for (const l of lines) emit(l);
      }
      continue;
    }
    // A change run: split further into same-sign stretches to cut very long ones.
    let i = 0;
    while (i < lines.length) {
      const k = kindOf(lines[i]);
      let j = i;
      while (j < lines.length && kindOf(lines[j]) === k) j++;
      const stretch = lines.slice(i, j);
      if ((k === "add" || k === "del") && stretch.length > LONG_RUN) {
        const gap = stretch.length - RUN_HEAD - RUN_TAIL;
        for (const l of stretch.slice(0, RUN_HEAD)) emit(l);
        out.push(marker(plural(gap, k === "add" ? "added line" : "removed line")));
        for (const l of stretch.slice(-RUN_TAIL)) emit(l);
        if (k === "add") t.added += gap;
        else t.removed += gap;
      } else {
        for (const l of stretch) emit(l);
      }
      i = j;
    }
  }
}

/**
 * Index just past the body of the hunk whose header is `lines[start]`: the header's line counts decide
 * (`@@ -a,b +c,d @@`: context counts on both sides, `-` on the old, `+` on the new); a combined diff
 * (`@@@`) or a count that runs past the lines ends at the first line that is not hunk-shaped.
 */
function hunkEnd(lines: string[], start: number): number {
  const m = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(lines[start]);
  let j = start + 1;
  if (m) {
    let oldLeft = m[1] === undefined ? 1 : Number(m[1]);
    let newLeft = m[2] === undefined ? 1 : Number(m[2]);
    while (j < lines.length && (oldLeft > 0 || newLeft > 0 || lines[j][0] === "\\")) {
      const k = kindOf(lines[j]);
      if (k === undefined) break;
      if (k === "ctx") {
        oldLeft--;
        newLeft--;
      } else if (k === "del") oldLeft--;
      else if (k === "add") newLeft--;
      j++;
    }
    return j;
  }
  while (j < lines.length && kindOf(lines[j]) !== undefined && lines[j] !== "") j++;
  return j;
}

/** The unified-diff rule (see the module doc). */
export const diffRule: SaverRule = {
  name: "diff",
  apply(lines: string[]): RuleOutput | undefined {
    if (!isDiff(lines)) return undefined;
    const out: string[] = [];
    const t: Tally = { context: 0, index: 0, added: 0, removed: 0, cut: 0 };
    let i = 0;
    while (i < lines.length) {
      const l = lines[i];
      if (HUNK.test(l)) {
        out.push(l);
        const j = hunkEnd(lines, i);
        hunk(lines.slice(i + 1, j), out, t);
        i = j;
        continue;
      }
      if (INDEX.test(l)) {
        t.index++;
        i++;
        continue;
      }
      out.push(FILE_HEADER.test(l) ? l : cutLine(l));
      i++;
    }
    const elided: string[] = [];
    if (t.context > 0) elided.push(plural(t.context, "unchanged context line"));
    if (t.added > 0) elided.push(plural(t.added, "added line"));
    if (t.removed > 0) elided.push(plural(t.removed, "removed line"));
    if (t.index > 0) elided.push(plural(t.index, "index line"));
    if (t.cut > 0) elided.push(`the tail of ${plural(t.cut, "long line")}`);
    if (elided.length === 0) return undefined;
    return { text: out.join("\n"), elided };
  },
};

