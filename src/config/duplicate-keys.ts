/**
 * Keys written twice in one mapping of a config file (SPEC 2.3: the file is validated on load).
 * YAML requires a mapping's keys to be unique, but Bun's parser (`Bun.YAML.parse`, 1.4) keeps the last
 * of two silently: a file that gains a second `settings:` or `keys:` block (say, a README snippet
 * pasted at its end) loses everything under the first without a word, keys and pricing included.
 *
 * This is a line scanner of block mappings, not a YAML parser: it follows indentation and `- ` items
 * to know which mapping a `key:` line belongs to, skips block scalars (`|`, `>`), flow collections
 * (`{…}`, `[…]`, whose own keys it does not look into) and comments, and reports nothing at all for
 * a document it cannot follow for sure (anchors, aliases and merge keys, which make a repeated key
 * legitimate, tags, complex `?` keys, several documents, tabs in indentation, a multi-line quoted
 * scalar): it may miss a duplicate there, never invent one.
 *
 * The same scan gives each key's line ({@link keyLines}), by which config errors name the line of the
 * key they are about ({@link withLines}).
 */
import { ConfigError, formatPath, ROOT_PATH, type PathSegment } from "./errors.ts";

/** A key written twice in one mapping: where (the mapping's path and the key), and both lines (1-based). */
export interface DuplicateKey {
  /** The path of the repeated key: the mapping's path, then the key. */
  path: PathSegment[];
  key: string;
  first: number;
  second: number;
}

/** A mapping being read: the column of its keys, its path in the document, its keys so far. */
interface Mapping {
  col: number;
  path: PathSegment[];
  keys: Map<string, number>;
  /** The last key read (the one whose value the following deeper lines are). */
  last?: string;
  /** Items seen per key whose value is a block sequence. */
  items: Map<string, number>;
}

/** A line the scanner cannot follow for sure: the whole document is then left alone. */
class CannotFollow extends Error {}

/** The key of a `key: value` or `key:` text, its length up to the colon, or undefined for no key. */
function keyOf(rest: string): { key: string; end: number } | undefined {
  const q = rest[0];
  if (q === '"' || q === "'") {
    const m = q === '"' ? /^"((?:[^"\\]|\\.)*)"\s*:(?:\s|$)/.exec(rest) : /^'((?:[^']|'')*)'\s*:(?:\s|$)/.exec(rest);
    if (!m) {
      // A quoted scalar that does not close on its line may go on over several lines.
      if (!(q === '"' ? /^"(?:[^"\\]|\\.)*"/ : /^'(?:[^']|'')*'/).test(rest)) throw new CannotFollow();
      return undefined;
    }
    const key = q === '"' ? (JSON.parse(`"${m[1]}"`) as string) : m[1].replaceAll("''", "'");
    return { key, end: m[0].length };
  }
  if (q === "?" && /^\?(\s|$)/.test(rest)) throw new CannotFollow();
  if (q === "{" || q === "[" || q === "#") return undefined;
  const colon = /:(\s|$)/.exec(rest);
  if (!colon) return undefined;
  const key = rest.slice(0, colon.index).trim();
  // `a # b: c` is a scalar with a comment, not a key
  if (key === "" || /\s#/.test(key)) return undefined;
  return { key, end: colon.index + 1 };
}

/** Whether the brackets of a flow collection starting `text` close on it (quotes skipped). */
function flowCloses(text: string): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === "#" && depth === 0) break;
  }
  return depth <= 0;
}

/**
 * Every key written a second time in the same block mapping of `text`, in file order; empty when
 * there is none or when the document uses what the scanner does not follow (see the module comment).
 */
export function duplicateKeys(text: string): DuplicateKey[] {
  try {
    return scan(text);
  } catch (e) {
    if (e instanceof CannotFollow) return [];
    throw e;
  }
}

/**
 * The line (1-based) of each key and each `- ` item of `text`'s block mappings and sequences, by its
 * path as {@link formatPath} writes it (`keys[0].limits.rpm`, `accounts[1]`; the first line where a
 * key written twice appears). Keys inside a flow collection (`{ id: a }`) are not listed: their
 * item's or key's line is. A document the scanner cannot follow for sure (see the module comment) is
 * listed up to the line it stops at, where what came before is certain.
 */
export function keyLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  try {
    scan(text, lines);
  } catch (e) {
    if (!(e instanceof CannotFollow)) throw e;
  }
  return lines;
}

