/**
 * Server-sent events, both directions (REFERENCE §0).
 *
 * Reading uses eventsource-parser (the WHATWG event-stream algorithm: CR, LF and CRLF line ends,
 * comment/keep-alive lines, multi-line `data`, events split across reads) behind a streaming UTF-8
 * decoder, so a multi-byte character split across reads is never turned into U+FFFD.
 * Writing always uses `\n` line ends and `\n\n` terminators.
 *
 * What is held of one incomplete event is bounded by {@link MAX_SSE_EVENT_BYTES}: a provider (or a
 * misconfigured base URL serving a huge non-SSE body as `text/event-stream`) cannot make the gateway
 * hold an event without end however large it grows; past the bound the reader or tap throws
 * {@link eventTooLarge}'s FormatError, which the pipeline treats as a failed attempt before the commit
 * point and as the format's in-band error after it. So is an event whose data is longer than 1 MiB and
 * nests past MAX_JSON_DEPTH (formats/json-depth.ts {@link checkEventDepth}), refused before anything
 * parses it, as a whole reply that long is.
 */
import { utf8RangeWithBom } from "./utf8-range.ts";
import { createParser, type EventSourceParser } from "eventsource-parser";
import { FormatError, hubError, type HubError } from "./hub.ts";
import { checkEventDepth, DEPTH_CHECKED_BYTES, nestsDeeperThan } from "./json-depth.ts";

const STREAM = { stream: true };
/**
 * {@link SseReader}'s decoder of reads that end on a character boundary, one call each (no state kept
 * between calls). It keeps a BOM as text: it only decodes a stream's first read when that read cannot
 * start with one, and later a BOM is text.
 */
const WHOLE_UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** One parsed SSE event: `event` is the `event:` field (undefined when absent), `data` the joined data lines. */
export interface SseEvent {
  /** The `id:` field of the event (undefined when absent); nothing in the gateway reads it. */
  id?: string | undefined;
  event?: string | undefined;
  data: string;
}

/**
 * The most the gateway holds of one upstream SSE event that has not ended, in bytes (64 MiB; the SSE
 * reader counts UTF-16 characters against it, which an ASCII stream has as many of as bytes). Large
 * enough for any real event (a whole tool call's arguments, a base64 image in one Gemini chunk), small
 * enough that a stream without event ends cannot exhaust memory. The commit point holds no more than
 * this before the first content either (pipeline/commit.ts).
 */
export const MAX_SSE_EVENT_BYTES = 64 * 1024 * 1024;

/**
 * The failure of an upstream stream one of whose events grew past `limit` bytes without ending (502,
 * `upstream_event_too_large`), as the FormatError the readers and taps throw.
 */
export function eventTooLarge(limit: number = MAX_SSE_EVENT_BYTES): FormatError {
  return new FormatError(
    hubError("api_error", `The upstream sent a stream event larger than ${limit} bytes without ending it; it is not a server-sent event stream the gateway can relay.`, {
      status: 502,
      code: "upstream_event_too_large",
    }),
  );
}

/**
 * An optional first look at a one-line, unnamed `data:` event as the reader finds it (see
 * {@link SseReader}): `text[start, end)` is the event's data. Returns true when it took the event,
 * which is then not made into an {@link SseEvent}; false to have it dispatched as usual. It must not
 * keep `text` (a whole read's text).
 */
export type SseQuickLook = (text: string, start: number, end: number) => boolean;

/**
 * {@link SseQuickLook} of an `event:` line with a name then one `data:` line: `text[nameStart, nameEnd)`
 * is the event's name (never empty), `text[start, end)` its data. Returns true when it took the event.
 */
export type SseNamedQuickLook = (text: string, nameStart: number, nameEnd: number, start: number, end: number) => boolean;

/**
 * The most characters of an event in progress that {@link SseReader}'s own splitter holds; an event
 * that grows past it (or past the reader's bound, when smaller) goes to eventsource-parser, which holds
 * a long event without copying it per read.
 */
