/**
 * Where a CLI's settings file fails to parse, for `switchyard setup`'s refusal to edit it (src/cli/setup.ts).
 * Bun's parsers say what is wrong but not where: JavaScriptCore's `JSON.parse` throws "JSON Parse
 * error: Expected '}'" and Bun's TOML parser "TOML Parse error: Cannot redefine key 'a'", neither with
 * a position (the error's own `line` / `column` are the JavaScript caller's). So JSON is scanned here
 * by its grammar (RFC 8259) to the first byte it cannot take, and a TOML file is cut after each line
 * until Bun's parser refuses every longer cut. Pure functions; no file is read here.
 */

/** Where and why a text does not parse: 1-based line and column (UTF-16 units, as editors count BMP text). */
export interface ParseFailure {
  line: number;
  /** Undefined when only the line is known (TOML). */
  column?: number;
  /** What the parser wanted there and what it found ("expected ',' or '}', found '\"'"). */
  what: string;
}

/** Line and column (1-based) of `offset` in `text`. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/** Thrown inside {@link jsonFailure}'s scan: the offset and what was expected there. */
class Stop {
  constructor(
    readonly at: number,
    readonly expected: string,
  ) {}
}

/** The character at `i` as an error names it: `'}'`, "end of file", "a line break". */
function found(text: string, i: number): string {
  if (i >= text.length) return "the end of the file";
  const c = text[i]!;
  if (c === "\n" || c === "\r") return "a line break";
  if (c === "\t") return "a tab";
  if (c.charCodeAt(0) < 0x20 || c === "\uFEFF") return `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
  return `'${c}'`;
}

/**
 * The first place `text` breaks JSON's grammar (RFC 8259: one value, whitespace around it; no
 * comments, no trailing commas, strings in double quotes without raw control characters), with what
 * was expected there; undefined when it is valid JSON, or nested too deep to scan (a RangeError).
 */
export function jsonFailure(text: string): ParseFailure | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const digits = (what: string) => {
    if (!(text[i]! >= "0" && text[i]! <= "9")) throw new Stop(i, what);
    while (text[i]! >= "0" && text[i]! <= "9") i++;
  };
  const string = () => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) throw new Stop(i, "a closing '\"'");
      const c = text.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) throw new Stop(i, "a closing '\"' before the line ends (or the character escaped)");
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Stop(i + 2, "four hex digits after \\u");
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else throw new Stop(i + 1, "an escape (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)");
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Stop(i, "a property name in double quotes");
        string();
        ws();
        if (text[i] !== ":") throw new Stop(i, "':' after the property name");
        i++;
        value();
        ws();
        if (text[i] === "}") return void i++;
        if (text[i] !== ",") throw new Stop(i, "',' or '}'");
        i++;
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === "]") return void i++;
        if (text[i] !== ",") throw new Stop(i, "',' or ']'");
        i++;
      }
    }
    if (c === '"') return string();
    for (const word of ["true", "false", "null"]) {
      if (text.startsWith(word, i)) return void (i += word.length);
    }
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      if (text[i] === "-") i++;
      if (text[i] === "0") i++;
      else digits("a digit");
      if (text[i] === ".") {
        i++;
        digits("a digit after '.'");
      }
      if (text[i] === "e" || text[i] === "E") {
        i++;
        if (text[i] === "+" || text[i] === "-") i++;
        digits("a digit in the exponent");
      }
      return;
    }
    throw new Stop(i, "a value (an object, array, string, number, true, false or null)");
  };
  try {
    value();
    ws();
    if (i < text.length) throw new Stop(i, "the end of the file after the value");
    return undefined;
  } catch (e) {
    if (!(e instanceof Stop)) return undefined;
    return { ...lineColumn(text, e.at), what: `expected ${e.expected}, found ${found(text, e.at)}` };
  }
}

/** Bun's TOML message without its prefix, a control character it shows as `(0x0A)` said in words. */
function tomlWhat(message: string): string {
  const m = message.replace(/^TOML Parse error:\s*/, "").replace(/\(0x([0-9A-Fa-f]{2})\)/g, (_, hex: string) => {
    const code = parseInt(hex, 16);
    return code === 0x0a || code === 0x0d ? "the end of the line" : code === 0x09 ? "a tab" : `U+00${hex.toUpperCase()}`;
  });
  return m.charAt(0).toLowerCase() + m.slice(1);
}

/**
 * The line where `text` stops being TOML for `parse` (Bun's `Bun.TOML.parse`), with the parser's own
 * words for what is wrong; undefined when it parses. The line is the one after the longest run of
 * whole lines from the top that parses: a table, array or multi-line string left open is refused at
 * the line that opens it; a key defined twice at its second definition. No column: the parser gives
 * none. The text of the line is not returned (settings files hold keys).
 */
export function tomlFailure(text: string, parse: (t: string) => unknown = (t) => Bun.TOML.parse(t)): ParseFailure | undefined {
  let message: string;
  try {
    parse(text);
    return undefined;
  } catch (e) {
    message = e instanceof Error ? e.message : String(e);
  }
  const lines = text.split("\n");
  let good = 0;
  for (let n = 1; n < lines.length; n++) {
    try {
      parse(lines.slice(0, n).join("\n"));
      good = n;
    } catch {
      // not a whole TOML document yet (or already broken): a longer cut may parse again
    }
  }
  return { line: Math.min(good + 1, lines.length), what: tomlWhat(message) };
}

/** `line 4, column 3: expected …` (or `line 4: …` without a column), for an error message. */
export function describeFailure(f: ParseFailure): string {
  return `line ${f.line}${f.column === undefined ? "" : `, column ${f.column}`}: ${f.what}`;
}
