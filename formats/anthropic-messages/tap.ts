/**
 * Passthrough observer for native Anthropic streams (SPEC F-3, 6.4): the provider's bytes go to the
 * client unchanged while the tap reads usage (`message_start` + `message_delta`, cumulative: later
 * values replace), the stop reason, `message_stop`, and an in-band `event: error`.
 *
 * Cheap by design: events are recognised by their SSE `event:` name and only `message_start`,
 * `message_delta` and `error` payloads are JSON-parsed (an unnamed event, which Anthropic never sends,
 * is parsed to learn its type). For the keep-alive bound (pipeline/keep-alive-bound.ts) it counts the
 * reads that brought content (`state.contentEvents`): a block's start, a delta that does not end in an
 * empty string (read off the skipped event's last bytes, {@link deltaEnd}; parsed in another member order), the stop reason;
 * pings, a block's stop and empty deltas are none. It also keeps the count of server tools in flight
 * (`state.serverTools`: a `server_tool_use` or `mcp_tool_use` block started, its `*_tool_result` block
 * not yet), read off the starts of blocks whose event holds `_tool_` (a few per reply), so a web search
 * that only pings is not cut at the idle timeout.
 *
 * Bytes are forwarded unchanged but only up to the last complete event (the end of a blank line): a
 * trailing partial event is held until the rest arrives. So when the upstream dies mid-event the client
 * never holds half an event, and {@link AnthropicTap.end} can append clean frames:
 * - the stream was complete (`message_stop`, or the upstream's own `event: error`): nothing;
 * - the stop reason arrived (`message_delta`) but not `message_stop`: only `message_stop` (case B12);
 * - otherwise: one `event: error` (`failure`, else an `api_error` "stream ended early"); never an
 *   invented finish. A `message_stop` before any stop reason is such a cut-off reply too: it (and
 *   whatever follows it) is withheld and the error frame takes its place, as the translated lanes do.
 *
 * One repair: a `message_start` after the stream's first (recorded/anthropic-messages/
 * duplicate-message-start.sse) is not forwarded, as the `anthropic-compatible` lane drops it (its
 * normalizer keeps one, formats/normalize.ts): the official SDK's `MessageStream` throws on a second one
 * ("Unexpected event order, got message_start before receiving message_stop"). Its usage is still read
 * (later values replace), so the recorded figures are the same as on that lane. When a repeat's input
 * or cache counts differ from the first event's (which the client kept), the stream's `message_delta`
 * carries the latest ones where it has none of its own ({@link withOwedCounts}): the SDK's
 * `MessageStream` takes `input_tokens`, `cache_creation_input_tokens` and `cache_read_input_tokens`
 * from `message_delta` when present (overwriting `message_start`'s), so the client's final usage is
 * the record's, as the `anthropic-compatible` lane puts the latest in its `message_delta`. Only a read
 * that brought a repeat, or such a `message_delta`, is cut apart ({@link withoutRepeatedStarts}).
 */
import type { PassthroughTap, TapOptions, TapState } from "../codec.ts";
import { FormatError, mergeUsage, type HubError } from "../hub.ts";
import { DEPTH_CHECKED_BYTES, nestsDeeperThan, upstreamNestedTooDeep } from "../json-depth.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { concatBytes, errorEventNotJson, HeldEvent, lastEventBoundary, MAX_SSE_EVENT_BYTES, readEvent, splitEvents, splitLines, SseReader, wholeEvents, type SseEvent } from "../sse.ts";
import { errorFrame, errorFromObject } from "./errors.ts";
import { serverToolStep, stopFromAnthropic, usageFromAnthropic } from "./mapping.ts";
import { indexOfBytes } from "../index-of-bytes.ts";

const EMPTY = new Uint8Array(0);
const utf8 = new TextEncoder();
const MESSAGE_STOP_FRAME = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
/** The line that opens a `message_stop` event (Anthropic names every event). */
const MESSAGE_STOP_LINE = Buffer.from("event: message_stop");
const bufferLastIndexOf = Buffer.prototype.lastIndexOf;
const LF = 10;
const CR = 13;
/** What starts a line that sets or clears an event's name. */
const EVENT_FIELD = Buffer.from("event");
/** First lines of the events {@link AnthropicTap.onEvent} does nothing with, whatever their data. */
const PING_LINE = Buffer.from("event: ping");
const BLOCK_LINE = Buffer.from("event: content_block_");
const DELTA = Buffer.from("delta");
const STOP = Buffer.from("stop");
/** A block's start: only the first one read changes anything (`sawContent`). */
const START = Buffer.from("start");
const QUOTE = 34;
const SPACE = 32;
const COLON_BYTE = 58;
const RBRACE = 125;
/** {@link AnthropicTap.ignoredName}: not skipped; a ping or a block's stop; a block's delta; a block's start. */
const NOT_SKIPPED = 0;
const SKIPPED_EMPTY = 1;
const SKIPPED_DELTA = 2;
const SKIPPED_START = 3;