const SPLITTER_MAX_PENDING = 16 * 1024;

const LF = 10;
const CR = 13;

/** Whether every CR of `s` starts a CRLF and every LF ends one. */
function crlfOnly(s: string): boolean {
  for (let i = s.indexOf("\r"); i !== -1; i = s.indexOf("\r", i + 2)) if (s.charCodeAt(i + 1) !== LF) return false;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) if (s.charCodeAt(i - 1) !== CR) return false;
  return true;
}

/** Whether `s` has the field name `data:` at `i`. */
function isDataField(s: string, i: number): boolean {
  return s.charCodeAt(i) === 100 && s.charCodeAt(i + 1) === 97 && s.charCodeAt(i + 2) === 116 && s.charCodeAt(i + 3) === 97 && s.charCodeAt(i + 4) === 58;
}

/** Whether `s` has the field name `event:` at `i`. */
function isEventField(s: string, i: number): boolean {
  return (
    s.charCodeAt(i) === 101 && s.charCodeAt(i + 1) === 118 && s.charCodeAt(i + 2) === 101 && s.charCodeAt(i + 3) === 110 && s.charCodeAt(i + 4) === 116 && s.charCodeAt(i + 5) === 58
  );
}

/**
 * Incremental SSE reader. `push(bytes)` calls `onEvent` synchronously for every complete event;
 * `end()` flushes a final event that lacked its blank-line terminator (some servers close right after
 * the last `data:` line) — callers decide whether that counts as a complete stream.
 *
 * Two readers, one result. While the stream's text has only LF (or only CRLF) line ends and starts
 * with no BOM, the reader splits it itself (docs/performance.md item 132): it holds the text of the event in progress,
 * and each complete event (up to its blank line) that is one `data:` line, or an `event:` line then one
 * `data:` line, is dispatched from the read's text directly (the common shapes: no parser state, no
 * closures per stream). Any other complete event (comments, `id:`, `retry:`, several data lines,
 * lines that are no field) is handed whole, with its blank line, to eventsource-parser, made then. At
 * the first CR that does not start a CRLF, a BOM at the start, or an event in progress longer than {@link SPLITTER_MAX_PENDING},
 * the held text and everything after go to eventsource-parser for good. That is exact: between complete
 * LF-framed events the parser holds nothing (a blank line dispatches and resets the event's fields,
 * `id` included), so it reads each complete event as it would have read it in the whole stream; a
 * parser made after the start is first fed a line end, which settles its BOM rule (a BOM is stripped
 * only at the stream's start). A stream whose first CR comes between events is read by the splitter as
 * CRLF-framed (Gemini frames its events with CRLF; {@link SseReader.splitCrlf}, docs/performance.md
 * item 300): events end at `\r\n\r\n`, and any line end of another kind hands what holds it to the
 * parser, as does a read that ends in a CR (a CRLF may straddle two reads).
 *
 * The event in progress (its partial line plus its data lines so far) is bounded by `maxEventSize`
 * characters (eventsource-parser's `maxBufferSize`): past it the parser drops the event and stops, and
 * `push` throws {@link eventTooLarge}; after that the reader takes nothing more (`push` and `end` do
 * nothing). The splitter never holds more than the bound (it hands a longer event to the parser before
 * that), so the parser sees an event past the bound exactly when it would have reading the whole
 * stream. A complete event whose data is longer than DEPTH_CHECKED_BYTES (1 MiB) is checked for
 * nesting before `onEvent` or `quick` gets it (formats/json-depth.ts `checkEventDepth`): past
 * MAX_JSON_DEPTH `push` throws that FormatError (`upstream_nested_too_deep`) and the reader stops the
 * same way; at `end` such a last event is dropped like a torn one (its stream then lacks its end). No `onError` is given to the parser: with one it builds an Error
 * (and its stack) for every line that is no SSE field, ~30 µs a line on a body that is no event stream.
 */
