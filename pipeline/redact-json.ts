/**
 * Redaction of JSON text (SPEC R-1, S-3): Chat and Responses tool-call `arguments` travel as a JSON
 * string, where the model reads the decoded values. Redacting the raw text went wrong after an escape:
 * in `"a\nbob@example.com"` the `n` of `\n` joined the address (`\[EMAIL_1]`, an invalid escape), and a
 * key or an address right after `\n` was not recognised at all and went upstream in clear.
 *
 * So each string literal is decoded, redacted as the text the model reads, and written back
 * JSON-encoded (only when something was replaced; otherwise its bytes stay as the client sent them,
 * so the body of an unchanged turn stays byte-identical and a provider's prefix cache still hits).
 * A member's value is redacted knowing the member's name, so the value of `"password": "…"` is a
 * secret as in `password: …` text. Object keys are mostly a tool schema's parameter names, but an
 * address used as a key (`{"contacts": {"bob@example.com": "admin"}}`) is data: with `redactKey` they
 * pass through it too (re-encoded only when it changed it). Outside strings, valid JSON holds only numbers, literals and punctuation:
 * a number that is itself a value to replace (a card number written as a number) becomes the
 * placeholder as a JSON string. Text that is not valid JSON (a truncated call) is handled the same way
 * for its string literals (an unterminated last one included) and as plain text between them; text
 * that does not start like JSON at all is plain text. The result never holds an escape JSON does not
 * have, whatever the input held.
 *
 * A string or number item of an array that is a member's value (`{"passwords": ["…"]}`,
 * `{"passcodes": [4321]}`) is redacted with that member's name as well (./secret-items.ts decides
 * which names).
 *
 * A plain text slot that is a whole JSON document (a tool result from an MCP server, shell output
 * wrapped as `{"stdout": "…"}`: it starts with `{` or `[` and parses) is redacted the same way
 * ({@link redactJsonDocument}), for the same reason.
 */

import { itemMember } from "./secret-items.ts";

/**
 * `text` (JSON as the wire carries it) with every string value passed through `redact` (with the
 * member's name, for a value right after `"name":`) and, given `redactKey`, every object key through
 * it (see the module doc). Never throws.
 */
export function redactJsonText(text: string, redact: (s: string, member?: string, number?: boolean) => string, redactKey?: RedactKey): string {
  const lead = /^\s*(.)/.exec(text)?.[1];
  if (lead !== "{" && lead !== "[" && lead !== '"') return redact(text);
  return redactLiterals(text, parses(text), redact, redactKey);
}

/**
 * A plain text that is a JSON document (a tool result from an MCP server, JSON-wrapped shell output):
 * `text` redacted as {@link redactJsonText} does, when it starts with `{` or `[` (after whitespace) and
 * parses; undefined otherwise (the caller redacts it as plain text). Never throws.
 */
export function redactJsonDocument(text: string, redact: (s: string, member?: string, number?: boolean) => string, redactKey?: RedactKey): string | undefined {
  const lead = /^\s*(.)/.exec(text)?.[1];
  if ((lead !== "{" && lead !== "[") || !parses(text)) return undefined;
  return redactLiterals(text, true, redact, redactKey);
}

/**
 * Calls `visit` with the decoded text of each string literal of `text` that holds a `\u` escape, and so
 * on into each such text (a JSON document inside a JSON string writes its escapes as `\\u…`): the text
 * the model reads there, which `text` as written may not show (`"Dear \u005bEMAIL_1]"` reads
 * `Dear [EMAIL_1]`), for holding back placeholder-shaped text before any value is numbered. Only a `\u`
 * escape writes a letter, a digit or a bracket, so a text without one is not scanned further. Quotes
 * are paired as JSON pairs them, also in text that is not JSON (then a span between quotes may be
 * visited that is no literal: visiting more only holds back more). Never throws.
 */
export function escapedLiterals(text: string, visit: (decoded: string) => void): void {
  if (!text.includes("\\u")) return;
  const n = text.length;
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i)) {
    let j = i + 1;
    while (j < n && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
    const body = text.slice(i + 1, Math.min(j, n));
    if (body.includes("\\u")) {
      const decoded = decodeBody(body);
      visit(decoded);
      escapedLiterals(decoded, visit);
    }
    if (j >= n) return;
    i = j + 1;
  }
}

/**
 * Redacts an object key: `clash` says whether a name is already one of that object's (as written, or
 * given to a key before it), so the redactor can give a renamed key a name no other member has.
 */
export type RedactKey = (name: string, clash: (candidate: string) => boolean) => string;

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A JSON number, matched where an array item starts. */
const ITEM_NUMBER = /-?\d[\d.eE+-]*/y;