/** {@link deltaEnd}: the delta is empty; it holds content; its end does not say (another member order). */
const DELTA_EMPTY = 0;
const DELTA_CONTENT = 1;
const DELTA_UNSURE = 2;
/** `_delta"}}` backwards from the byte before its last `"`: the delta's `type` written last (another member order than Anthropic's). */
const TYPE_LAST = [97, 116, 108, 101, 100, 95]; // a t l e d _

/**
 * What the end of a skipped `content_block_delta` event's data says, read backwards from `end` (the LF
 * that ends its last line, or the end of its data): Anthropic writes the delta last in the event and the
 * delta's own field last in the delta, so `…:""}}` or `…: ""}}` is an empty text, thinking, arguments or
 * signature delta ({@link DELTA_EMPTY}) and any other string before `"}}` one with content
 * ({@link DELTA_CONTENT}; an escaped quote, `\""}}`, is text), unless that string is the delta's `type`
 * (`"text_delta"}}`). Any other end (the delta's `type` last, the delta before the event's other
 * members, other spacing, a citation's object) is {@link DELTA_UNSURE}, and the data is parsed
 * ({@link emptyDeltaData}). Anthropic's own events never take that path: a non-empty one costs one byte
 * compare more than before, a second when its text ends in `a`.
 */
function deltaEnd(b: Uint8Array, end: number): number {
  const i = end - 1;
  if (b[i] !== RBRACE || b[i - 1] !== RBRACE || b[i - 2] !== QUOTE) return DELTA_UNSURE;
  if (b[i - 3] === QUOTE) return b[i - 4] === COLON_BYTE || (b[i - 4] === SPACE && b[i - 5] === COLON_BYTE) ? DELTA_EMPTY : DELTA_CONTENT;
  for (let k = 0; k < TYPE_LAST.length; k++) if (b[i - 3 - k] !== TYPE_LAST[k]) return DELTA_CONTENT;
  return DELTA_UNSURE;
}
/** {@link deltaEnd} of an event's data as text (CR framing, or an event the reader dispatched). */
function deltaEndText(data: string): number {
  const i = data.length - 1;
  if (data.charCodeAt(i) !== RBRACE || data.charCodeAt(i - 1) !== RBRACE || data.charCodeAt(i - 2) !== QUOTE) return DELTA_UNSURE;
  if (data.charCodeAt(i - 3) === QUOTE) {
    const c = data.charCodeAt(i - 4);
    return c === COLON_BYTE || (c === SPACE && data.charCodeAt(i - 5) === COLON_BYTE) ? DELTA_EMPTY : DELTA_CONTENT;
  }
  for (let k = 0; k < TYPE_LAST.length; k++) if (data.charCodeAt(i - 3 - k) !== TYPE_LAST[k]) return DELTA_CONTENT;
  return DELTA_UNSURE;
}

/**
 * Whether a `content_block_delta` event's data, parsed, is an empty delta: every member of its `delta`
 * but `type` an empty string, null or absent (a text, thinking, arguments or signature delta without
 * its text; a citation is content). Data that does not parse counts as content (as before: the tap
 * forwards it, the client reads it).
 */
function emptyDeltaData(data: string): boolean {
  const d = parse(data)?.delta;
  if (d === null || typeof d !== "object") return false;
  for (const k in d) if (k !== "type" && d[k] !== "" && d[k] !== null) return false;
  return true;
}

