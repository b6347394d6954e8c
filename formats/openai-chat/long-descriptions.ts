/**
 * Function descriptions over OpenAI's Chat limit (1024 characters: its 400 `string_above_max_length`,
 * test/support/upstream-rules.ts): the first part stays in the tool, the rest goes to the request's
 * leading system (or developer) message, so the model still reads all of it. Claude Code's Agent tool
 * (3,225 characters: its list of subagent types is at the end) and Bash (2,110), Gemini CLI's replace
 * (2,063) have such descriptions. Pure; used by build.ts for kind `openai` only.
 */
import type { Warnings } from "../hub.ts";
import type { JsonObject as Json } from "../json.ts";

/** The longest function `description` OpenAI's Chat Completions API takes, in characters (its 400 `string_above_max_length` names the limit). */
export const OPENAI_DESCRIPTION_MAX = 1024;

/** A description's rest, moved out of its tool: `name` as the tool is sent (the name the model sees). */
export interface MovedDescription {
  readonly name: string;
  readonly rest: string;
}

/** The pointer ending a cut description: where its rest is. `role`: the message's (`system` or `developer`). */
export function continuedPointer(name: string, role: string): string {
  return ` (continued in the ${role} message under "Tool ${name}")`;
}

/** The system-message section holding the rest of tool `name`'s description. */
export function movedSection(m: MovedDescription): string {
  return `## Tool ${m.name} (description continued)\n\n${m.rest}`;
}

/** Sentence ends written without a space after them: 。 (U+3002), its halfwidth ｡ (U+FF61), the fullwidth ． ！ ？ (U+FF0E, U+FF01, U+FF1F), as Japanese and Chinese text ends a sentence. */
function cjkSentenceEnd(c: number): boolean {
  return c === 0x3002 || c === 0xff61 || c === 0xff0e || c === 0xff01 || c === 0xff1f;
}

/** Closing quotes and brackets that belong to the sentence before them: 」』）】〕〉》 and ”’ (after a CJK sentence end, `。」`). */
function closer(c: number): boolean {
  return c === 0x300d || c === 0x300f || c === 0xff09 || c === 0x3011 || c === 0x3015 || c === 0x3009 || c === 0x300b || c === 0x201d || c === 0x2019;
}

/**
 * Where `window` (a description's first characters) is cut: the end of its last paragraph, else line,
 * else sentence (". ", "! ", "? ", or a CJK sentence end {@link cjkSentenceEnd} with the closing
 * brackets after it), in its second half; else its last space there (`mid`: a sentence goes on in the
 * rest); undefined when none (a hard cut). `window` is `text`'s first `window.length` UTF-16 units. A
 * CJK sentence end keeps all its closers (`。」`): one closer just past the window takes the character
 * kept for a "…" (a sentence cut has none); a sentence whose closers reach further is left for the
 * rest, and an earlier sentence end is looked for (until 2026-12-08 the closers past the window began
 * the moved section, "」次の文…"). Returns UTF-16 indices into `text`: `end` of the part kept (at most
 * one past the window), `next` where the rest starts (the separator dropped).
 */
function boundary(window: string, text: string): { end: number; next: number; mid: boolean } | undefined {
  const min = Math.floor(window.length / 2);
  const para = window.lastIndexOf("\n\n");
  if (para >= min) return { end: para, next: para + 2, mid: false };
  const line = window.lastIndexOf("\n");
  if (line >= min) return { end: line, next: line + 1, mid: false };
  const sentence = Math.max(window.lastIndexOf(". "), window.lastIndexOf("! "), window.lastIndexOf("? "));
  let cjk = -1;
  for (let i = window.length - 1; i > sentence + 1 && i >= min; i--) {
    if (cjkSentenceEnd(window.charCodeAt(i))) {
      let end = i + 1;
      while (end < text.length && closer(text.charCodeAt(end))) end++;
      if (end <= window.length + 1) {
        cjk = end;
        break;
      }
    }
  }
  if (cjk > sentence + 1) return { end: cjk, next: cjk, mid: false };
  if (sentence >= min) return { end: sentence + 1, next: sentence + 2, mid: false };
  const space = window.lastIndexOf(" ");
  if (space >= min) return { end: space, next: space + 1, mid: true };
  return undefined;
}

/** Grapheme clusters (user-perceived characters: a flag, a ZWJ emoji, a letter and its accents), by Unicode's rules (UAX #29), the same for every locale. */
let graphemes: Intl.Segmenter | undefined;

/**
 * The last grapheme cluster boundary of `s` at or before the UTF-16 index `at` (`at` itself when a
 * cluster begins there; 0 when `s`'s first cluster reaches past it). A boundary depends on what comes
 * before it and on the code point after it only, so `s` is segmented up to that code point.
 */