export class SseReader {
  /** The streaming UTF-8 decoder, made at the first read that needs one (see {@link SseReader.push}). */
  private decoder: TextDecoder | undefined;
  /** Whether any byte was read: a BOM is only stripped at the very start (as TextDecoder does). */
  private began = false;
  /** eventsource-parser, made at the first event or text the splitter hands on. */
  private parser: EventSourceParser | undefined;
  /** Whether all text goes to {@link parser} (see the class comment); until then the splitter reads it. */
  private parsing = false;
  /** The splitter's event in progress: text from an event's first line, with no blank line in it. */
  private pending = "";
  /** Whether {@link pending} ends with a LF (a blank line may then begin with the next text's first character). */
  private pendingLf = false;
  /** Whether any text was fed (the BOM rule is the first text's). */
  private textBegan = false;
  /** An event past a bound (its size, or its nesting) stopped the reader: it takes nothing more. */
  private overflowed = false;
  /** The stream's first CR came with no LF-framed event in progress: the splitter reads it as CRLF-framed ({@link splitCrlf}). */
  private crlf = false;
  /** Characters fed in all: the parser cannot have overflowed before this exceeds the bound. */
  private fed = 0;

  /**
   * `onEvent` gets an event object it must not keep past the call's purpose (the parser's own, or
   * one made for it). `maxEventSize` (characters) is {@link MAX_SSE_EVENT_BYTES} unless a test passes
   * less. `quick`, when given, is offered every one-line unnamed `data:` event the splitter reads
   * ({@link SseQuickLook}) before an event object is made for it; `quickNamed` every named one with one
   * `data:` line ({@link SseNamedQuickLook}), before its name, data and event object are made.
   */
  constructor(
    private readonly onEvent: (ev: SseEvent) => void,
    private readonly maxEventSize: number = MAX_SSE_EVENT_BYTES,
    private readonly quick?: SseQuickLook,
    private readonly quickNamed?: SseNamedQuickLook,
  ) {}

  /**
   * Feeds one read of bytes. A read that ends on an ASCII byte (no character can be split there) is
   * decoded whole by one shared decoder, as long as no read before it needed the streaming one:
   * the same text, without a streaming decoder per stream (0.2–0.6 µs less per reply on the
   * messages→chat stream's reply driver, docs/performance.md item 63). A read that ends inside a
   * character, or a first read that may start with a BOM, switches this stream to its own streaming
   * decoder for good.
   */
  push(chunk: Uint8Array): void {
    if (this.overflowed) return;
    const n = chunk.length;
    if (n === 0) return;
    let text: string;
    if (this.decoder === undefined && chunk[n - 1]! < 0x80 && (this.began || chunk[0] !== 0xef)) {
      text = WHOLE_UTF8.decode(chunk);
    } else {
      // Past the first byte, a BOM is text (TextDecoder strips one only at the start of its stream).
      this.decoder ??= new TextDecoder("utf-8", { ignoreBOM: this.began });
      text = this.decoder.decode(chunk, STREAM);
    }
    this.began = true;
    if (text.length > 0) this.feed(text);
  }

