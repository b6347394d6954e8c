/**
 * Search results (`grep -rn`, `rg -n`, `git grep -n`: `path:line:text`, with `-C` context lines
 * `path-line-text` and `--` separators; also ripgrep's `--heading` form, a path line followed by
 * `line:text` lines) for the tool-result compressor (SPEC S-1).
 *
 * Matches are grouped by file in first-seen order: a file with several lines gets its path once, then
 * `  line:text` (context `  line-text`); a file with one line keeps `path:line:text`. Kept: every file
 * name, every line number of the first {@link PER_FILE} lines of a file, the text of each (leading
 * indentation dropped, long lines cut). Elided: repeated paths, `--` separators, lines past
 * {@link PER_FILE} in one file (`… 40 more lines elided`), the tail of very long lines.
 */
import { cutLine, marker, mostly, plural, type RuleOutput, type SaverRule } from "./common.ts";

/** Lines kept per file; more are summarised. */
const PER_FILE = 25;

/** `path:line:text` or `path:line:col:text`. */
const FLAT = /^([^\s:][^:\n]*?):(\d+)(?::\d+)?:(.*)$/;
/** A context line `path-line-text` (the path is only known from a match line of the same file). */
const CONTEXT = /-(\d+)-/g;
/** ripgrep heading-mode body line: `line:text`, `line:col:text` or context `line-text`. */
const NUMBERED = /^(\d+)(?::\d+)?([:-])(.*)$/;

interface Hit {
  line: string;
  sep: ":" | "-";
  text: string;
}

function looksLikePath(p: string): boolean {
  return (p.includes("/") || p.includes(".")) && !p.includes("  ") && p.length < 300;
}

/** Parses flat output; undefined when it is not search output. */
function parseFlat(lines: string[]): Map<string, Hit[]> | undefined {
  const files = new Map<string, Hit[]>();
  let matches = 0;
  let other = 0;
  const add = (path: string, hit: Hit) => {
    let list = files.get(path);
    if (!list) files.set(path, (list = []));
    list.push(hit);
  };
  // Paths are known from match lines first, so context lines before a file's first match are read too.
  const known = new Set<string>();
  for (const l of lines) {
    const m = FLAT.exec(l);
    if (m && looksLikePath(m[1])) known.add(m[1]);
  }
  for (const l of lines) {
    if (l === "" || l === "--") continue;
    const m = FLAT.exec(l);
    if (m && looksLikePath(m[1])) {
      matches++;
      add(m[1], { line: m[2], sep: ":", text: m[3] });
      continue;
    }
    const c = contextLine(l, known);
    if (c) add(c.path, c.hit);
    else other++;
  }
  if (matches < 5 || other > (matches * 0.1)) return undefined;
  return files;
}

/**
 * A `-C` context line `path-line-text` of a file that has match lines (dashes are common in paths, so
 * the path must be known).
 */
function contextLine(l: string, files: Set<string>): { path: string; hit: Hit } | undefined {
  CONTEXT.lastIndex = 0;
  for (let m = CONTEXT.exec(l); m; m = CONTEXT.exec(l)) {
    const path = l.slice(0, m.index);
    if (files.has(path)) return { path, hit: { line: m[1], sep: "-", text: l.slice(m.index + m[0].length) } };
    CONTEXT.lastIndex = m.index + 1;
  }
  return undefined;
}

/** Parses ripgrep's heading form; undefined when it is not that. */
function parseHeading(lines: string[]): Map<string, Hit[]> | undefined {
  const files = new Map<string, Hit[]>();
  let current: Hit[] | undefined;
  let matches = 0;
  for (const l of lines) {
    if (l === "" || l === "--") {
      if (l === "") current = undefined;
      continue;
    }
    const m = current ? NUMBERED.exec(l) : null;
    if (m && current) {
      current.push({ line: m[1], sep: m[2] as ":" | "-", text: m[3] });
      if (m[2] === ":") matches++;
      continue;
    }
    if (!current && looksLikePath(l) && !l.includes(":") ) {
      current = files.get(l) ?? [];
      files.set(l, current);
      continue;
    }
    return undefined;
  }
  if (matches < 5 || [...files.values()].some((h) => h.length === 0)) return undefined;
  return files;
}

/** The search-results rule (see the module doc). */
export const searchRule: SaverRule = {
  name: "search",
  apply(lines: string[]): RuleOutput | undefined {
    if (!mostly(lines, (l) => FLAT.test(l) || NUMBERED.test(l) || l === "--" || /-\d+-/.test(l), 0.5, 5)) return undefined;
    const files = parseFlat(lines) ?? parseHeading(lines);
    if (!files) return undefined;
    const out: string[] = [];
    let elided = 0;
    let cut = 0;
    let total = 0;
    const text = (t: string) => {
      const trimmed = t.trimStart();
      const c = cutLine(trimmed);
      if (c !== trimmed) cut++;
      return c;
    };
    for (const [path, hits] of files) {
      total += hits.filter((h) => h.sep === ":").length;
      if (hits.length === 1) {
        const h = hits[0];
        out.push(`${path}${h.sep === ":" ? ":" : "-"}${h.line}${h.sep}${text(h.text)}`);
        continue;
      }
      out.push(`${path}:`);
      for (const h of hits.slice(0, PER_FILE)) out.push(`  ${h.line}${h.sep}${text(h.text)}`);
      if (hits.length > PER_FILE) {
        const more = hits.length - PER_FILE;
        elided += more;
        out.push(marker(plural(more, "more line"), "  "));
      }
    }
    const notes = [`repeated paths (${plural(total, "match", "matches")} in ${plural(files.size, "file")}, grouped by file)`];
    if (elided > 0) notes.push(plural(elided, "further line"));
    if (cut > 0) notes.push(`the tail of ${plural(cut, "long line")}`);
    return { text: out.join("\n"), elided: notes };
  },
};