function graphemeBoundary(s: string, at: number): number {
  if (at >= s.length || at === 0) return at;
  // below U+0300 on both sides (no combining mark, joiner, surrogate, Hangul jamo or prepended mark), and not CR LF: a boundary
  const before = s.charCodeAt(at - 1);
  const after = s.charCodeAt(at);
  if (before < 0x300 && after < 0x300 && !(before === 13 && after === 10)) return at;
  graphemes ??= new Intl.Segmenter("en", { granularity: "grapheme" });
  let last = 0;
  for (const { index } of graphemes.segment(s.slice(0, at + 2))) {
    if (index > at) break;
    last = index;
  }
  return last;
}

/**
 * `description` as OpenAI's Chat API takes it: unchanged up to {@link OPENAI_DESCRIPTION_MAX}
 * characters (Unicode code points); else its first part, cut at the last paragraph, line, sentence or
 * word end that leaves room ({@link boundary}; "…" after a word or a hard cut, which ends on a grapheme
 * cluster boundary: {@link graphemeBoundary}), then
 * {@link continuedPointer}, at most 1024 characters in all; the rest (leading whitespace dropped) is
 * pushed on `moved` under `sentName`, for {@link appendMovedDescriptions} (whitespace at the end of the
 * description is dropped, and a description that then fits is sent so, without a warning). Reported as a
 * `changed_field` warning naming tool `name` (the client's name), both lengths and where the rest went.
 * Deterministic: the same description and names give the same bytes (the prompt cache).
 */
export function fitDescription(name: string, sentName: string, description: string, role: string, moved: MovedDescription[], w: Warnings): string {
  if (description.length <= OPENAI_DESCRIPTION_MAX) return description;
  const total = codePoints(description);
  if (total <= OPENAI_DESCRIPTION_MAX) return description;
  const trimmed = description.trimEnd(); // whitespace at the end is not worth a section
  if (codePoints(trimmed) <= OPENAI_DESCRIPTION_MAX) return trimmed;
  const pointer = continuedPointer(sentName, role);
  const room = OPENAI_DESCRIPTION_MAX - codePoints(pointer) - 1; // 1: for a "…"
  const window = description.slice(0, codePointOffset(description, room));
  const at = boundary(window, description);
  // a hard cut: at the window's last grapheme boundary (a flag, a ZWJ emoji, an accented letter whole), anywhere when its one cluster is longer
  const hard = at ? 0 : graphemeBoundary(description, window.length) || window.length;
  const head = at ? description.slice(0, at.end).trimEnd() + (at.mid ? "…" : "") : window.slice(0, hard) + "…";
  const rest = trimmed.slice(at ? at.next : hard).trimStart();
  moved.push({ name: sentName, rest });
  w.add(
    "changed_field",
    `The description of the tool "${name}" has ${total} characters; OpenAI's Chat Completions API takes at most ${OPENAI_DESCRIPTION_MAX}, so its first ${codePoints(head)} stayed in the tool and the rest was moved to the ${role} message, under "Tool ${sentName}".`,
  );
  return head + pointer;
}

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** `s`'s length in Unicode code points (a surrogate pair counts once), without making an array of them. */
function codePoints(s: string): number {
  if (!HIGH_SURROGATE.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return n;
}

/** The UTF-16 index after `s`'s first `n` code points (its length when it has fewer): never inside a surrogate pair. */
function codePointOffset(s: string, n: number): number {
  if (!HIGH_SURROGATE.test(s)) return Math.min(n, s.length);
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return i;
}

/**
 * The role of the message the moved descriptions go to: the leading message's when it is a `system`
 * or `developer` one with text content (the client's own system text, as the builder wrote it), else
 * `system` (a message {@link appendMovedDescriptions} adds).
 */
export function movedDescriptionsRole(messages: readonly Json[]): string {
  const lead = messages[0];
  return lead && (lead.role === "system" || lead.role === "developer") && typeof lead.content === "string" ? lead.role : "system";
}

/**
 * Puts the {@link movedSection}s of `moved` (in tool order) after the leading system/developer
 * message's text, a blank line between; with no such message ({@link movedDescriptionsRole}), a
 * `system` message holding them goes first. The sections depend on the tools only, so the same tools
 * and system text give the same bytes every turn. Mutates `messages`.
 */
export function appendMovedDescriptions(messages: Json[], moved: readonly MovedDescription[]): void {
  if (moved.length === 0) return;
  const text = moved.map(movedSection).join("\n\n");
  const lead = messages[0];
  if (lead && (lead.role === "system" || lead.role === "developer") && typeof lead.content === "string") {
    messages[0] = { ...lead, content: lead.content.length > 0 ? `${lead.content}\n\n${text}` : text };
  } else messages.unshift({ role: "system", content: text });
}