  /**
   * {@link push} of [start, end) of `bytes`: the same text, decoded without a view of the range when the
   * shared decoder would take it (formats/utf8-range.ts), else as a `subarray` read.
   */
  pushRange(bytes: Uint8Array, start: number, end: number): void {
    if (this.overflowed || end <= start) return;
    if (this.decoder === undefined && bytes[end - 1]! < 0x80 && (this.began || bytes[start] !== 0xef)) {
      this.began = true;
      this.feed(utf8RangeWithBom(bytes, start, end));
    } else this.push(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
  }

  /** Feeds text that is already decoded (tests, fixtures). */
  pushText(text: string): void {
    if (this.overflowed) return;
    this.feed(text);
  }

  /**
   * End of input: flushes the UTF-8 decoder and any unterminated final event. Two line ends complete
   * whatever line was pending and dispatch the event in progress (the parser's `reset({consume: true})`
   * would drop that event, and after them it holds nothing it could consume: not called).
   */
  end(): void {
    if (this.overflowed) return;
    try {
      const rest = this.decoder === undefined ? "" : this.decoder.decode();
      if (rest.length > 0) this.feed(rest);
      this.feed("\n\n");
    } catch (e) {
      if (!this.overflowed) throw e;
    }
  }

  private feed(text: string): void {
    this.fed += text.length;
    if (!this.parsing) {
      if (!this.textBegan && text.length > 0) {
        this.textBegan = true;
        const c = text.charCodeAt(0);
        // A BOM (decoded, or its bytes read as Latin-1) at the start: the parser's rule strips it.
        if (c === 0xfeff || c === 0xef) this.parsing = true;
      }
      if (!this.parsing) {
        if (!this.crlf) {
          if (text.indexOf("\r") < 0) return this.split(text);
          // The stream's first CR: CRLF framing (Gemini's) is split here too, unless an LF-framed event is in progress.
          if (this.pending.length === 0) this.crlf = true;
        }
        if (this.crlf && this.splitCrlf(text)) return;
      }
      this.parsing = true;
      const held = this.pending;
      this.pending = "";
      if (held.length > 0) this.parse(held);
    }
    this.parse(text);
  }

  /**
   * The splitter's read of `text` in a CRLF-framed stream ({@link crlf}; docs/performance.md item 300):
   * events end at `\r\n\r\n` (always an empty line, whatever came before it, so the text after it
   * starts a new event); one whose lines all end in CRLF is dispatched as {@link event} dispatches an
   * LF-framed one, any other (other fields, a lone CR or LF in it) is handed whole, with its blank line,
   * to the parser. The rest after the last such event is held when its line ends are all CRLF (so it
   * holds no empty line of any framing: nothing in it could be dispatched yet), else it and everything
   * after go to the parser. Returns false, having read nothing, for a text that ends in a CR (a CRLF
   * may straddle two reads): the caller hands the stream to the parser then.
   */
  private splitCrlf(text: string): boolean {
    if (text.charCodeAt(text.length - 1) === CR) return false;
    const held = this.pending;
    let s = text;
    let from = 0;
    if (held.length > 0) {
      s = held + text;
      // The held text ends in CRLF at most: an empty line may start 2 characters back.
      from = held.length >= 2 ? held.length - 2 : 0;
    }
    const n = s.length;
    let pos = 0;
    for (;;) {
      // Empty lines between events dispatch nothing.
      for (let c = s.charCodeAt(pos); pos < n && (c === CR || c === LF); c = s.charCodeAt(++pos));
      if (pos >= n) {
        this.pending = "";
        this.pendingLf = false;
        return true;
      }
      const end = s.indexOf("\r\n\r\n", pos > from ? pos : from);
      if (end < 0) break;
      this.eventCrlf(s, pos, end);
      if (this.overflowed) return true;
      pos = end + 4;
    }
    const rest = pos === 0 ? s : s.slice(pos);
    if (crlfOnly(rest)) {
      this.hold(rest, text);
      return true;
    }
    this.pending = "";
    this.parsing = true;
    this.parse(rest);
    return true;
  }

  /** {@link event} of a CRLF-framed event, `s[start, end)` (its lines without the CRLF that ends the last one). */
  private eventCrlf(s: string, start: number, end: number): void {
    const cr = s.indexOf("\r", start);
    if (cr === end) {
      if (s.indexOf("\n", start) === end + 1 && isDataField(s, start)) {
        const value = s.charCodeAt(start + 5) === 32 ? start + 6 : start + 5;
        if (end - value > DEPTH_CHECKED_BYTES) this.checkDepth(s.slice(value, end));
        if (this.quick !== undefined && this.quick(s, value, end)) return;
        this.onEvent({ id: undefined, event: undefined, data: s.slice(value, end) });
        return;
      }
    } else if (s.charCodeAt(cr + 1) === LF && s.indexOf("\n", start) === cr + 1 && isEventField(s, start) && isDataField(s, cr + 2) && s.indexOf("\r", cr + 2) === end && s.indexOf("\n", cr + 2) === end + 1) {
      this.named(s, s.charCodeAt(start + 6) === 32 ? start + 7 : start + 6, cr, s.charCodeAt(cr + 7) === 32 ? cr + 8 : cr + 7, end);
      return;
    }
    this.parse(s.slice(start, end + 4));
  }

  /** The splitter's read of `text` (LF line ends only; see the class comment). */
  private split(text: string): void {
    const held = this.pending;
    let s = text;
    let from = 0;
    if (held.length > 0) {
      // Only a blank line ends the held event: unless the text brings one, it is held on (no copy, no scan).
      if (!(this.pendingLf && text.charCodeAt(0) === LF) && text.indexOf("\n\n") < 0) return this.hold(held + text, text);
      s = held + text;
      from = held.length - 1;
    }
    const n = s.length;
    let pos = 0;
    for (;;) {
      // Blank lines between events dispatch nothing.
      while (pos < n && s.charCodeAt(pos) === LF) pos++;
      if (pos >= n) {
        this.pending = "";
        this.pendingLf = false;
        return;
      }
      const end = s.indexOf("\n\n", pos > from ? pos : from);
      if (end < 0) break;
      this.event(s, pos, end);
      if (this.overflowed) return;
      pos = end + 2;
    }
    this.hold(pos === 0 ? s : s.slice(pos), text);
  }

  /** Holds `rest`, the event in progress (it ends with `text`'s end), or hands it to the parser when long. */
  private hold(rest: string, text: string): void {
    if (rest.length > SPLITTER_MAX_PENDING || rest.length > this.maxEventSize) {
      this.pending = "";
      this.parsing = true;
      this.parse(rest);
      return;
    }
    this.pending = rest;
    this.pendingLf = text.charCodeAt(text.length - 1) === LF;
  }

  /** One complete event, `s[start, end)` (its lines without the blank line that ends it). */
  private event(s: string, start: number, end: number): void {
    const nl = s.indexOf("\n", start);
    if (nl === end) {
      if (isDataField(s, start)) {
        const value = s.charCodeAt(start + 5) === 32 ? start + 6 : start + 5;
        if (end - value > DEPTH_CHECKED_BYTES) this.checkDepth(s.slice(value, end));
        if (this.quick !== undefined && this.quick(s, value, end)) return;
        this.onEvent({ id: undefined, event: undefined, data: s.slice(value, end) });
        return;
      }
    } else if (isEventField(s, start) && isDataField(s, nl + 1) && s.indexOf("\n", nl + 1) === end) {
      this.named(s, s.charCodeAt(start + 6) === 32 ? start + 7 : start + 6, nl, s.charCodeAt(nl + 6) === 32 ? nl + 7 : nl + 6, end);
      return;
    }
    this.parse(s.slice(start, end + 2));
  }

  /** An `event:` line then one `data:` line: name `s[nameStart, nameEnd)`, data `s[value, end)`; offered to {@link quickNamed} first (a name at all). */
  private named(s: string, nameStart: number, nameEnd: number, value: number, end: number): void {
    if (end - value > DEPTH_CHECKED_BYTES) this.checkDepth(s.slice(value, end));
    if (nameEnd > nameStart && this.quickNamed !== undefined && this.quickNamed(s, nameStart, nameEnd, value, end)) return;
    const name = s.slice(nameStart, nameEnd);
    this.onEvent({ id: undefined, event: name.length > 0 ? name : undefined, data: s.slice(value, end) });
  }

  /** {@link checkEventDepth} of a long event's data: its FormatError stops the reader first. */
  private checkDepth(data: string): void {
    try {
      checkEventDepth(data);
    } catch (e) {
      this.overflowed = true;
      throw e;
    }
  }

  /** The parser's dispatch: a long event's data is checked ({@link checkDepth}) before `onEvent` gets it. */
  private parsed(ev: SseEvent): void {
    if (ev.data.length > DEPTH_CHECKED_BYTES) this.checkDepth(ev.data);
    this.onEvent(ev);
  }

  /**
   * `parser.feed`, made at its first use, with an overflow turned into {@link eventTooLarge}. The parser
   * stops silently when it overflows and throws at the next feed, before doing anything else ("Cannot
   * feed parser: it was terminated after exceeding the configured max buffer size"; overflowing is the
   * only way to stop it): once more than the bound has been fed in all, an empty feed after each one (a
   * no-op for a parser that runs) asks at once.
   */
  private parse(text: string): void {
    try {
      let parser = this.parser;
      if (parser === undefined) {
        parser = this.parser = createParser({ onEvent: (ev) => this.parsed(ev), maxBufferSize: this.maxEventSize });
        // Made after the stream's start: a line end settles its BOM rule (it holds nothing after it).
        if (this.textBegan && this.fed > text.length) parser.feed("\n");
      }
      parser.feed(text);
      if (this.fed > this.maxEventSize) parser.feed("");
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith("Cannot feed parser")) throw e;
      this.overflowed = true;
      throw eventTooLarge(this.maxEventSize);
    }
  }
}