/** Whether the skipped `content_block_delta` event [from, to) of `b`, whose data's last line ends at `end`, is empty ({@link deltaEnd}). */
function isEmptyDelta(b: Uint8Array, from: number, to: number, end: number): boolean {
  const verdict = deltaEnd(b, end);
  return verdict === DELTA_UNSURE ? emptyDeltaData(dataOf(utf8Decoder.decode(b.subarray(from, to)))) : verdict === DELTA_EMPTY;
}
/** {@link isEmptyDelta} of an event's data as text. */
function isEmptyDeltaText(data: string): boolean {
  const verdict = deltaEndText(data);
  return verdict === DELTA_UNSURE ? emptyDeltaData(data) : verdict === DELTA_EMPTY;
}

/** What the start of a server tool's call or result holds (their types do): only such a start is read for its type. */
const SERVER_TOOL_HINT = "_tool_";
const SERVER_TOOL_HINT_BYTES = Buffer.from(SERVER_TOOL_HINT);
const utf8Decoder = new TextDecoder();
/** `"content_block":{"type":"…"` in any spacing: the started block's type, its first member in Anthropic's events. */
const BLOCK_TYPE = /"content_block"\s*:\s*\{\s*"type"\s*:\s*"([^"\\]*)"/;

/** The type of the block a `content_block_start` event's data starts; undefined when it names none. */
function startedBlockType(data: string): string | undefined {
  const m = BLOCK_TYPE.exec(data);
  if (m) return m[1];
  // Another member order than Anthropic's: the data parsed (a block's start, a few per reply).
  const t = parse(data)?.content_block?.type;
  return typeof t === "string" ? t : undefined;
}

/** The data of an LF-framed event's text (its `data:` lines, joined). */
function dataOf(event: string): string {
  const lines: string[] = [];
  for (const line of event.split("\n")) if (line.startsWith("data:")) lines.push(line.slice(line.charCodeAt(5) === SPACE ? 6 : 5));
  return lines.join("\n");
}

/** Whether `b` holds `prefix` at `at`. */
function startsWithAt(b: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at + prefix.length > b.length) return false;
  for (let i = 0; i < prefix.length; i++) if (b[at + i] !== prefix[i]) return false;
  return true;
}

/**
 * The name `text[from, to)` as the constant {@link AnthropicTap.readEvent} acts on (`content_block_start`,
 * `content_block_delta`, `message_start`, `message_delta`, `message_stop`, `error`), told apart by its
 * length and one character before it is compared whole; undefined for any other name.
 */
function knownName(text: string, from: number, to: number): string | undefined {
  let name: string;
  switch (to - from) {
    case 19: // content_block_start, content_block_delta
      name = text.charCodeAt(from + 14) === 115 ? "content_block_start" : "content_block_delta";
      break;
    case 13: // message_start, message_delta
      name = text.charCodeAt(from + 8) === 115 ? "message_start" : "message_delta";
      break;
    case 12:
      name = "message_stop";
      break;
    case 5:
      name = "error";
      break;
    default:
      return undefined;
  }
  return text.startsWith(name, from) ? name : undefined;
}

/** A UTF-8 byte order mark read as latin1 (one character a byte). */
const BOM_LATIN1 = "\xef\xbb\xbf";

/**
 * `out` (whole events, ending at an event boundary) without its `message_start` events, but the first
 * when `keepFirst` (the stream's first `message_start` is in `out`): each dropped event goes with the
 * blank line that ends it; every other byte is kept as it came. Events are named as the SSE reader names
 * them: by their `event:` line, else by their data's `type`. The text is read as latin1 (one character
 * a byte), so offsets are byte offsets and bytes that are not UTF-8 survive; `streamStart`: `out` begins
 * the stream, whose BOM (which the reader strips there) is not part of the first event's name.
 */
function withoutRepeatedStarts(out: Uint8Array, keepFirst: boolean, streamStart: boolean): Uint8Array {
  const buf = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  const parts = splitEvents(buf.toString("latin1"));
  const kept: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; i < parts.length; i += 2) {
    const event = parts[i];
    const end = at + event.length + (parts[i + 1]?.length ?? 0);
    const probe = i === 0 && streamStart && event.startsWith(BOM_LATIN1) ? event.slice(BOM_LATIN1.length) : event;
    const ev = probe.length > 0 ? readEvent(probe) : undefined;
    const name = ev === undefined ? undefined : (ev.event ?? parse(ev.data)?.type);
    if (name === "message_start" && !keepFirst) {
      // Dropped: the event and the line ends that end it.
    } else {
      if (name === "message_start") keepFirst = false;
      kept.push(out.subarray(at, end));
    }
    at = end;
  }
  return concatBytes(kept);
}

