/**
 * `git status` output for the tool-result compressor (SPEC S-1), long form (`On branch …`, sections
 * `Changes to be committed:` …) and short form (`git status -s` / `--porcelain`: `XY path`).
 * Kept: the branch and upstream lines, every section title, every entry's status and path (runs of
 * spaces inside an entry collapsed). Elided: git's `(use "git …")` hint lines, and in a section with
 * more than {@link MANY} entries, the entries after the first {@link KEEP}, summarised by directory
 * (`… 280 more entries elided: src/gen/ 250, docs/ 30`).
 */
import { count, marker, mostly, plural, type RuleOutput, type SaverRule } from "./common.ts";

/** A section with more entries than this is cut. */
const MANY = 60;
/** Entries kept in a cut section. */
const KEEP = 40;
/** Directories named in the summary of a cut section. */
const SUMMARY_DIRS = 8;

const LONG_MARKERS = /^(On branch |HEAD detached (at|from) |Not currently on any branch\.|Changes to be committed:|Changes not staged for commit:|Untracked files:|Unmerged paths:|Ignored files:|nothing to commit|nothing added to commit|no changes added to commit|Your branch )/;
const SECTION = /^(Changes to be committed|Changes not staged for commit|Untracked files|Unmerged paths|Ignored files):$/;
const HINT = /^\s*\((use "git |commit or discard |fix conflicts |all conflicts fixed)/;
const SHORT_ENTRY = /^(?:[ MTADRCU?!]{2}) (?:"[^"]+"|\S.*)$/;
const BRANCH_LINE = /^## /;

/** The directory a path is summarised under: its first segment with `/`, or `./` for a top-level file. */
function dirOf(path: string): string {
  const p = path.replace(/^"|"$/g, "").replace(/^.*-> /, "");
  const slash = p.indexOf("/");
  return slash > 0 && slash < p.length - 1 ? p.slice(0, slash + 1) : slash === p.length - 1 ? p : "./";
}

/** The path of an entry line (long form `\tmodified:   a/b`, short form `XY a/b`). */
function pathOf(entry: string, short: boolean): string {
  if (short) return entry.slice(3);
  const t = entry.trim();
  const m = /^[a-z ]+:\s+(.*)$/.exec(t);
  return m ? m[1] : t;
}

/** Emits a section's entries, cut beyond {@link MANY}. Returns the number elided. */
function entries(list: string[], short: boolean, indent: string, out: string[]): number {
  if (list.length <= MANY) {
    out.push(...list);
    return 0;
  }
  out.push(...list.slice(0, KEEP));
  const rest = list.slice(KEEP);
  const byDir = new Map<string, number>();
  for (const e of rest) {
    const d = dirOf(pathOf(e, short));
    byDir.set(d, (byDir.get(d) ?? 0) + 1);
  }
  const dirs = [...byDir].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const named = dirs.slice(0, SUMMARY_DIRS).map(([d, n]) => `${d} ${count(n)}`);
  const others = dirs.slice(SUMMARY_DIRS).reduce((s, [, n]) => s + n, 0);
  if (others > 0) named.push(`other directories ${count(others)}`);
  out.push(`${marker(plural(rest.length, "more entry", "more entries"), indent)}: ${named.join(", ")}`);
  return rest.length;
}

/** The `git status` rule (see the module doc). */
export const gitStatusRule: SaverRule = {
  name: "git_status",
  apply(lines: string[]): RuleOutput | undefined {
    const first = lines.find((l) => l.trim() !== "") ?? "";
    const long = LONG_MARKERS.test(first) && lines.some((l) => SECTION.test(l) || /^nothing (added )?to commit/.test(l));
    if (long) return longForm(lines);
    if (mostly(lines, (l) => SHORT_ENTRY.test(l) || BRANCH_LINE.test(l), 1, 5) && lines.some((l) => SHORT_ENTRY.test(l))) return shortForm(lines);
    return undefined;
  },
};

function longForm(lines: string[]): RuleOutput | undefined {
  const out: string[] = [];
  let hints = 0;
  let cut = 0;
  let section: string[] | undefined;
  const flush = () => {
    if (section) cut += entries(section, false, "\t", out);
    section = undefined;
  };
  for (const l of lines) {
    if (HINT.test(l)) {
      hints++;
      continue;
    }
    if (SECTION.test(l)) {
      flush();
      out.push(l);
      section = [];
      continue;
    }
    if (section && l.startsWith("\t")) {
      section.push("\t" + l.slice(1).replace(/:\s{2,}/, ": "));
      continue;
    }
    flush();
    const noHint = l.replace(/ \(use "git [^)]*\)$/, "");
    if (noHint !== l) hints++;
    out.push(noHint);
  }
  flush();
  const elided: string[] = [];
  if (hints > 0) elided.push(plural(hints, "git hint line"));
  if (cut > 0) elided.push(plural(cut, "status entry", "status entries"));
  if (elided.length === 0) return undefined;
  return { text: out.join("\n"), elided };
}

function shortForm(lines: string[]): RuleOutput | undefined {
  const out: string[] = [];
  const list: string[] = [];
  for (const l of lines) {
    if (SHORT_ENTRY.test(l)) list.push(l);
    else if (l.trim() !== "") out.push(l);
  }
  const cut = entries(list, true, "", out);
  if (cut === 0) return undefined;
  return { text: out.join("\n"), elided: [plural(cut, "status entry", "status entries")] };
}
