/**
 * Edits a TOML settings file (Codex's `config.toml`) the way a user would by hand: only the lines
 * of the keys set change; every other byte stays (comments, blank lines, order, spacing, quoting, a
 * multi-line value of another key). For `switchyard setup codex` (src/cli/setup.ts).
 *
 * The file is first read into statements ({@link tomlStatements}) by TOML 1.0's grammar
 * (https://toml.io/en/v1.0.0): a statement is a table header, an array-of-tables header, a
 * `key = value` pair, a comment line or a blank line, and a pair's value may span lines (a `"""…"""`
 * or `'''…'''` string, an array, an inline table: Bun's parser takes newlines in one too, as TOML 1.1
 * does), so a line inside such a value (`[rules]` or `model = "x"` in a multi-line
 * `developer_instructions`) is never read as a header or a key of its own, and a multi-line value
 * setup rewrites is replaced whole. The caller checks the file with `Bun.TOML.parse` first (the
 * scan assumes a valid file) and the result after. Pure functions; no file is read here.
 */

/** One statement of a TOML document: lines `first`…`last` (0-based, inclusive; a multi-line value spans several). */
export interface TomlStatement {
  kind: "blank" | "comment" | "table" | "arrayTable" | "pair";
  first: number;
  last: number;
  /** The key (a header's table name, a pair's key), its parts unquoted: `[model_providers . "switchyard"]` → `["model_providers", "switchyard"]`. */
  key?: string[];
  /** A pair's value: where it starts (column on line `first`) and ends (column on line `last`, exclusive). */
  valueStart?: number;
  valueEnd?: number;
  /** Column on line `last` of the `#` of a trailing comment; -1 when there is none. */
  comment?: number;
}

/** Thrown when the text is not TOML the scan can read (the caller has checked it with Bun's parser, so this names a gap of the scan). */
export class TomlScanError extends Error {
  constructor(
    readonly line: number,
    what: string,
  ) {
    super(`line ${line + 1}: ${what}`);
  }
}

const BARE_KEY = /[A-Za-z0-9_-]+/y;
/** A scalar value: a date-time (with its space), else a run of number / boolean / date characters. */
const SCALAR = /\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})?|[A-Za-z0-9_+\-.:]+/y;

/**
 * The statements of `text` (lines split at `\n`; a `\r` before it is a line end too), in order. A
 * leading byte order mark (U+FEFF, as Windows editors write) is skipped: it counts in line 0's columns.
 * Throws {@link TomlScanError}.
 */