/**
 * The counts of an Anthropic usage object that a `message_delta` overwrites in the official SDK's
 * `MessageStream` when present (@anthropic-ai/sdk lib/MessageStream.ts `accumulateMessage`: "cumulative
 * whole-message totals … overwrite when present and never add"), and that a repeated `message_start`
 * can change: what the tap owes the client in `message_delta` ({@link withOwedCounts}).
 */
const START_COUNTS = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const;
/** Counts of {@link START_COUNTS} the client lacks: the latest repeated `message_start`'s, where they differ from the first's. */
type OwedCounts = Partial<Record<(typeof START_COUNTS)[number], number>>;

/**
 * `out` (whole events, ending at an event boundary) with each `message_delta` event given the
 * {@link OwedCounts} its usage does not have (absent or null), put first in its usage as Anthropic orders
 * them; its data written as one `data:` line of JSON, its other lines and every other byte kept as they
 * came. Events are named as {@link withoutRepeatedStarts} names them.
 */
function withOwedCounts(out: Uint8Array, owed: OwedCounts): Uint8Array {
  const buf = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  const parts = splitEvents(buf.toString("latin1"));
  const kept: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; i < parts.length; i += 2) {
    const eventEnd = at + parts[i].length;
    const end = eventEnd + (parts[i + 1]?.length ?? 0);
    const rewritten = parts[i].length > 0 ? deltaWithCounts(utf8Decoder.decode(out.subarray(at, eventEnd)), owed) : undefined;
    if (rewritten === undefined) kept.push(out.subarray(at, end));
    else kept.push(utf8.encode(rewritten), out.subarray(eventEnd, end));
    at = end;
  }
  return concatBytes(kept);
}

/** One event's text (no blank line) rewritten with `owed` when it is a `message_delta` lacking some of them; else undefined. */
function deltaWithCounts(event: string, owed: OwedCounts): string | undefined {
  const ev = readEvent(event);
  if (ev === undefined) return undefined;
  const m = parse(ev.data);
  if ((ev.event ?? m?.type) !== "message_delta" || m === null || typeof m !== "object") return undefined;
  const was: Record<string, unknown> = m.usage !== null && typeof m.usage === "object" && !Array.isArray(m.usage) ? m.usage : {};
  const usage: Record<string, unknown> = {};
  for (const k of START_COUNTS) if (owed[k] !== undefined && was[k] == null) usage[k] = owed[k];
  if (Object.keys(usage).length === 0) return undefined;
  for (const k in was) if (!(k in usage)) usage[k] = was[k];
  m.usage = usage;
  const lines = splitLines(event);
  const kept: string[] = [];
  let wrote = false;
  for (let j = 0; j < lines.length; j += 2) {
    const line = lines[j]!;
    if (line.startsWith("data") && (line.length === 4 || line.charCodeAt(4) === COLON_BYTE)) {
      if (!wrote) kept.push(`data: ${JSON.stringify(m)}`);
      wrote = true;
    } else kept.push(line);
  }
  return kept.join(lines[1] ?? "\n");
}

/** {@link lastEventBoundary} as {@link HeldEvent} asks for it: −1 when no event ended. */
const lastEventEnd = (bytes: Uint8Array): number => lastEventBoundary(bytes) || -1;

/** The passthrough tap; see the module doc. */
export class AnthropicTap implements PassthroughTap {
  readonly state: TapState = { usage: {}, sawContent: false, stopReason: null, terminal: false, contentEvents: 0, looking: true, serverTools: 0 };
  private readonly reader: SseReader;
  /** Bytes after the last complete event, not yet forwarded (a terminator can start up to 3 bytes before a read). */
  private readonly pending = new HeldEvent(lastEventEnd, 3);
  private ended = false;
  /**
   * `message_stop` arrived before any stop reason (and without an error): the reply was cut off, not
   * finished. That event and anything after it are withheld, and `end()` sends the error frame.
   */
  private prematureStop = false;
  /** Whether the SSE reader has been fed: until then it must get the stream from its start (a BOM is stripped there only). */
  private fed = false;
  /** A CR was read: CR and CRLF framing is left to the SSE reader whole (no event is skipped by bytes). */
  private crSeen = false;
  /** `message_start` events read: every one after the first is a repeat, not forwarded (see the module doc). */
  private starts = 0;
  /** The first `message_start`'s data (whose usage the client keeps), parsed again only when a repeat comes. */
  private firstStart: string | undefined;
  /** Counts the client lacks after repeats that changed them ({@link withOwedCounts}); undefined while none. */
  private owed: OwedCounts | undefined;
  /** The events just read hold a `message_delta` lacking some {@link owed} count: they are rewritten. */
  private deltaOwes = false;

