/**
 * Search results (`grep -rn`, `rg -n`, `git grep -n`: `path:line:text` or `path:line:col:text`, with
 * `-C` context lines `path-line-text` and `--` separators; also ripgrep's `--heading` form, a path line
 * followed by `line:text` lines) for the tool-result compressor (SPEC S-1).
 *
 * Matches are grouped by file in first-seen order: a file with several lines gets its path once, then
 * `  line:text` (`  line:col:text`, context `  line-text`); a file with one line keeps
 * `path:line:text`. Kept: every file name, the line (and column) numbers of the first {@link PER_FILE}
 * lines of a file, the text of each (leading indentation dropped, long lines cut; both counted in the
 * note), and every line that is not a match or context line (`grep: x: Permission denied`, a command's
 * last line), verbatim and where it was. Elided: repeated paths, `--` separators, lines past
 * {@link PER_FILE} in one file (`… 40 more lines elided`), the tail of very long lines.
 *
 * Output is taken for a search only when it reads as one (try17 T1, T11): every "path" is a path (no
 * spaces unless it has a slash and a file extension, not an IP address or a timestamp, so
 * `… connecting to 127.0.0.1:9: refused` is not file `… 127.0.0.1` line 9), the line numbers of each file
 * go up (a search prints a file's lines in order; `host:9:` repeated, or gcc's diagnostics, do not),
 * and the lines are not compiler diagnostics (pipeline/savers/compiler.ts).
 */
import { cutLine, marker, mostly, plural, type RuleOutput, type SaverRule } from "./common.ts";
import { DIAGNOSTIC } from "./compiler.ts";

/** Lines kept per file; more are summarised. */
const PER_FILE = 25;

/** `path:line:text` or `path:line:col:text`. */
const FLAT = /^([^\s:][^:\n]*?):(\d+)(?::(\d+))?:(.*)$/;
/** A context line `path-line-text` (the path is only known from a match line of the same file). */
const CONTEXT = /-(\d+)-/g;
/** ripgrep heading-mode body line: `line:text`, `line:col:text` or context `line-text`. */
const NUMBERED = /^(\d+)(?::(\d+))?([:-])(.*)$/;

interface Hit {
  line: string;
  /** The column, when the tool printed one (`rg --column`, `git grep --column`). */
  col?: string;
  sep: ":" | "-";
  text: string;
}

/** An IPv4 address (`127.0.0.1:9:` at a line start), or a log line's leading date. */
const NOT_A_PATH = /^\d{1,3}(?:\.\d{1,3}){3}$|^\d{4}[-/]\d{2}[-/]\d{2}/;
/** A file name's extension at the end of a path. */
const EXTENSION = /\.[A-Za-z][\w-]{0,11}$/;

/** Whether a `path:` prefix reads as a file path (see the module doc). */
function looksLikePath(p: string): boolean {
  if (p.length >= 300 || !(p.includes("/") || p.includes("."))) return false;
  if (/\s/.test(p) && !(p.includes("/") && EXTENSION.test(p) && !p.includes("  "))) return false;
  return !NOT_A_PATH.test(p);
}

/** A hit as printed after its path: `line:text`, `line:col:text`, context `line-text`. */
const numbered = (h: Hit, text: string) => `${h.line}${h.col !== undefined ? `:${h.col}` : ""}${h.sep}${text}`;

/** Search output read line by line: each file's hits, and the order of files and other lines. */
interface Parsed {
  files: Map<string, Hit[]>;
  /** A file (its first line's place) or a line that is neither a match nor a context line. */
  order: Array<{ path: string } | { other: string }>;
}

/**
 * Whether each file's line numbers go up, as a search prints them: `host:9:` repeated or a compiler's
 * diagnostics in the order it found them do not (at most one line in ten out of order).
 */
function inOrder(files: Map<string, Hit[]>): boolean {
  let hits = 0;
  let back = 0;
  for (const list of files.values()) {
    hits += list.length;
    for (let i = 1; i < list.length; i++) if (Number(list[i].line) <= Number(list[i - 1].line)) back++;
  }
  return back <= hits * 0.1;
}

/** Parses flat output; undefined when it is not search output. */
function parseFlat(lines: string[]): Parsed | undefined {
  const files = new Map<string, Hit[]>();
  const order: Parsed["order"] = [];
  let matches = 0;
  let other = 0;
  let diagnostics = 0;
  const add = (path: string, hit: Hit) => {
    let list = files.get(path);
    if (!list) {
      files.set(path, (list = []));
      order.push({ path });
    }
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
      if (DIAGNOSTIC.test(l)) diagnostics++;
      add(m[1], { line: m[2], col: m[3], sep: ":", text: m[4] });
      continue;
    }
    const c = contextLine(l, known);
    if (c) add(c.path, c.hit);
    else {
      other++;
      order.push({ other: l });
    }
  }
  if (matches < 5 || other > matches * 0.1 || diagnostics > matches * 0.3 || !inOrder(files)) return undefined;
  return { files, order };
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
function parseHeading(lines: string[]): Parsed | undefined {
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
      current.push({ line: m[1], col: m[2], sep: m[3] as ":" | "-", text: m[4] });
      if (m[3] === ":") matches++;
      continue;
    }
    if (!current && looksLikePath(l) && !l.includes(":") ) {
      current = files.get(l) ?? [];
      files.set(l, current);
      continue;
    }
    return undefined;
  }
  if (matches < 5 || [...files.values()].some((h) => h.length === 0) || !inOrder(files)) return undefined;
  return { files, order: [...files.keys()].map((path) => ({ path })) };
}

/** The search-results rule (see the module doc). */
export const searchRule: SaverRule = {
  name: "search",
  apply(lines: string[]): RuleOutput | undefined {
    if (!mostly(lines, (l) => FLAT.test(l) || NUMBERED.test(l) || l === "--" || /-\d+-/.test(l), 0.5, 5)) return undefined;
    const parsed = parseFlat(lines) ?? parseHeading(lines);
    if (!parsed) return undefined;
    const { files, order } = parsed;
    const out: string[] = [];
    let elided = 0;
    let cut = 0;
    let trimmed = 0;
    let total = 0;
    const text = (t: string) => {
      const kept = t.trimStart();
      if (kept !== t) trimmed++;
      const c = cutLine(kept);
      if (c !== kept) cut++;
      return c;
    };
    for (const item of order) {
      if ("other" in item) {
        out.push(item.other);
        continue;
      }
      const { path } = item;
      const hits = files.get(path)!;
      total += hits.filter((h) => h.sep === ":").length;
      if (hits.length === 1) {
        const h = hits[0];
        out.push(`${path}${h.sep}${numbered(h, text(h.text))}`);
        continue;
      }
      out.push(`${path}:`);
      for (const h of hits.slice(0, PER_FILE)) out.push(`  ${numbered(h, text(h.text))}`);
      if (hits.length > PER_FILE) {
        const more = hits.length - PER_FILE;
        elided += more;
        out.push(marker(plural(more, "more line"), "  "));
      }
    }
    const notes = [`repeated paths (${plural(total, "match", "matches")} in ${plural(files.size, "file")}, grouped by file)`];
    if (elided > 0) notes.push(plural(elided, "further line"));
    if (trimmed > 0) notes.push(`the leading indentation of ${plural(trimmed, "line")}`);
    if (cut > 0) notes.push(`the tail of ${plural(cut, "long line")}`);
    return { text: out.join("\n"), elided: notes };
  },
};