export function tomlStatements(text: string): TomlStatement[] {
  const out: TomlStatement[] = [];
  let i = text.startsWith("\uFEFF") ? 1 : 0;
  let line = 0;
  let lineStart = 0;
  const fail = (what: string): never => {
    throw new TomlScanError(line, what);
  };
  const col = () => i - lineStart;
  const newline = () => {
    i++;
    line++;
    lineStart = i;
  };
  const spaces = () => {
    while (text[i] === " " || text[i] === "\t") i++;
  };
  /** Spaces, line ends and comments (inside an array or inline table). */
  const gaps = () => {
    for (;;) {
      spaces();
      if (text[i] === "#") while (i < text.length && text[i] !== "\n") i++;
      if (text[i] === "\r" && text[i + 1] === "\n") i++;
      if (text[i] === "\n") newline();
      else return;
    }
  };
  /** A basic or literal string starting at `i` (one line or multi-line), returning its value for keys. */
  const string = (): string => {
    const q = text[i]!;
    if (text.startsWith(q.repeat(3), i)) {
      i += 3;
      for (;;) {
        if (i >= text.length) fail(`a ${q.repeat(3)} string left open`);
        if (text.startsWith(q.repeat(3), i)) {
          i += 3;
          // up to two more quotes belong to the string
          if (text[i] === q) i++;
          if (text[i] === q) i++;
          return "";
        }
        if (q === '"' && text[i] === "\\") i++;
        if (text[i] === "\n") newline();
        else i++;
      }
    }
    const start = ++i;
    while (text[i] !== q) {
      if (i >= text.length || text[i] === "\n") fail("a string left open at the end of its line");
      i += q === '"' && text[i] === "\\" ? 2 : 1;
    }
    const raw = text.slice(start, i++);
    if (q === "'") return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw; // a TOML escape JSON does not share (\e, \x..): the key is only compared with bare names
    }
  };
  const key = (): string[] => {
    const parts: string[] = [];
    for (;;) {
      spaces();
      if (text[i] === '"' || text[i] === "'") parts.push(string());
      else {
        BARE_KEY.lastIndex = i;
        const m = BARE_KEY.exec(text);
        if (!m) fail("a key");
        parts.push(m![0]);
        i += m![0].length;
      }
      spaces();
      if (text[i] !== ".") return parts;
      i++;
    }
  };
  const value = (): void => {
    const c = text[i];
    if (c === '"' || c === "'") return void string();
    if (c === "[" || c === "{") {
      const close = c === "[" ? "]" : "}";
      i++;
      for (;;) {
        gaps();
        if (text[i] === close) return void i++;
        if (c === "{") {
          key();
          if (text[i] !== "=") fail("'=' after a key of an inline table");
          i++;
          spaces();
        }
        value();
        gaps();
        if (text[i] === ",") i++;
        else if (text[i] !== close) fail(`',' or '${close}'`);
      }
    }
    SCALAR.lastIndex = i;
    const m = SCALAR.exec(text);
    if (!m) fail("a value");
    i += m![0].length;
  };
  /** Spaces, an optional comment and the line's end; returns the comment's column or -1. */
  const lineEnd = (): number => {
    spaces();
    let comment = -1;
    if (text[i] === "#") {
      comment = col();
      while (i < text.length && text[i] !== "\n") i++;
    }
    if (text[i] === "\r" && (text[i + 1] === "\n" || i + 1 === text.length)) i++;
    if (i < text.length && text[i] !== "\n") fail("the end of the line after a value or header");
    return comment;
  };
  while (i < text.length) {
    const first = line;
    spaces();
    let s: TomlStatement;
    if (text[i] === "\n" || (text[i] === "\r" && text[i + 1] === "\n") || i >= text.length) {
      lineEnd();
      s = { kind: "blank", first, last: line };
    } else if (text[i] === "#") {
      lineEnd();
      s = { kind: "comment", first, last: line };
    } else if (text[i] === "[") {
      const array = text[i + 1] === "[";
      i += array ? 2 : 1;
      const k = key();
      if (!text.startsWith(array ? "]]" : "]", i)) fail("the header's closing bracket");
      i += array ? 2 : 1;
      s = { kind: array ? "arrayTable" : "table", first, last: line, key: k, comment: lineEnd() };
    } else {
      const k = key();
      if (text[i] !== "=") fail("'=' after a key");
      i++;
      spaces();
      const valueStart = col();
      value();
      const valueEnd = col();
      s = { kind: "pair", first, last: line, key: k, valueStart, valueEnd, comment: lineEnd() };
    }
    s.last = line;
    out.push(s);
    if (i < text.length) newline();
  }
  return out;
}

/** A TOML value literal for a string, an integer or a boolean. */
export function tomlValue(v: string | number | boolean): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

const sameKey = (a: string[] | undefined, b: string[]) => a !== undefined && a.length === b.length && a.every((p, n) => p === b[n]);

/**
 * The lines of the pair `s` with its value set to `value`, keeping what the user wrote around the
 * value: what comes before it on its first line (indentation, the key as written, spacing around `=`),
 * and a trailing comment (`model = "demo"  # or a combo / alias name`), moved so that it starts in the
 * same column when the new value leaves room (else after the space it had, at most two). A pair whose
 * value already equals `value` is left as it is; a multi-line value becomes one line.
 */
function setPair(lines: string[], s: TomlStatement, value: string | number | boolean): string[] {
  const head = lines[s.first]!.slice(0, s.valueStart);
  const lastLine = lines[s.last]!;
  const old = [lines[s.first]!.slice(s.valueStart), ...lines.slice(s.first + 1, s.last + 1)].join("\n");
  const oldValue = s.first === s.last ? lastLine.slice(s.valueStart, s.valueEnd) : old.slice(0, old.length - (lastLine.length - s.valueEnd!));
  try {
    if ((Bun.TOML.parse(`v = ${oldValue}`) as { v?: unknown }).v === value) return lines.slice(s.first, s.last + 1);
  } catch {
    // read with the file, not alone: written afresh
  }
  const valueText = tomlValue(value);
  const hash = s.comment!;
  if (hash < 0) return [head + valueText + lastLine.slice(s.valueEnd)]; // trailing spaces (and a CR) kept
  const gap = hash - lastLine.slice(0, hash).trimEnd().length;
  const room = s.first === s.last ? hash - (head.length + valueText.length) : 0;
  const pad = Math.max(Math.max(1, Math.min(gap, 2)), room);
  return [head + valueText + " ".repeat(pad) + lastLine.slice(hash)];
}

/**
 * Where the heading comment of the header at statement `to` starts, among the statements [from, to): the
 * comment lines directly above the header (no blank line between them and it) read as its heading
 * (`# Providers I use` over `[model_providers.openai]`) and stay with it, so a key added to the
 * section before goes above them. `to` itself when there is no such comment, or when `to` is the end
 * of the file (a comment at the end of the last section is the section's).
 */
