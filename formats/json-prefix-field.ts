/**
 * A top-level string field read from the start of a JSON object text that may be cut short (the first
 * bytes of a request body that has not fully arrived). Used where only a bounded prefix of a body is
 * read on purpose: the model a refused request named (pipeline/guard.ts, a disabled client key's 403).
 * Pure: no I/O.
 */

/**
 * The string value of the top-level key `name` of the JSON object that `prefix` starts with, when the
 * prefix holds that key and its whole value; undefined when it does not (yet), when the value is no
 * string, or when the text is not a JSON object as far as it goes. Keys are compared decoded (escapes
 * allowed); the first occurrence counts (a complete body is parsed with `JSON.parse` instead, where
 * the last one does). Keys and values of nested objects and arrays are skipped, never matched.
 * `prefix` is UTF-8; a multi-byte character cut at its end is harmless (the text there is incomplete
 * anyway). Cost: one pass over the characters up to the field.
 */
export function topLevelStringField(prefix: Uint8Array, name: string): string | undefined {
  const text = new TextDecoder("utf-8").decode(prefix);
  let i = skipSpace(text, 0);
  if (text[i] !== "{") return undefined;
  i++;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] !== '"') return undefined;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    const key = decodeString(text.slice(i, keyEnd));
    i = skipSpace(text, keyEnd);
    if (text[i] !== ":") return undefined;
    i = skipSpace(text, i + 1);
    if (key === name) {
      if (text[i] !== '"') return undefined;
      const end = stringEnd(text, i);
      return end < 0 ? undefined : decodeString(text.slice(i, end));
    }
    i = valueEnd(text, i);
    if (i < 0) return undefined;
    i = skipSpace(text, i);
    if (text[i] !== ",") return undefined;
    i++;
  }
}

/** The index after JSON whitespace from `i`. */
function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === " " || text[i] === "\n" || text[i] === "\r" || text[i] === "\t")) i++;
  return i;
}

/** The index after the string that opens at `i` (a `"`), or -1 when the text ends inside it. */
function stringEnd(text: string, i: number): number {
  for (let k = i + 1; k < text.length; k++) {
    const c = text[k];
    if (c === "\\") k++;
    else if (c === '"') return k + 1;
  }
  return -1;
}

/** A JSON string literal (quotes included) decoded, or undefined when it is malformed. */
function decodeString(literal: string): string | undefined {
  try {
    const v: unknown = JSON.parse(literal);
    return typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The index after the JSON value that starts at `i` (a string, an object or array with whatever it
 * holds, or a number / literal), or -1 when the text ends before the value does. Not a validator: it
 * only finds where the value ends.
 */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === undefined) return -1;
  if (c === '"') return stringEnd(text, i);
  if (c === "{" || c === "[") {
    let depth = 0;
    for (let k = i; k < text.length; k++) {
      const d = text[k];
      if (d === '"') {
        k = stringEnd(text, k);
        if (k < 0) return -1;
        k--;
      } else if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) return k + 1;
      }
    }
    return -1;
  }
  // a number, true, false or null: up to the next separator (the text must go on past it)
  let k = i;
  while (k < text.length && text[k] !== "," && text[k] !== "}" && text[k] !== "]" && text[k] !== " " && text[k] !== "\n" && text[k] !== "\r" && text[k] !== "\t") k++;
  return k < text.length ? k : -1;
}