/** Formats one SSE event with a name (`event:` line) — Anthropic and Responses style. */
export function sseNamed(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}

/** Formats one SSE event without a name (`data:` only) — Chat and Gemini style. */
export function sseData(data: string): string {
  return `data: ${data}\n\n`;
}

/** The Chat stream terminator. */
export const SSE_DONE = "data: [DONE]\n\n";

/** Response headers for an SSE reply (REFERENCE §0 "Emitting"). */
export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

/**
 * The failure of an upstream `event: error` whose data is not a JSON object (a proxy's plain-text
 * error): 502 `upstream_malformed`, as the hub decoders report an event that is not JSON, with the
 * upstream's own words (at most 200 characters) kept in the message. The passthrough taps use it, so a
 * native lane retries and words it as a translated lane does. When the words are cut, `traceMessage`
 * holds them whole, for the route trace, which scrubs secrets from a text before it cuts it (a cut here
 * could go through an echoed credential, and a part of one is no longer recognised).
 */
export function errorEventNotJson(data: string): HubError {
  const text = data.trim();
  const words = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return hubError("api_error", words.length > 0 ? `The upstream sent an error event that is not JSON: ${words}` : "The upstream sent an error event that is not JSON.", {
    status: 502,
    code: "upstream_malformed",
    ...(words !== text ? { traceMessage: `The upstream sent an error event that is not JSON: ${text}` } : {}),
  });
}