function headingStart(stmts: TomlStatement[], from: number, to: number): number {
  const next = stmts[to];
  if (!next || (next.kind !== "table" && next.kind !== "arrayTable")) return to;
  let start = to;
  while (start > from && stmts[start - 1]!.kind === "comment") start--;
  return start;
}

/**
 * TOML text with top-level keys `top` and the keys `table` of table `[tableName]` (its dotted name's
 * parts: `["model_providers", "switchyard"]`) set. A key already set (as `model` or `"model"`) has its
 * value replaced ({@link setPair}); a missing key is added after the last non-blank statement of its
 * section (top-level keys before the first table) that is not part of the next header's heading
 * comment (see {@link headingStart}), else where the section starts; a missing table is appended. Each key of
 * `commentOut` the table sets is commented out (`# ` before each of its lines), below a comment line
 * `# <why>`. Every other byte stays; a file with `\r\n` line ends gets them on every line end added
 * (also the one after a last line that had none), and a leading byte order mark (U+FEFF) is kept at
 * the start. Throws {@link TomlScanError} on text the scan cannot read.
 */
export function editTomlText(
  before: string | undefined,
  top: Array<[string, string | number | boolean]>,
  tableName: string[],
  table: Array<[string, string | number | boolean]>,
  commentOut: { keys: string[]; why: string } = { keys: [], why: "" },
): string {
  const bom = before?.startsWith("\uFEFF") ? "\uFEFF" : "";
  const body = before?.slice(bom.length);
  const lines = body === undefined || body === "" ? [] : body.replace(/\n$/, "").split("\n");
  const cr = body !== undefined && /\r\n/.test(body) ? "\r" : "";
  // a CRLF file whose last line has no line end: the end added after it is a CRLF too
  if (cr && lines.length > 0 && !lines.at(-1)!.endsWith("\r")) lines[lines.length - 1] += "\r";
  const scan = () => tomlStatements(lines.join("\n") + "\n");
  const isHeader = (s: TomlStatement) => s.kind === "table" || s.kind === "arrayTable";
  /**
   * Sets `k` in the section of statements [from, to) (indices into `stmts`), inserting it after the
   * section's last non-blank statement before the next header's heading comment, else at line `at`.
   */
  const set = (stmts: TomlStatement[], from: number, to: number, at: number, k: string, v: string | number | boolean) => {
    const section = stmts.slice(from, to);
    const found = section.find((s) => s.kind === "pair" && sameKey(s.key, [k]));
    if (found) {
      lines.splice(found.first, found.last - found.first + 1, ...setPair(lines, found, v));
      return;
    }
    const lastFilled = section.slice(0, headingStart(stmts, from, to) - from).findLast((s) => s.kind !== "blank");
    lines.splice(lastFilled ? lastFilled.last + 1 : at, 0, `${k} = ${tomlValue(v)}${cr}`);
  };
  for (const [k, v] of top) {
    const stmts = scan();
    const firstHeader = stmts.findIndex(isHeader);
    set(stmts, 0, firstHeader < 0 ? stmts.length : firstHeader, 0, k, v);
  }
  const section = (): [TomlStatement[], number, number] => {
    const stmts = scan();
    const h = stmts.findIndex((s) => s.kind === "table" && sameKey(s.key, tableName));
    if (h < 0) return [stmts, -1, -1];
    const next = stmts.findIndex((s, n) => n > h && isHeader(s));
    return [stmts, h, next < 0 ? stmts.length : next];
  };
  if (section()[1] < 0) {
    while (lines.length > 0 && lines.at(-1)!.trim() === "") lines.pop();
    if (lines.length > 0) lines.push(cr);
    lines.push(`[${tableName.join(".")}]${cr}`);
  }
  for (const [k, v] of table) {
    const [stmts, h, end] = section();
    set(stmts, h + 1, end, stmts[h]!.last + 1, k, v);
  }
  for (const k of commentOut.keys) {
    const [stmts, h, end] = section();
    const s = stmts.slice(h + 1, end).find((x) => x.kind === "pair" && sameKey(x.key, [k]));
    if (!s) continue;
    const indent = /^[ \t]*/.exec(lines[s.first]!)![0];
    const commented = lines.slice(s.first, s.last + 1).map((l, n) => `${indent}# ${n === 0 ? l.slice(indent.length) : l}`);
    lines.splice(s.first, s.last - s.first + 1, `${indent}# ${commentOut.why}${cr}`, ...commented);
  }
  return bom + lines.join("\n") + "\n";
}