function redactLiterals(text: string, valid: boolean, redact: (s: string, member?: string, number?: boolean) => string, redactKey?: RedactKey): string {
  // the name of the member whose value may be the next segment's first number (the last literal was its key)
  let keyBefore: string | undefined;
  const between = valid ? (seg: string) => redactNumbers(seg, redact, keyBefore) : redact;
  const n = text.length;
  let out = "";
  let seg = 0;
  let i = 0;
  let lastKey: string | undefined;
  // The object each key belongs to (its `{` by ordinal), for `clash`: the names written in it (read on
  // the first clash check only) and the names given so far.
  const open: number[] = [];
  let objects = 0;
  let written: Array<Set<string>> | undefined;
  /** Per object, the names given to its renamed keys (the unchanged ones are in `written`). */
  const given = new Map<number, Set<string>>();
  let obj = -1;
  const clash = (c: string) => given.get(obj)?.has(c) === true || (written ??= keysWritten(text))[obj]?.has(c) === true;
  let keyName = "";
  const keyRedact = (k: string) => (keyName = redactKey!(k, clash));
  // Per open container: for an array, the member whose value it is (or the one an array around it is
  // under), whose name its string items are redacted with (./secret-items.ts); null for an object.
  const containers: Array<string | undefined | null> = [];
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c !== 0x22 /* " */) {
      if (c === 0x7b /* { */) open.push(objects++), containers.push(null);
      else if (c === 0x7d /* } */) open.pop(), containers.pop();
      else if (c === 0x5b /* [ */) containers.push(afterColon(text, i) ? lastKey : (containers.at(-1) ?? undefined));
      else if (c === 0x5d /* ] */) containers.pop();
      else if (valid && (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) && containers.at(-1)) {
        // a number item of an array under a member (`{"passcodes": [4321]}`): redacted with its name
        const member = itemMember(containers.at(-1)!);
        ITEM_NUMBER.lastIndex = i;
        const num = member === undefined ? null : ITEM_NUMBER.exec(text)?.[0];
        if (num) {
          out += between(text.slice(seg, i));
          const r = redact(num, member, true);
          out += r === num ? num : JSON.stringify(r);
          i = seg = i + num.length;
          continue;
        }
      }
      i++;
      continue;
    }
    out += between(text.slice(seg, i));
    let j = i + 1;
    while (j < n && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
    const closed = j < n;
    const end = closed ? j + 1 : n;
    const lit = text.slice(i, end);
    keyBefore = undefined;
    if (isKey(text, end)) {
      lastKey = keyBefore = decodeBody(lit.slice(1, -1));
      if (redactKey) {
        obj = open.at(-1) ?? -1;
        keyName = lastKey;
        const red = redactLiteral(lit, closed, keyRedact);
        if (red !== lit) {
          let names = given.get(obj);
          if (!names) given.set(obj, (names = new Set()));
          names.add(keyName);
        }
        out += red;
      } else out += lit;
    } else out += redactLiteral(lit, closed, redact, afterColon(text, i) ? lastKey : itemMember(containers.at(-1) ?? undefined));
    i = seg = end;
  }
  return out + between(text.slice(seg));
}

/** The keys written in each object of `text` (by the ordinal of its `{`), decoded. */
function keysWritten(text: string): Array<Set<string>> {
  const keys: Array<Set<string>> = [];
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */) open.push(keys.push(new Set()) - 1);
    else if (c === 0x7d /* } */) open.pop();
    else if (c === 0x22 /* " */) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
      const end = Math.min(j + 1, text.length);
      if (isKey(text, end)) keys[open.at(-1) ?? -1]?.add(decodeBody(text.slice(i + 1, j)));
      i = end - 1;
    }
  }
  return keys;
}

/** Whether the string literal ending at `end` is an object key (a `:` follows it). */
function isKey(text: string, end: number): boolean {
  let k = end;
  while (k < text.length && isSpace(text.charCodeAt(k))) k++;
  return text.charCodeAt(k) === 0x3a /* : */;
}

/** JSON's white space (space, tab, line feed, carriage return): read by code, as a regex per character cost more than the rest of the scan. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Whether the string literal starting at `start` is a member's value (a `:` stands before it). */
function afterColon(text: string, start: number): boolean {
  let k = start - 1;
  while (k >= 0 && isSpace(text.charCodeAt(k))) k--;
  return text.charCodeAt(k) === 0x3a /* : */;
}

function redactLiteral(lit: string, closed: boolean, redact: (s: string, member?: string, number?: boolean) => string, member?: string): string {
  const decoded = decodeBody(closed ? lit.slice(1, -1) : lit.slice(1));
  const red = member === undefined ? redact(decoded) : redact(decoded, member);
  if (red === decoded) return lit;
  const enc = JSON.stringify(red);
  return closed ? enc : enc.slice(0, -1);
}

/**
 * Numbers between strings of valid JSON: one that redacts to something else becomes that text as a
 * JSON string. `member`: the key the segment follows; a number right after its `:` is that member's
 * value (`{"password": 1234}`: a PIN under a secret-named member is a secret).
 */
function redactNumbers(seg: string, redact: (s: string, member?: string, number?: boolean) => string, member: string | undefined): string {
  if (!/\d/.test(seg)) return seg;
  return seg.replace(/-?\d[\d.eE+-]*/g, (num: string, at: number) => {
    const r = member !== undefined && /^\s*:\s*$/.test(seg.slice(0, at)) ? redact(num, member, true) : redact(num, undefined, true);
    return r === num ? num : JSON.stringify(r);
  });
}

const SIMPLE_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", '"': '"', "\\": "\\", "/": "/" };

/** The text of a string literal's body; an escape JSON does not have (or a lone `\` at the end) is read as a backslash and what follows. */
function decodeBody(body: string): string {
  if (!body.includes("\\")) return body;
  try {
    return JSON.parse(`"${body}"`) as string;
  } catch {
    // lenient below: an invalid escape, a raw control character, or a cut-off end
  }
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== "\\" || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const e = body[i + 1];
    if (e in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[e];
      i++;
    } else if (e === "u" && /^[0-9A-Fa-f]{4}$/.test(body.slice(i + 2, i + 6))) {
      out += String.fromCharCode(parseInt(body.slice(i + 2, i + 6), 16));
      i += 5;
    } else out += c;
  }
  return out;
}
