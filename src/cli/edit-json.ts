/**
 * Editing a user's JSON settings file in place (Claude Code's and Gemini CLI's settings.json): the
 * members setup owns are set, everything else stays as the user wrote it — other members, their order,
 * comments (Gemini CLI reads its settings.json with comments), line ends, indentation (tabs or N spaces),
 * and a one-line file stays on one line. The edits are jsonc-parser's (`modify` + `applyEdits`, the
 * library VS Code uses for the same job), so only the edited members' text changes.
 */
import { applyEdits, modify, parseTree, type FormattingOptions, type Node } from "jsonc-parser";
import { isObj } from "../../formats/json.ts";
import { describeFailure, jsonFailure } from "./parse-position.ts";

/** A JSON object as parsed. */
export type Obj = Record<string, unknown>;

/**
 * `text` with its `//` and `/* … *\/` comments outside strings blanked (newlines kept), as Gemini CLI
 * reads its settings.json (strip-json-comments, Gemini CLI 0.61's settings loader).
 */
export function stripJsonComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      // blanked, not cut: what follows keeps its column for an error's position (parse-position.ts)
      const start = i;
      while (i < text.length && text[i] !== "\n") i++;
      out += " ".repeat(i - start);
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * The JSON object in `text` (empty for no file); with `comments`, read as JSON with comments (Gemini
 * CLI's settings.json). Throws an Error naming `path` and the line and column of the first fault when
 * the text is not JSON, or holds something other than an object.
 */
export function parseJsonFile(path: string, text: string | undefined, comments = false): Obj {
  if (text === undefined || text.trim() === "") return {};
  let v: unknown;
  const json = comments ? stripJsonComments(text) : text;
  try {
    v = JSON.parse(json);
  } catch {
    const where = jsonFailure(json);
    throw new Error(`${path} is not valid JSON${comments ? " (comments aside)" : ""}${where ? ` at ${describeFailure(where)}` : ""}; nothing was written: fix or move it, then run setup again`);
  }
  if (!isObj(v)) throw new Error(`${path} does not hold a JSON object`);
  return v;
}

/** Sets `obj.a.b.c = value`, creating objects on the way; refuses (throws) to replace a non-object. Answers whether the value changed. */
function setPath(path: string, obj: Obj, keys: string[], value: unknown): boolean {
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    const next = cur[k];
    if (next === undefined) cur[k] = {};
    else if (!isObj(next)) throw new Error(`${path}: ${keys.join(".")} cannot be set because ${k} is not an object`);
    cur = cur[k] as Obj;
  }
  const changed = JSON.stringify(cur[keys.at(-1)!]) !== JSON.stringify(value);
  cur[keys.at(-1)!] = value;
  return changed;
}

/**
 * Throws (naming `path` and the member) when a member on `keys`' path is written twice in one object of
 * `text`: `JSON.parse`, like the CLIs, keeps the last, while an edit in place would change the first,
 * so the setting would not apply (or the edit would meet a value of another type).
 */
function refuseRepeatedMember(path: string, text: string, keys: readonly string[]): void {
  let node: Node | undefined = parseTree(text);
  for (let i = 0; i < keys.length && node?.type === "object"; i++) {
    const named: Node[] = (node.children ?? []).filter((p) => p.children?.[0]?.value === keys[i]);
    if (named.length > 1) throw new Error(`${path}: "${keys.slice(0, i + 1).join(".")}" is written ${named.length} times (the last one counts); keep one, then run setup again; nothing was written`);
    node = named[0]?.children?.[1];
  }
}

/**
 * How new members are laid out in `text`: its line end (CRLF or LF) and its indentation (a tab, or the
 * number of spaces of its first indented line); undefined for a file on one line, whose edits stay on
 * that line.
 */
export function jsonFormatting(text: string): FormattingOptions | undefined {
  if (!text.trim().includes("\n")) return undefined;
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ";
  return indent.startsWith("\t") ? { insertSpaces: false, tabSize: 1, eol } : { insertSpaces: true, tabSize: indent.length, eol };
}

/**
 * The JSON file `before` (undefined: no file) with `sets` applied, each a member path and its value.
 * The file as it was when every value is already set; a new or empty file (or one holding only `{}`)
 * written with two spaces and a final newline; a file on one line without comments written on one line
 * (`JSON.stringify`, its final newline kept); otherwise only the changed members' text is edited (see
 * the module's docstring). Throws as {@link parseJsonFile} does, when a path crosses a non-object, or
 * when a member on an edited path is written twice in one object (nothing is written then).
 */
export function editJson(path: string, before: string | undefined, sets: Array<[string[], unknown]>, comments = false): string {
  const obj = parseJsonFile(path, before, comments);
  const changed = sets.filter(([keys, value]) => setPath(path, obj, keys, value));
  if (before === undefined || /^\s*(\{\s*\})?\s*$/.test(before)) return JSON.stringify(obj, null, 2) + "\n";
  if (changed.length === 0) return before;
  const formattingOptions = jsonFormatting(before);
  // One line without comments: the object on one line again (jsonc-parser's inserts put a space after
  // each new member's colon, the rest of the line has none), with the file's final newline if it had one.
  if (formattingOptions === undefined && stripJsonComments(before) === before) return JSON.stringify(obj) + (/\r?\n$/.exec(before)?.[0] ?? "");
  for (const [keys] of changed) refuseRepeatedMember(path, before, keys);
  let text = before;
  for (const [keys, value] of changed) text = applyEdits(text, modify(text, keys, value, { formattingOptions }));
  return text;
}