  constructor(_opts: TapOptions) {
    // A named event with one data line (all of Anthropic's) comes to `quickNamed`: its name matched in
    // place, its data cut out only when read, no event object (docs/performance.md item 303).
    this.reader = new SseReader(this.onEvent.bind(this), undefined, undefined, this.quickNamed.bind(this));
  }

  push(chunk: Uint8Array): Uint8Array {
    if (this.ended || this.prematureStop || chunk.length === 0) return EMPTY;
    let out = this.pending.push(chunk);
    if (out.length === 0) return EMPTY;
    const startsBefore = this.starts;
    const streamStart = !this.fed;
    this.read(out);
    // This read brought a repeated `message_start`: it is cut out (the first one, if here, stays).
    if (this.starts > 1 && this.starts > startsBefore) {
      out = withoutRepeatedStarts(out, startsBefore === 0, streamStart);
      if (out.length === 0) return EMPTY;
    }
    if (this.deltaOwes) {
      this.deltaOwes = false;
      out = withOwedCounts(out, this.owed!);
    }
    if (this.prematureStop) {
      // Forward what came before the withheld `message_stop` (its event line starts the event).
      this.pending.takeAll();
      const at = bufferLastIndexOf.call(out, MESSAGE_STOP_LINE) as number;
      // An unnamed `message_stop` (never Anthropic's own) is forwarded; the error frame then follows it.
      return at < 0 ? out : out.subarray(0, at);
    }
    return out;
  }

  /** {@link PassthroughTap.isErrorEvent}: an `error` event, named so or (unnamed) by its data's `type`, as {@link onEvent} reads it. */
  isErrorEvent(event: string | undefined, data: string): boolean {
    return (event ?? parse(data)?.type) === "error";
  }

  end(failure?: HubError): Uint8Array {
    if (this.ended) return EMPTY;
    this.ended = true;
    let tail = "";
    const rest = this.pending.takeAll();
    if (rest.length > 0 && !this.state.terminal && this.state.error === undefined) {
      // A final event without its blank line (some servers close right after the last data line):
      // complete it if it parses as a whole event; otherwise it is a torn event and is not forwarded.
      const text = new TextDecoder().decode(rest);
      if (wholeEvents(text)) {
        tail = text + "\n\n";
        const startsBefore = this.starts;
        this.reader.pushText(tail);
        // A premature stop is withheld; so is a repeated `message_start` (one event: no blank line in it).
        if (this.prematureStop || (this.starts > 1 && this.starts > startsBefore)) tail = "";
        else if (this.deltaOwes) tail = utf8Decoder.decode(withOwedCounts(utf8.encode(tail), this.owed!));
        this.deltaOwes = false;
      }
    }
    const s = this.state;
    if (s.terminal || s.error !== undefined) return tail.length > 0 ? utf8.encode(tail) : EMPTY;
    if (s.stopReason !== null) {
      s.terminal = true;
      return utf8.encode(tail + MESSAGE_STOP_FRAME);
    }
    const err = failure ?? TRUNCATED_ERROR;
    // The client gets an in-band error: the reply failed, whatever the caller records (SPEC 6.4).
    s.error = err;
    return utf8.encode(tail + errorFrame(err));
  }