/**
 * Parses JSON without throwing: returns `undefined` for invalid text. Used on upstream data lines,
 * where a malformed line must become an error event, not an exception.
 */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The last `k` bytes (fewer when there are not that many) of the bytes `parts` hold in order (a read
 * may be a single byte).
 */
function lastBytes(parts: readonly Uint8Array[], k: number): Uint8Array {
  const last = parts[parts.length - 1];
  if (last !== undefined && last.length >= k) return last.subarray(last.length - k);
  const out: number[] = [];
  for (let i = parts.length - 1; i >= 0 && out.length < k; i--) {
    const p = parts[i];
    for (let j = p.length - 1; j >= 0 && out.length < k; j--) out.push(p[j]);
  }
  return Uint8Array.from(out.reverse());
}

/**
 * A byte passthrough's held-back partial event (the Anthropic and Responses taps): reads are forwarded
 * up to the end of their last complete event and the rest is held (copied, one part per read). Only
 * each new read is searched for a terminator, with the last `lookBack` held bytes before it (a
 * terminator may straddle reads), so an event that spans many reads (MBs of tool-call arguments in one
 * delta) is joined once, when it completes, not copied and rescanned on every read. `push` throws
 * {@link eventTooLarge} when the held event would exceed `maxEventSize` bytes, and holds nothing after.
 */
