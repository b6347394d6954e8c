/**
 * Where a point of a JSON text (a model's tool-call arguments, read a character at a time as they
 * stream) stands, for writing a restored value there (pipeline/restore-placeholders.ts, SPEC S-3):
 * how many string literals enclose it, counting a JSON document written inside a string value
 * (`{"body": "{\"pw\": \"…\"}"}`: two, so a value written there is JSON-escaped twice), and whether
 * a string that opens there is a value (not an object's key) of the outer document.
 *
 * A string's content is read as a document of its own when it starts (after white space) with `{`,
 * or with `[` followed by what starts a JSON value or `]` (`[{`, `["`, `[1`, `[]`: not `[note]` or a
 * Markdown link, which are plain text). Escapes are decoded per level (`\"`, `\\`, `\n`, `\uXXXX`),
 * so a document nested at any depth is followed. Pure: no I/O. Never throws.
 */

/** Levels followed at most (a document in a string in a string …): deeper, a string counts as plain text. */
const MAX_LEVELS = 8;

const SIMPLE: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", '"': '"', "\\": "\\", "/": "/" };

/** One level's lexer state. */
interface Level {
  /** Read as JSON (level 0 always; a string's content once it started like a document). */
  active: boolean;
  /** Whether its first character other than white space is still to come (it decides {@link active}); 2: a `[` came, the next decides. */
  pending: 0 | 1 | 2;
  inString: boolean;
  /** After a `\`; or the hex digits of a `\u` escape read so far (then a string). */
  escape: boolean | string;
}

/** The lexer of one JSON text and the documents inside its strings (see the module doc). */
export class JsonNesting {
  private readonly levels: Level[] = [{ active: true, pending: 0, inString: false, escape: false }];
  /** Level 0's open containers: `{` or `[`. */
  private readonly containers: string[] = [];
  /** Level 0: whether the next string in the innermost object is a key. */
  private expectKey = false;

  /** Feeds `text` (the next characters of the outer text, as written). */
  feed(text: string): void {
    for (let i = 0; i < text.length; i++) this.char(0, text[i]!);
  }

  /** String literals enclosing the current point, at consecutive levels from the outer one (0: outside any). */
  depth(): number {
    let d = 0;
    while (d < this.levels.length && this.levels[d]!.active && this.levels[d]!.pending === 0 && this.levels[d]!.inString) d++;
    return d;
  }

  /** Whether a `"` written now opens a string that is a value of the outer document (not a key, not inside a string). */
  valueStringNext(): boolean {
    const l = this.levels[0]!;
    return !l.inString && !this.expectKey;
  }

  private char(n: number, c: string): void {
    const l = this.levels[n]!;
    if (!l.inString) {
      if (n === 0) this.structure(c);
      if (c === '"') {
        l.inString = true;
        if (n + 1 < MAX_LEVELS) this.levels[n + 1] = { active: false, pending: 1, inString: false, escape: false };
      }
      return;
    }
    if (l.escape !== false) {
      if (typeof l.escape === "string") {
        l.escape += c;
        if (l.escape.length < 4) return;
        const code = /^[0-9A-Fa-f]{4}$/.test(l.escape) ? parseInt(l.escape, 16) : -1;
        l.escape = false;
        if (code >= 0) this.inner(n + 1, String.fromCharCode(code));
        return;
      }
      if (c === "u") {
        l.escape = "";
        return;
      }
      l.escape = false;
      this.inner(n + 1, SIMPLE[c] ?? c);
      return;
    }
    if (c === "\\") l.escape = true;
    else if (c === '"') {
      l.inString = false;
      this.levels.length = n + 1;
    } else this.inner(n + 1, c);
  }

  /** A character of the content of a level-`n-1` string, for level `n`. */
  private inner(n: number, c: string): void {
    const l = this.levels[n];
    if (!l) return;
    if (l.pending === 1) {
      if (c === " " || c === "\n" || c === "\r" || c === "\t") return;
      if (c === "{") (l.pending = 0), (l.active = true);
      else if (c === "[") l.pending = 2;
      else l.pending = 0;
      return;
    }
    if (l.pending === 2) {
      if (c === " " || c === "\n" || c === "\r" || c === "\t") return;
      l.pending = 0;
      if (!/[[{"\]\d-]/.test(c)) return;
      l.active = true;
    }
    if (l.active) this.char(n, c);
  }

  /** Level 0's containers and key/value position. */
  private structure(c: string): void {
    if (c === "{") {
      this.containers.push("{");
      this.expectKey = true;
    } else if (c === "[") {
      this.containers.push("[");
      this.expectKey = false;
    } else if (c === "}" || c === "]") {
      this.containers.pop();
      this.expectKey = false;
    } else if (c === ":") this.expectKey = false;
    else if (c === ",") this.expectKey = this.containers.at(-1) === "{";
  }
}
