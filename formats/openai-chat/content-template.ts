/**
 * The Chat decoder's shortcut for the event a stream is made of: a content-only delta whose bytes are
 * those of an earlier one except for its `content` string (and, where OpenAI sends it, the random
 * `obfuscation` padding). Such an event is read without `JSON.parse` of the whole chunk: the text
 * around the two strings is compared with the learned event's, and only the content string literal is
 * parsed (a few bytes instead of the chunk's object tree; ~60 instead of ~350 ns per event).
 *
 * Why that is exact: the template is learned from an event the full path decoded (so it parsed, and
 * it did nothing but add its content to the text block), and it is checked by parsing it once more
 * with marker strings in the two holes: the markers must come back as the chosen choice's
 * `delta.content` and the top-level `obfuscation`. An event matching the template then differs from
 * that one in the value of those two string tokens only (each hole is checked to hold one valid JSON
 * string literal: the scan stops at the first unescaped quote and `JSON.parse` must accept the slice),
 * so the full path would decode it to the same thing with the other text. Anything else (another
 * field, whitespace, a finish, usage, a different `created` or id) does not match and takes the full
 * path.
 */
import { tryParseJson } from "../sse.ts";

/** Marker values for the learning check: a raw U+0001 cannot appear in JSON text, only escaped. */
const MARK_CONTENT = "\u0001sy-content";
const MARK_OBFUSCATION = "\u0001sy-obfuscation";
/** The markers as JSON string literals (made once: `JSON.stringify` costs ~60 ns a call). */
const MARK_CONTENT_JSON = JSON.stringify(MARK_CONTENT);
const MARK_OBFUSCATION_JSON = JSON.stringify(MARK_OBFUSCATION);
const OBFUSCATION_KEY = '"obfuscation":';

/**
 * The end (index of the closing quote) of the string literal whose opening quote is at `open` in
 * `s`, or -1 when the text ends first. Only finds the quote: validity is `JSON.parse`'s job.
 */
export function literalEnd(s: string, open: number): number {
  let i = open + 1;
  for (;;) {
    const q = s.indexOf('"', i);
    if (q < 0) return -1;
    let backslashes = 0;
    for (let k = q - 1; k > open && s.charCodeAt(k) === 92 /* \ */; k--) backslashes++;
    if ((backslashes & 1) === 0) return q;
    i = q + 1;
  }
}

/**
 * The value of the string literal `s[open..close]` (both quotes included), or undefined when it is not
 * one valid JSON string literal.
 */
export function stringLiteral(s: string, open: number, close: number): string | undefined {
  // Without a backslash or a control character the value is the text between the quotes.
  for (let i = open + 1; i < close; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 92) {
      try {
        const v: unknown = JSON.parse(s.slice(open, close + 1));
        return typeof v === "string" ? v : undefined;
      } catch {
        return undefined;
      }
    }
  }
  return s.slice(open + 1, close);
}

/**
 * The text of the string literal `s[open..close]` (its quotes; `close` its closing one): the characters
 * between the quotes when none needs decoding, with `out.plain` set true (`JSON.stringify` of the text
 * writes the same literal: no escape, control character or surrogate; formats/json-text.ts
 * isPlainJsonText), else {@link stringLiteral}'s decoding with `out.plain` false (undefined when the
 * literal is not valid JSON). `out` carries the second answer without an allocation per call (the
 * content template and the chunk shapes read it per content delta).
 */
export function literalText(s: string, open: number, close: number, out: { plain: boolean }): string | undefined {
  for (let i = open + 1; i < close; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) {
      out.plain = false;
      return stringLiteral(s, open, close);
    }
  }
  out.plain = true;
  return s.slice(open + 1, close);
}

/** Whether `s[open..close]` is one valid JSON string literal ({@link stringLiteral} without making its value when it has no escape). */
export function validLiteral(s: string, open: number, close: number): boolean {
  for (let i = open + 1; i < close; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 92) return stringLiteral(s, open, close) !== undefined;
  }
  return true;
}

/** The choice the decoder reads (the first with `index` 0 or none), as ChatDecoder picks it. */
export function firstChoice(chunk: Record<string, any>): Record<string, any> | undefined {
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return undefined;
  for (const c of choices) if (typeof c === "object" && c !== null && !Array.isArray(c) && (c.index === 0 || c.index === undefined)) return c;
  return undefined;
}