export class HeldEvent {
  /**
   * The held reads, in order; undefined while nothing is held (most reads end on an event boundary: no
   * list is made for them, nor to empty one: docs/performance.md item 299).
   */
  private parts: Uint8Array[] | undefined;
  private len = 0;

  /**
   * @param lastEnd the end offset of the last complete event in `bytes`, or −1; `held` is how many of
   *   its first bytes were already held (searched before).
   * @param lookBack how many held bytes a terminator that ends in a new read can start in.
   * @param maxEventSize the most bytes held ({@link MAX_SSE_EVENT_BYTES} unless a test passes less).
   */
  constructor(
    private readonly lastEnd: (bytes: Uint8Array, held: number) => number,
    private readonly lookBack: number,
    private readonly maxEventSize: number = MAX_SSE_EVENT_BYTES,
  ) {}

  /** Bytes held, not yet forwarded. */
  get size(): number {
    return this.len;
  }

  /** Adds a read; returns the held bytes and the read up to the last complete event (empty when none ended), holding the rest. */
  push(chunk: Uint8Array): Uint8Array {
    let data = chunk;
    let cut: number;
    const parts = this.parts;
    if (this.len > 0 && parts !== undefined) {
      const tail = lastBytes(parts, this.lookBack);
      const probe = new Uint8Array(tail.length + chunk.length);
      probe.set(tail, 0);
      probe.set(chunk, tail.length);
      const at = this.lastEnd(probe, tail.length);
      if (at < 0) {
        if (this.len + chunk.length > this.maxEventSize) this.overflow();
        parts.push(chunk.slice());
        this.len += chunk.length;
        return EMPTY_BYTES;
      }
      parts.push(chunk);
      data = concatBytes(parts, this.len + chunk.length);
      cut = this.len - tail.length + at;
      this.parts = undefined;
      this.len = 0;
    } else {
      cut = this.lastEnd(chunk, 0);
      if (cut < 0) {
        if (chunk.length > this.maxEventSize) this.overflow();
        this.parts = [chunk.slice()];
        this.len = chunk.length;
        return EMPTY_BYTES;
      }
    }
    if (cut < data.length) {
      if (data.length - cut > this.maxEventSize) this.overflow();
      const rest = data.slice(cut);
      this.parts = [rest];
      this.len = rest.length;
    }
    return cut === data.length ? data : data.subarray(0, cut);
  }

  /** Drops what is held and throws {@link eventTooLarge}. */
  private overflow(): never {
    this.parts = undefined;
    this.len = 0;
    throw eventTooLarge(this.maxEventSize);
  }

  /** Everything held, joined (empty when nothing is), and nothing held after. */
  takeAll(): Uint8Array {
    const parts = this.parts;
    if (parts === undefined || this.len === 0) return EMPTY_BYTES;
    const all = concatBytes(parts, this.len);
    this.parts = undefined;
    this.len = 0;
    return all;
  }
}

const EMPTY_BYTES = new Uint8Array(0);

/**
 * Concatenates byte chunks (stream reads, held-back partial events). When at most one chunk holds
 * bytes (one chunk; or a whole reply beside a driver's empty output, as the commit point's parts
 * usually are) that chunk is returned as it is, without a copy. `total` (bytes) may be passed when the
 * caller already tracks it.
 */