function scan(text: string, keyLine?: Map<string, number>): DuplicateKey[] {
  const lines = text.split(/\r?\n/);
  const stack: Mapping[] = [];
  const out: DuplicateKey[] = [];
  /** Lines indented deeper than this belong to a block scalar being skipped. */
  let skipDeeperThan = -1;
  /** Inside a flow collection that spans lines: skipped until its brackets close. */
  let flowText: string | undefined;
  let content = false;
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n];
    if (flowText !== undefined) {
      flowText += `\n${raw}`;
      if (flowCloses(flowText)) flowText = undefined;
      continue;
    }
    if (/^\s*(#.*)?$/.test(raw)) continue;
    const indent = /^ */.exec(raw)![0].length;
    if (skipDeeperThan >= 0) {
      if (indent > skipDeeperThan) continue;
      skipDeeperThan = -1;
    }
    if (raw[indent] === "\t") throw new CannotFollow();
    if (indent === 0 && /^(---|\.\.\.)(\s|$)/.test(raw)) {
      if (content || raw.startsWith("...")) throw new CannotFollow();
      continue;
    }
    // Anchors, aliases, tags and merge keys (outside quotes and comments): not followed.
    const bare = raw.replace(/"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'/g, '""').replace(/(^|\s)#.*$/, "");
    if (/(^|[\s[{,])[&*!]/.test(bare) || /^\s*(-\s+)*<<\s*:/.test(bare)) throw new CannotFollow();
    content = true;
    let col = indent;
    let rest = raw.slice(indent);
    let item = false;
    if (/^-(\s|$)/.test(rest)) {
      // A `- ` item: a new entry of the sequence that is the value of its parent's last key.
      item = true;
      while (stack.length > 0 && stack.at(-1)!.col > col) stack.pop();
      const parent = stack.at(-1);
      const dash = /^-\s*/.exec(rest)![0].length;
      col += dash;
      rest = rest.slice(dash);
      // `- - x` (a sequence of sequences) and an item whose content starts on the next line: not followed
      if (rest === "" || rest.startsWith("#") || /^-(\s|$)/.test(rest)) throw new CannotFollow();
      let path: PathSegment[] = [];
      if (parent?.last !== undefined) {
        const i = (parent.items.get(parent.last) ?? -1) + 1;
        parent.items.set(parent.last, i);
        path = [...parent.path, parent.last, i];
        if (keyLine) setOnce(keyLine, formatPath(path), n + 1);
      }
      stack.push({ col, path, keys: new Map(), items: new Map() });
    }
    const k = keyOf(rest);
    if (!k) {
      if ((rest[0] === "{" || rest[0] === "[") && !flowCloses(rest)) flowText = rest;
      else if (/^[|>]/.test(rest)) skipDeeperThan = col - 1;
      continue;
    }
    if (!item) while (stack.length > 0 && stack.at(-1)!.col > col) stack.pop();
    let top = stack.at(-1);
    if (!top || top.col < col) {
      const path: PathSegment[] = top?.last !== undefined ? [...top.path, top.last] : [];
      top = { col, path, keys: new Map(), items: new Map() };
      stack.push(top);
    }
    const first = top.keys.get(k.key);
    if (first !== undefined) out.push({ path: [...top.path, k.key], key: k.key, first, second: n + 1 });
    else top.keys.set(k.key, n + 1);
    if (keyLine) setOnce(keyLine, formatPath([...top.path, k.key]), n + 1);
    top.last = k.key;
    const value = rest.slice(k.end).trim();
    if (/^[|>]/.test(value)) skipDeeperThan = col;
    else if ((value[0] === "{" || value[0] === "[") && !flowCloses(value)) flowText = value;
    else if ((value[0] === '"' || value[0] === "'") && !(value[0] === '"' ? /^"(?:[^"\\]|\\.)*"/ : /^'(?:[^']|'')*'/).test(value)) throw new CannotFollow();
  }
  return out;
}

/** Sets `key` in `map` unless it is there (a key written twice keeps its first line). */
function setOnce(map: Map<string, number>, key: string, line: number): void {
  if (!map.has(key)) map.set(key, line);
}

/**
 * `err` with each issue's `line` (errors.ts ConfigIssue) in `text`: the line of the key at its path, else of
 * the nearest enclosing key or item written there (duplicate-keys.ts keyLines). Issues of the whole
 * document, or that have a line already, are left as they are.
 */
export function withLines(err: ConfigError, text: string): ConfigError {
  if (err.issues.every((i) => i.path === ROOT_PATH || i.line !== undefined)) return err;
  const lines = keyLines(text);
  if (lines.size === 0) return err;
  const lineOf = (path: string): number | undefined => {
    for (let p = path; p !== ""; p = parentPath(p)) {
      const n = lines.get(p);
      if (n !== undefined) return n;
    }
    return undefined;
  };
  return new ConfigError(
    err.issues.map((i) => {
      const line = i.path === ROOT_PATH || i.line !== undefined ? undefined : lineOf(i.path);
      return line === undefined ? i : { ...i, line };
    }),
    err.file,
  );
}

/** The path of the key or item enclosing `path` (errors.ts formatPath's form): `a.b[0].c` → `a.b[0]` → `a.b` → `a` → "". */
function parentPath(path: string): string {
  const m = /(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[(?:\d+|"(?:[^"\\]|\\.)*")\])$/.exec(path);
  return m ? path.slice(0, m.index) : "";
}