  /**
   * Reads complete events (`out` ends at an event boundary) as the SSE reader would, without decoding
   * or parsing the events {@link onEvent} does nothing with: in LF-only framing, an event whose first
   * line is exactly `event: ping`, `event: content_block_delta` or `event: content_block_stop` (or
   * `event: content_block_start` once content was seen) and that has no other line starting with
   * `event` is skipped; everything else goes to the reader in runs, unchanged. Skipping is exact: the
   * parser holds nothing between complete LF-framed events (an empty line resets its event fields),
   * the skipped event would have set no state (`id:` lines aside, which no caller reads), and it is no
   * larger than the bound the parser would throw at; one longer than 1 MiB is still checked for nesting
   * past MAX_JSON_DEPTH and refused (formats/json-depth.ts, as the reader checks what it reads). The
   * reader always gets the stream's start itself (a BOM is only stripped there), and a stream that ever
   * shows a CR goes to it whole from then on.
   * The bench's 25-event Messages stream decodes and parses 4 events instead of 25 (item 122).
   */
  private read(out: Uint8Array): void {
    if (!this.crSeen && out.indexOf(CR) !== -1) this.crSeen = true;
    if (this.crSeen) {
      this.reader.push(out);
      this.fed = true;
      return;
    }
    const n = out.length;
    /** Start of the run of bytes not yet given to the reader. */
    let from = 0;
    let ev = 0;
    while (ev < n) {
      // The event at `ev`: its first line, then its other lines up to the empty line that ends it.
      let nl = out.indexOf(LF, ev);
      if (nl === -1) break;
      const kind = nl > ev ? this.ignoredName(out, ev, nl) : NOT_SKIPPED;
      let ignorable = kind !== NOT_SKIPPED;
      let to = nl + 1;
      if (nl > ev) {
        for (;;) {
          if (out[to] === LF) {
            to++;
            break;
          }
          // Another line starting with `event` (a name, or a field without a colon that clears it).
          if (ignorable && startsWithAt(out, to, EVENT_FIELD)) ignorable = false;
          nl = out.indexOf(LF, to);
          if (nl === -1) {
            to = n;
            ignorable = false;
            break;
          }
          to = nl + 1;
        }
      }
      if (ignorable && to - ev <= MAX_SSE_EVENT_BYTES) {
        // Skipped unread: an event of more than 1 MiB nesting past MAX_JSON_DEPTH is refused all the same,
        // as the reader refuses the events it reads (formats/json-depth.ts checkEventDepth).
        if (to - ev > DEPTH_CHECKED_BYTES && nestsDeeperThan(out.subarray(ev, to))) throw new FormatError(upstreamNestedTooDeep("a stream event"));
        // A skipped event still counts for the keep-alive bound: a block's start, a non-empty delta.
        if (this.state.looking && (kind === SKIPPED_START || (kind === SKIPPED_DELTA && !isEmptyDelta(out, ev, to, to - 2)))) this.counted();
        if (from < ev) {
          this.reader.pushRange(out, from, ev);
          this.fed = true;
        }
        if (this.fed) {
          from = to;
          // A block's start skipped unread: a server tool's call or result moves the count of those in flight.
          if (kind === SKIPPED_START) {
            const event = out.subarray(ev, to);
            if (indexOfBytes(event, SERVER_TOOL_HINT_BYTES) !== -1) this.blockStarted(dataOf(utf8Decoder.decode(event)));
          }
        }
      }
      ev = to;
    }
    if (from < n) {
      this.reader.pushRange(out, from, n);
      this.fed = true;
    }
  }

  /**
   * Whether the line [at, nl) of `b` is `event: ping`, `event: content_block_delta`, `event:
   * content_block_stop`, or `event: content_block_start` once content was seen (see {@link read}), and
   * which: {@link SKIPPED_EMPTY} (a ping, a block's stop), {@link SKIPPED_DELTA}, {@link SKIPPED_START};
   * else {@link NOT_SKIPPED}.
   */
  private ignoredName(b: Uint8Array, at: number, nl: number): number {
    const len = nl - at;
    if (len === PING_LINE.length) return startsWithAt(b, at, PING_LINE) ? SKIPPED_EMPTY : NOT_SKIPPED;
    if (len < BLOCK_LINE.length + 4 || !startsWithAt(b, at, BLOCK_LINE)) return NOT_SKIPPED;
    const rest = at + BLOCK_LINE.length;
    if (len === BLOCK_LINE.length + 4) return startsWithAt(b, rest, STOP) ? SKIPPED_EMPTY : NOT_SKIPPED;
    if (len !== BLOCK_LINE.length + 5) return NOT_SKIPPED;
    if (startsWithAt(b, rest, DELTA)) return SKIPPED_DELTA;
    return this.state.sawContent && startsWithAt(b, rest, START) ? SKIPPED_START : NOT_SKIPPED;
  }