export function concatBytes(parts: Uint8Array[], total?: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  let n = 0;
  let filled = -1;
  let several = false;
  for (let i = 0; i < parts.length; i++) {
    const len = parts[i].byteLength;
    if (len === 0) continue;
    n += len;
    if (filled >= 0) several = true;
    filled = i;
  }
  if (!several) return filled >= 0 ? parts[filled] : new Uint8Array(0);
  if (total !== undefined) n = total;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.byteLength;
  }
  return out;
}

/**
 * Index just past the last event terminator (a line end immediately followed by another line end) in
 * `b`, or 0 when there is none. Handles `\n\n`, `\r\n\r\n`, `\r\r`; a trailing lone `\r` after a line
 * end is not taken as a terminator (it may be the first half of a CRLF).
 */
export function lastEventBoundary(b: Uint8Array): number {
  for (let i = b.length - 1; i >= 1; i--) {
    const c = b[i];
    const p = b[i - 1];
    if (c === LF) {
      // "\n\n", or a CRLF empty line after a line end ("\n\r\n", "\r\r\n", "\r\n\r\n")
      if (p === LF || (p === CR && i >= 2 && (b[i - 2] === LF || b[i - 2] === CR))) return i + 1;
    } else if (c === CR && (p === CR || p === LF) && i + 1 < b.length && b[i + 1] !== LF) {
      // a lone CR empty line ("\r\r", "\n\r") whose CR is known not to start a CRLF
      return i + 1;
    }
  }
  return 0;
}

/**
 * The line ends that end an event: a line end followed by at least one more (LF, CR or CRLF, REFERENCE
 * §0; a CR before an LF is one CRLF, never two line ends). Captured, so that `split` keeps them.
 */
const EVENT_END = /((?:\r\n|\r(?!\n)|\n){2,})/;
/** One line end (as in {@link EVENT_END}), captured. */
const LINE_END = /(\r\n|\r(?!\n)|\n)/;

/**
 * Whole events of an event stream's text cut apart, every character kept: `[event, end, event, end, …,
 * event]`, each event's lines (without the blank line that ends it) at the even indexes and at the odd
 * ones the line ends that end it (two or more). Joined, the parts are `text` again. For rewriting some
 * events of a stream byte for byte as they came (pipeline/scrub-events.ts); {@link readEvent} reads one.
 */
export function splitEvents(text: string): string[] {
  return text.split(EVENT_END);
}

/** One event's text (an even part of {@link splitEvents}) cut at its line ends: `[line, end, line, end, …, line]`. */
export function splitLines(event: string): string[] {
  return event.split(LINE_END);
}

/**
 * One event's text (its lines, with or without the blank line that ends it) read as {@link SseReader}
 * reads it in a stream: its `event:` name and data (its `data:` lines joined by LF); undefined when it
 * dispatches nothing (no data line: comments only, or a name alone). Throws the reader's FormatError for
 * data longer than 1 MiB nesting past MAX_JSON_DEPTH.
 */
export function readEvent(text: string): SseEvent | undefined {
  let out: SseEvent | undefined;
  const reader = new SseReader((ev) => {
    out = { id: ev.id, event: ev.event, data: ev.data };
  });
  reader.pushText(text);
  reader.end();
  return out;
}

/**
 * True when every `data:` line of an event-stream fragment is JSON (or `[DONE]`): the event is whole.
 * A line longer than DEPTH_CHECKED_BYTES that nests past MAX_JSON_DEPTH is not parsed and makes it
 * not whole (formats/json-depth.ts: the bound on one event).
 */
export function wholeEvents(text: string): boolean {
  let any = false;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (!line.startsWith("data:")) continue;
    const v = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    if (v === "[DONE]") continue;
    if (v.length > DEPTH_CHECKED_BYTES && nestsDeeperThan(v)) return false;
    try {
      JSON.parse(v);
      any = true;
    } catch {
      return false;
    }
  }
  return any;
}