/** A learned content-delta event: the text before the content literal, between it and the obfuscation literal, and after. */
export class ContentTemplate {
  /**
   * Whether the text the last {@link match} returned is plain: `JSON.stringify` of it is the text
   * between two quotes (its literal had no backslash, control character or surrogate), so an encoder
   * need not scan it again (formats/json-text.ts isPlainJsonText).
   */
  plain = false;

  private constructor(
    private readonly head: string,
    /** With an obfuscation hole: the text from the content literal's end to the obfuscation literal. */
    private readonly middle: string | undefined,
    private readonly tail: string,
  ) {}

  /**
   * A template from `data`, an event the full path has just decoded as a content-only delta (the
   * caller checked that: no error, usage, finish, or delta field other than `content`), whose parse
   * is `chunk`; undefined when its content string cannot be located and checked.
   */
  static learn(data: string, chunk: Record<string, any>): ContentTemplate | undefined {
    const content = firstChoice(chunk)?.delta?.content;
    if (typeof content !== "string") return undefined;
    const key = data.indexOf('"content":');
    if (key < 0) return undefined;
    let open = key + 10;
    while (data.charCodeAt(open) === 32) open++;
    if (data.charCodeAt(open) !== 34 /* " */) return undefined;
    const close = literalEnd(data, open);
    if (close < 0 || stringLiteral(data, open, close) !== content) return undefined;
    const head = data.slice(0, open);
    let middle: string | undefined;
    let tail = data.slice(close + 1);
    let probe = head + MARK_CONTENT_JSON;
    if (typeof chunk.obfuscation === "string") {
      const k = tail.indexOf(OBFUSCATION_KEY);
      if (k < 0) return undefined;
      const o = k + OBFUSCATION_KEY.length;
      if (tail.charCodeAt(o) !== 34) return undefined;
      const oe = literalEnd(tail, o);
      if (oe < 0) return undefined;
      middle = tail.slice(0, o);
      tail = tail.slice(oe + 1);
      probe += middle + MARK_OBFUSCATION_JSON;
    }
    probe += tail;
    const check = tryParseJson(probe);
    if (typeof check !== "object" || check === null) return undefined;
    const c = check as Record<string, any>;
    if (firstChoice(c)?.delta?.content !== MARK_CONTENT) return undefined;
    if (middle !== undefined && c.obfuscation !== MARK_OBFUSCATION) return undefined;
    return new ContentTemplate(head, middle, tail);
  }

  /**
   * The template of a content delta matched by a learned chunk shape (chunk-shapes.ts): its text before
   * the content literal, between it and the obfuscation literal (when it has one) and after it, with the
   * matched event's own id and time in place. The shape's proof is the template's.
   */
  static of(parts: [head: string, middle: string | undefined, tail: string]): ContentTemplate {
    return new ContentTemplate(parts[0], parts[1], parts[2]);
  }

  /** The content text of `data` when it matches the template, else undefined (the full path decodes it). */
  match(data: string): string | undefined {
    return this.matchAt(data, 0, data.length);
  }

  /**
   * {@link match} of the event data `text[start, end)`, read in place (the SSE reader's quick look at a
   * whole read's text, formats/sse.ts): nothing of the template, and neither string literal, may reach
   * past `end`.
   */
  matchAt(text: string, start: number, end: number): string | undefined {
    const head = this.head;
    const open = start + head.length;
    if (open >= end || text.charCodeAt(open) !== 34 || !text.startsWith(head, start)) return undefined;
    const close = literalEnd(text, open);
    if (close < 0 || close >= end) return undefined;
    const rest = close + 1;
    const middle = this.middle;
    const tail = this.tail;
    if (middle !== undefined) {
      const o = rest + middle.length;
      if (o >= end || text.charCodeAt(o) !== 34 || !text.startsWith(middle, rest)) return undefined;
      const oe = literalEnd(text, o);
      if (oe < 0 || end - oe - 1 !== tail.length || !text.startsWith(tail, oe + 1)) return undefined;
      if (!validLiteral(text, o, oe)) return undefined;
    } else if (end - rest !== tail.length || !text.startsWith(tail, rest)) {
      return undefined;
    }
    return literalText(text, open, close, this);
  }
}