  /**
   * A block started (its `content_block_start` event's data): a server tool's call adds one to
   * `state.serverTools`, its result takes one off ({@link serverToolStep}). Only data holding `_tool_`
   * is read for the type.
   */
  private blockStarted(data: string): void {
    if (data.indexOf(SERVER_TOOL_HINT) === -1) return;
    const type = startedBlockType(data);
    if (type !== undefined) this.state.serverTools = Math.max(0, this.state.serverTools! + serverToolStep(type));
  }

  /**
   * A repeated `message_start`'s usage `u` was read (merged into the record's): each of its
   * {@link START_COUNTS} that differs from the first event's is owed to the client, one back at the
   * first's value no longer is ({@link owed}).
   */
  private repeatedStart(u: unknown): void {
    if (u === null || typeof u !== "object") return;
    const first = parse(this.firstStart ?? "")?.message?.usage;
    for (const k of START_COUNTS) {
      const v = (u as Record<string, unknown>)[k];
      if (typeof v !== "number") continue;
      if (v !== first?.[k]) (this.owed ??= {})[k] = v;
      else if (this.owed !== undefined) delete this.owed[k];
    }
  }

  /** An event with content was read (`state.contentEvents`); no more looking until the reader asks again (`state.looking`). */
  private counted(): void {
    this.state.looking = false;
    this.state.contentEvents++;
  }

  /**
   * The reader's first look at a named event with one data line (SseNamedQuickLook): a name
   * {@link readEvent} acts on is matched in place ({@link knownName}) and its data cut out only when read;
   * any other name (a ping, a block's stop) is done with. Takes every one.
   */
  private quickNamed(text: string, nameStart: number, nameEnd: number, start: number, end: number): boolean {
    const name = knownName(text, nameStart, nameEnd);
    if (name === undefined) return true;
    // message_stop reads no data, nor does a delta while nothing looks for content.
    const idle = name === "message_stop" || (name === "content_block_delta" && !this.state.looking);
    this.readEvent(name, idle ? "" : text.slice(start, end));
    return true;
  }

  private onEvent(ev: SseEvent): void {
    let name = ev.event;
    if (name === undefined) {
      // Unnamed events are not Anthropic's; learn the type from the payload.
      const data = ev.data;
      if (data.length === 0 || data === "[DONE]") return;
      try {
        const t = JSON.parse(data)?.type;
        if (typeof t !== "string") return;
        name = t;
      } catch {
        return;
      }
    }
    this.readEvent(name, ev.data);
  }

  /** One event of `name` with `data`: what the tap reads of it (usage, the stop reason, the stop, an error, content). */
  private readEvent(name: string, data: string): void {
    switch (name) {
      case "content_block_start":
        this.state.sawContent = true;
        if (this.state.looking) this.counted();
        this.blockStarted(data);
        return;
      case "content_block_delta":
        // Read here only in CR framing or when the event was not skipped (see read()).
        if (this.state.looking && !isEmptyDeltaText(data)) this.counted();
        return;
      case "message_stop":
        // Only a reply with its stop reason (or the provider's own error) is finished (SPEC 6.4): the
        // translated lanes read a stop without one as truncated, and so does the passthrough.
        if (this.state.stopReason === null && this.state.error === undefined) this.prematureStop = true;
        else this.state.terminal = true;
        return;
      case "message_start": {
        this.starts++;
        const m = parse(data);
        if (m) mergeUsage(this.state.usage, usageFromAnthropic(m.message?.usage));
        if (this.starts === 1) this.firstStart = data;
        else this.repeatedStart(m?.message?.usage);
        return;
      }
      case "message_delta": {
        const m = parse(data);
        if (!m) return;
        mergeUsage(this.state.usage, usageFromAnthropic(m.usage));
        if (this.owed !== undefined) for (const k in this.owed) if (m.usage?.[k] == null) this.deltaOwes = true;
        const raw = m.delta?.stop_reason;
        if (typeof raw === "string") {
          this.state.stopReason = stopFromAnthropic(raw);
          this.state.sawContent = true;
          if (this.state.looking) this.counted();
        }
        return;
      }
      case "error": {
        const m = parse(data);
        this.state.error = m && typeof m === "object" ? errorFromObject(m.error, 0) : errorEventNotJson(data);
        return;
      }
      default:
        return;
    }
  }
}

function parse(data: string): any {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** {@link FormatCodec.createTap} for Anthropic Messages. */
export function createTap(opts: TapOptions): PassthroughTap {
  return new AnthropicTap(opts);
}
