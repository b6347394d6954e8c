/** The string and template literals of a source file, for checks of what the code shows users (test/spec-citations.test.ts). */

/**
 * The string and template literals of a TypeScript or TSX source (their text, with the line each
 * starts on), skipping comments and regular-expression literals; a template's `${…}` is code again.
 * A scanner good enough for this repository's sources, not a full lexer.
 */
export function literalsOf(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const lineAt = (i: number) => text.slice(0, i).split("\n").length;
  /** Brace depth of each `${` opened, innermost last: a `}` at that depth goes back into the template. */
  const holes: number[] = [];
  let depth = 0;
  let i = 0;
  let prev = "";
  const template = (start: number): number => {
    // scans a template's text from `start` (after the backtick or the `}` that closed a hole)
    let j = start;
    while (j < text.length && text[j] !== "`") {
      if (text[j] === "\\") j += 2;
      else if (text[j] === "$" && text[j + 1] === "{") {
        out.push({ line: lineAt(start), text: text.slice(start, j) });
        holes.push(depth);
        depth++;
        return j + 2;
      } else j++;
    }
    out.push({ line: lineAt(start), text: text.slice(start, j) });
    return j + 1;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === "/" && text[i + 1] === "/") {
      i = text.indexOf("\n", i);
      if (i < 0) break;
      continue;
    }
    if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
      continue;
    }
    if (c === "/" && (prev === "" || "(,=:[!&|?{};+-*%<>~^".includes(prev) || /\breturn\s*$/.test(text.slice(Math.max(0, i - 8), i)))) {
      // a regular-expression literal: to its closing slash, outside any class
      let j = i + 1;
      let cls = false;
      while (j < text.length && text[j] !== "\n" && (cls || text[j] !== "/")) {
        if (text[j] === "\\") j++;
        else if (text[j] === "[") cls = true;
        else if (text[j] === "]") cls = false;
        j++;
      }
      i = j + 1;
      prev = "/";
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      out.push({ line: lineAt(i), text: text.slice(i + 1, j) });
      i = j + 1;
      prev = "a";
      continue;
    }
    if (c === "`") {
      i = template(i + 1);
      prev = "a";
      continue;
    }
    if (c === "{") depth++;
    if (c === "}") {
      depth--;
      if (holes.length > 0 && holes[holes.length - 1] === depth) {
        holes.pop();
        i = template(i + 1);
        prev = "a";
        continue;
      }
    }
    if (!/\s/.test(c)) prev = /[\w$)\]]/.test(c) ? "a" : c;
    i++;
  }
  return out;
}
