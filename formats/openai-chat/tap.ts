/**
 * Passthrough tap for the native pair Chat client → `openai` provider (SPEC F-3): the provider's
 * bytes go to the client unchanged while the tap reads usage, the finish reason, `[DONE]` and in-band
 * errors.
 *
 * The gateway forces `stream_options.include_usage: true` upstream so usage is real; when the client
 * did not ask for it (`opts.includeUsage` false) the tap WITHHOLDS the usage-only chunk
 * (`choices: []` + a usage object) and forwards everything else byte for byte. A chunk that carries
 * usage next to choices (some servers put usage on the finish chunk) is forwarded: it is not the
 * usage-only chunk.
 *
 * Framing: the tap cuts the byte stream at SSE event boundaries (a blank line: LF, CR or CRLF line
 * ends, REFERENCE §0) and forwards each event once it is complete, so an event is never half-forwarded
 * and then withheld, and a frame the tap appends never fuses with a half-sent one. Complete events are
 * forwarded as views of the input chunk (no copy) when they do not straddle reads.
 *
 * Cheap observation: a complete event is checked for the patterns `"finish_reason":"`, `"usage":{`,
 * `"tool_calls":[` and `"error"` on its BYTES (native searches over the read, no decoding, no string
 * per event) before anything else; in JSON text those patterns can only come from keys or the string
 * value `"error"`, so a miss is certain and the event is forwarded untouched. A hit, an event in
 * another form than `data: <payload>` + blank line, or an event that straddles reads is decoded and
 * checked as text, and a hit there costs one `JSON.parse`. Events are parsed unconditionally only
 * until the first content arrived (usually the second event). An event whose data is longer than 1 MiB
 * and nests past MAX_JSON_DEPTH is refused, read or not, as the other taps refuse it (formats/json-depth.ts
 * `checkEventDepth`, on the bytes of an event forwarded unread: `push` throws its FormatError, `end`
 * sends it as the in-band error); a shorter one costs a length compare.
 *
 * For the keep-alive bound (pipeline/keep-alive-bound.ts) it counts the reads that brought content
 * (`state.contentEvents`): a chunk whose delta has a non-empty `content`, reasoning, refusal or audio
 * (native searches for those member names, kept for the push like the patterns above, made only while
 * `state.looking`: about once a second in a steady stream), a tool call with an id, name or argument text, a finish; an
 * empty delta, `content: ""` or a usage chunk is none.
 *
 * A reply of only `choices: []` chunks then `[DONE]` (Azure's prompt filter results, usage chunks), or
 * of `[DONE]` alone, is read as the decoder reads it: a refusal (the bytes as they came) when a prompt filter result says
 * `filtered: true`, else an empty reply's error (`upstream_empty_reply`) before the commit point.
 *
 * `end(failure?)` (SPEC 6.4): nothing when `[DONE]` arrived after the finish (or an in-band error);
 * `[DONE]` alone when the finish arrived without it, or after an in-band error the provider already
 * sent (a failure `finish_reason` such as `error` counts as one); otherwise the Chat in-band error
 * frame (`failure`, or the truncation error) then `[DONE]`. A `[DONE]` before any finish or error is
 * withheld: that reply was cut off, and gets the error frame like one that just stopped. A trailing event cut off mid-way is dropped
 * unless its data is complete (`[DONE]` or a whole JSON object), then it is forwarded with its blank
 * line added. Nothing after the `[DONE]` that ended the reply is forwarded (SPEC F-5: `[DONE]` once).
 */
import type { PassthroughTap, TapOptions, TapState } from "../codec.ts";
import { FormatError, mergeUsage, type HubError } from "../hub.ts";
import { promoteStopReason, TRUNCATED_ERROR } from "../normalize.ts";
import { utf8Range } from "../utf8-range.ts";
import { concatBytes, eventTooLarge, MAX_SSE_EVENT_BYTES, SSE_DONE, tryParseJson } from "../sse.ts";
import { errorBody, errorFromPayload } from "./errors.ts";
import { finishIsFailure, promptFiltered, stopFromChat, usageFromChat } from "./mapping.ts";
import { EMPTY_REPLY_ERROR } from "./decoder.ts";
import { isObj } from "../json.ts";
import { checkEventDepth, DEPTH_CHECKED_BYTES, nestsDeeperThan, upstreamNestedTooDeep } from "../json-depth.ts";
import { indexOfBytes } from "../index-of-bytes.ts";

const LF = 10;
const CR = 13;
const EMPTY = new Uint8Array(0);
/** Events are cut at ASCII boundaries, so a stateless (non-streaming) decode per event is exact. */
const DECODER = new TextDecoder("utf-8");
/** Encodes the frames `end` appends (stateless: one for every tap). */
const ENCODER = new TextEncoder();
/** {@link ChatTap}'s event data before it was parsed. */
const NOT_PARSED: unique symbol = Symbol("not parsed");
/** {@link ChatTap}'s `choices`: no chunk read yet; only `choices: []` chunks; a chunk with a choice. */
const NO_CHUNK = 0;
const NO_CHOICE = 1;
const SOME_CHOICE = 2;

/** Joined `data:` lines of one SSE event's text, and its `event:` name. */
function parseEventText(text: string): { data: string | undefined; event: string | undefined } {
  // Fast path: exactly `data: <payload>\n\n`.
  if (text.startsWith("data: ")) {
    const nl = text.indexOf("\n");
    if (nl === text.length - 2 && text.charCodeAt(nl + 1) === LF && text.charCodeAt(nl - 1) !== CR) {
      return { data: text.slice(6, nl), event: undefined };
    }
  }
  let data: string | undefined;
  let event: string | undefined;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line.startsWith("data:")) {
      const v = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      data = data === undefined ? v : data + "\n" + v;
    } else if (line.startsWith("event:")) {
      event = line.charCodeAt(6) === 32 ? line.slice(7) : line.slice(6);
    }
  }
  return { data, event };
}

const QUOTE = 34;
const LBRACE = 123;
const LBRACKET = 91;
const RBRACKET = 93;

const isSpace = (c: number) => c === 32 || c === 9 || c === LF || c === CR;

/**
 * Whether `key` occurs in the JSON text as a key whose value starts with the character `open`
 * (`"key" : <open>`). In JSON text an unescaped `"key"` can only be a key or a string value, so a miss
 * is exact and a hit costs one parse. Native `indexOf` plus a few char checks, no regex.
 */
function keyFollowedBy(text: string, key: string, open: number): boolean {
  let i = text.indexOf(key);
  while (i !== -1) {
    let j = i + key.length;
    while (j < text.length && isSpace(text.charCodeAt(j))) j++;
    if (text.charCodeAt(j) === 58) {
      j++;
      while (j < text.length && isSpace(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) === open) return true;
    }
    i = text.indexOf(key, i + 1);
  }
  return false;
}

/**
 * Where a chunk's delta carries content (for the keep-alive bound, `state.contentEvents`): the members
 * named `content`, `reasoning_content`, `reasoning`, `reasoning_details`, `refusal` and `audio`, found
 * by these endings of their names (a string value cannot end in `"` unescaped, so a hit is a member).
 * With a non-empty string, a non-empty array or an object as its value ({@link valueHasContent}) the chunk has
 * content; an empty string, `[]` or `null` is none. Tool calls and finishes are read where the tap
 * parses them.
 */
const CONTENT_NAME_ENDS = ['content"', 'reasoning"', 'reasoning_details"', 'refusal"', '"audio"'];
const CONTENT_NEEDLES = CONTENT_NAME_ENDS.map((k) => Buffer.from(k));
/** The first of the {@link HITS} slots kept for {@link CONTENT_NEEDLES}. */
const CONTENT_HITS = 4;

/**
 * Scratch of one {@link ChatTap.push}, shared by every tap: a push runs to its end without yielding and
 * no tap's push runs inside another's, so one of each serves the process instead of one per reply
 * (docs/performance.md item 298). Both are reset when a push starts.
 * - `HITS`: the next position of each byte pattern `observeBytes` looks for in the push's chunk (-1:
 *   not searched yet), then of {@link CONTENT_NEEDLES}.
 * - `OUTS`: the output's parts in order: a byte array (an event completed from pending bytes), or two
 *   numbers, the start and end of a run of the push's chunk (no view made of it until the output is put
 *   together, and none when the run is the whole chunk: docs/performance.md item 266).
 */
const HITS = new Int32Array(CONTENT_HITS + CONTENT_NEEDLES.length);
const OUTS: Array<Uint8Array | number> = [];

/**
 * Whether the value after the member name ending at `j` of `b` (spaces, a colon, spaces, the value;
 * looked at up to `end`) is a non-empty string, a non-empty array or an object.
 */
function valueHasContent(b: Uint8Array, j: number, end: number): boolean {
  while (j < end && isSpace(b[j]!)) j++;
  if (b[j] !== 58) return false;
  j++;
  while (j < end && isSpace(b[j]!)) j++;
  const c = b[j];
  if (c === QUOTE) return b[j + 1] !== QUOTE;
  if (c === LBRACE) return true;
  if (c !== LBRACKET) return false;
  j++;
  while (j < end && isSpace(b[j]!)) j++;
  return b[j] !== RBRACKET;
}

/** {@link valueHasContent} in text. */
function textValueHasContent(t: string, j: number): boolean {
  const end = t.length;
  while (j < end && isSpace(t.charCodeAt(j))) j++;
  if (t.charCodeAt(j) !== 58) return false;
  j++;
  while (j < end && isSpace(t.charCodeAt(j))) j++;
  const c = t.charCodeAt(j);
  if (c === QUOTE) return t.charCodeAt(j + 1) !== QUOTE;
  if (c === LBRACE) return true;
  if (c !== LBRACKET) return false;
  j++;
  while (j < end && isSpace(t.charCodeAt(j))) j++;
  return t.charCodeAt(j) !== RBRACKET;
}

/** Whether the event's data text has content by {@link CONTENT_NAME_ENDS} (the text path; the bytes path is `ChatTap.contentIn`). */
function hasContentText(text: string): boolean {
  for (const key of CONTENT_NAME_ENDS) {
    for (let i = text.indexOf(key); i !== -1; i = text.indexOf(key, i + 1)) if (textValueHasContent(text, i + key.length)) return true;
  }
  return false;
}

/** Whether a delta's `tool_calls` carry something: a call's id or name, or argument text or a custom call's input (an empty fragment is none). */
function callsCarry(calls: unknown[]): boolean {
  for (const c of calls) {
    if (!isObj(c)) continue;
    if (typeof c.id === "string" && c.id.length > 0) return true;
    const fn = c.function;
    if (!isObj(fn)) {
      // A custom tool's call: its name or a piece of its raw input.
      const cu = c.custom;
      if (isObj(cu) && ((typeof cu.name === "string" && cu.name.length > 0) || (typeof cu.input === "string" && cu.input.length > 0))) return true;
      continue;
    }
    if (typeof fn.name === "string" && fn.name.length > 0) return true;
    if ((typeof fn.arguments === "string" && fn.arguments.length > 0) || isObj(fn.arguments)) return true;
  }
  return false;
}

/** `Buffer#copy` over plain byte arrays: copies a range of one into another without a view of the range. */
const bufferCopy = Buffer.prototype.copy as unknown as (this: Uint8Array, target: Uint8Array, targetStart: number, sourceStart: number, sourceEnd: number) => number;
const ERROR_KEY = Buffer.from('"error"');
const TOOL_CALLS_KEY = Buffer.from('"tool_calls"');
const FINISH_KEY = Buffer.from('"finish_reason"');
const USAGE_KEY = Buffer.from('"usage"');
const DATA_PREFIX = [100, 97, 116, 97, 58, 32]; // "data: "
const DONE = [91, 68, 79, 78, 69, 93]; // "[DONE]"

/**
 * Whether [from, to) of `b` is exactly `data: <payload>\n\n` with one line (the form
 * {@link parseEventText}'s fast path takes): the bytes `to-1` and `to-2` are LF (the caller cut there).
 * `oneLine`: the caller already knows the event has one line (else the first LF is looked up).
 */
function isPlainDataEvent(b: Uint8Array, from: number, to: number, oneLine: boolean): boolean {
  if (to - from < 8 || b[to - 1] !== LF || b[to - 2] !== LF || b[to - 3] === CR) return false;
  for (let i = 0; i < 6; i++) if (b[from + i] !== DATA_PREFIX[i]) return false;
  return oneLine || b.indexOf(LF, from) === to - 2;
}

function isDone(b: Uint8Array, at: number): boolean {
  for (let i = 0; i < 6; i++) if (b[at + i] !== DONE[i]) return false;
  return true;
}

/** The Chat passthrough tap; see the module comment. */
export class ChatTap implements PassthroughTap {
  readonly state: TapState = { usage: {}, sawContent: false, stopReason: null, terminal: false, contentEvents: 0, looking: true };
  private readonly includeUsage: boolean;
  private readonly decoder = DECODER;
  private readonly encoder = ENCODER;
  /** Bytes of the current, incomplete event (copies); made when a read ends inside an event (most replies never do). */
  private pending: Uint8Array[] | undefined;
  private pendingLen = 0;
  private lineHasChars = false;
  /** Lines of the current event counted by the LF-only framing (reset at each event; approximate after CR framing, which never uses it). */
  private lines = 0;
  private prevCR = false;
  /** An event boundary ended in CR: cut after the next byte if it is LF, else before it. */
  private cutAtCR = false;
  private sawTool = false;
  private finishRaw: string | undefined;
  private ended = false;
  private outLen = 0;
  private runStart = -1;
  /** The data of the event {@link observe} reads, once parsed ({@link payload}). */
  private parsed: unknown = NOT_PARSED;
  /** Before the first content: no chunk read yet, only `choices: []` chunks, or a chunk with a choice. */
  private choices = NO_CHUNK;
  /** A `choices: []` chunk's `prompt_filter_results` said a prompt was filtered (Azure's content filter). */
  private promptFiltered = false;

  constructor(opts: TapOptions) {
    this.includeUsage = opts.includeUsage === true;
  }

  push(chunk: Uint8Array): Uint8Array {
    if (this.ended || chunk.length === 0) return EMPTY;
    OUTS.length = 0;
    this.outLen = 0;
    this.runStart = -1;
    HITS.fill(-1);
    let segStart = 0;
    const n = chunk.length;
    if (!this.prevCR && !this.cutAtCR && chunk.indexOf(CR) === -1) {
      // Fast path (LF-only framing, the common case): jump from LF to LF natively.
      let lineHasChars = this.lineHasChars;
      let lines = this.lines;
      let pos = 0;
      for (;;) {
        const i = chunk.indexOf(LF, pos);
        if (i === -1) {
          if (pos < n) lineHasChars = true;
          break;
        }
        if (i === pos && !lineHasChars) {
          this.complete(chunk, segStart, i + 1, lines === 1);
          segStart = i + 1;
          lines = 0;
        } else if (chunk[i + 1] === LF) {
          // A line and the blank line after it (the usual `data: …\n\n`): no second search.
          this.complete(chunk, segStart, i + 2, lines === 0);
          segStart = i + 2;
          lines = 0;
          lineHasChars = false;
          pos = i + 2;
          continue;
        } else lines++;
        lineHasChars = false;
        pos = i + 1;
      }
      this.lineHasChars = lineHasChars;
      this.lines = lines;
      return this.finishPush(chunk, segStart);
    }
    for (let i = 0; i < n; i++) {
      const b = chunk[i];
      if (this.cutAtCR) {
        this.cutAtCR = false;
        if (b === LF) {
          this.prevCR = false;
          this.complete(chunk, segStart, i + 1);
          segStart = i + 1;
          continue;
        }
        this.complete(chunk, segStart, i);
        segStart = i;
      }
      if (b === LF) {
        if (this.prevCR) {
          this.prevCR = false;
          continue;
        }
        if (this.lineHasChars) this.lineHasChars = false;
        else {
          this.complete(chunk, segStart, i + 1);
          segStart = i + 1;
        }
      } else if (b === CR) {
        this.prevCR = true;
        if (this.lineHasChars) this.lineHasChars = false;
        else this.cutAtCR = true;
      } else {
        this.prevCR = false;
        this.lineHasChars = true;
      }
    }
    this.lines = 0; // an event cut here is pending and read as text; the next one starts counting afresh
    return this.finishPush(chunk, segStart);
  }

  /** Ends a push: flushes the forwarded run, keeps the incomplete event's bytes, returns the output. */
  private finishPush(chunk: Uint8Array, segStart: number): Uint8Array {
    const n = chunk.length;
    if (this.runStart >= 0) this.outRun(this.runStart, segStart);
    if (segStart < n) {
      if (this.pendingLen + (n - segStart) > MAX_SSE_EVENT_BYTES) {
        // One event without end past the bound (sse.ts): dropped, and the reply fails.
        this.pending = undefined;
        this.pendingLen = 0;
        throw eventTooLarge();
      }
      const rest = chunk.slice(segStart);
      (this.pending ??= []).push(rest);
      this.pendingLen += rest.length;
    }
    const result = this.output(chunk);
    OUTS.length = 0;
    return result;
  }

  /** The push's output from {@link outs}: the chunk itself for a run over all of it, else a view or a copy. */
  private output(chunk: Uint8Array): Uint8Array {
    const outs = OUTS;
    const k = outs.length;
    if (k === 0) return EMPTY;
    const first = outs[0]!;
    if (typeof first !== "number") {
      if (k === 1) return first;
    } else if (k === 2) {
      const end = outs[1] as number;
      return first === 0 && end === chunk.length ? chunk : chunk.subarray(first, end);
    }
    const out = new Uint8Array(this.outLen);
    let o = 0;
    for (let i = 0; i < k; i++) {
      const p = outs[i]!;
      if (typeof p === "number") {
        const end = outs[++i] as number;
        bufferCopy.call(chunk, out, o, p, end);
        o += end - p;
      } else {
        out.set(p, o);
        o += p.length;
      }
    }
    return out;
  }

  /**
   * {@link PassthroughTap.isErrorEvent}: an `event: error`, or data holding an error as {@link observe}
   * reads one ({@link inBandError}); the frame `end` writes is such data.
   */
  isErrorEvent(event: string | undefined, data: string): boolean {
    return event === "error" || (data.includes('"error"') && inBandError(event, tryParseJson(data)) !== undefined);
  }

  end(failure?: HubError): Uint8Array {
    if (this.ended) return EMPTY;
    this.ended = true;
    // The usual end: nothing held, `[DONE]` read after the finish: nothing to add (and no list made).
    if (this.pendingLen === 0 && this.state.terminal) return EMPTY;
    const parts: Uint8Array[] = [];
    if (this.pendingLen > 0) {
      const bytes = concatBytes(this.pending!, this.pendingLen);
      this.pending = undefined;
      this.pendingLen = 0;
      const text = this.decoder.decode(bytes);
      const { data, event } = parseEventText(text);
      // An event too deep to parse (formats/json-depth.ts checkEventDepth) is refused, not read: the reply fails with it.
      const deep = data !== undefined && data.length > DEPTH_CHECKED_BYTES && nestsDeeperThan(data);
      if (deep) failure = upstreamNestedTooDeep("a stream event");
      const whole = !deep && data !== undefined && (data === "[DONE]" || tryParseJson(data) !== undefined);
      if (whole || (this.cutAtCR && !deep)) {
        if (this.observe(data, event)) {
          parts.push(bytes);
          // the blank line that ends it: after a CR-ended line "\n" would only complete that CRLF
          if (!this.cutAtCR) parts.push(this.encoder.encode(this.lineHasChars || this.prevCR ? "\n\n" : "\n"));
        }
      }
      // else: an event cut off mid-way carries nothing usable and is dropped
    }
    let tail = "";
    if (!this.state.terminal) {
      if (this.state.error) tail = SSE_DONE;
      else if (this.finishRaw !== undefined) tail = SSE_DONE;
      else {
        // The client gets an in-band error: the reply failed, whatever the caller records (SPEC 6.4).
        this.state.error = failure ?? TRUNCATED_ERROR;
        tail = "data: " + JSON.stringify(errorBody(this.state.error)) + "\n\n" + SSE_DONE;
      }
    }
    if (tail) parts.push(this.encoder.encode(tail));
    if (parts.length === 0) return EMPTY;
    let total = 0;
    for (const p of parts) total += p.length;
    return concatBytes(parts, total);
  }

  // ---------------------------------------------------------------------------------------------

  private out(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    OUTS.push(bytes);
    this.outLen += bytes.length;
  }

  /** Forwards [start, end) of the push's chunk ({@link outs}). */
  private outRun(start: number, end: number): void {
    if (end <= start) return;
    OUTS.push(start, end);
    this.outLen += end - start;
  }

  /**
   * One event is complete: [from, to) of `chunk`, after any pending bytes. `singleLine`: the framing
   * saw exactly one line in it (undefined when it did not count).
   */
  private complete(chunk: Uint8Array, from: number, to: number, singleLine?: boolean): void {
    if (this.pendingLen > 0) {
      this.pending!.push(chunk.subarray(from, to));
      const bytes = concatBytes(this.pending!, this.pendingLen + (to - from));
      // Emptied first: an event refused while read (observe throws) is not held for end() either.
      this.pending = undefined;
      this.pendingLen = 0;
      const forward = this.observeText(bytes);
      if (this.runStart >= 0) this.outRun(this.runStart, from);
      this.runStart = -1;
      if (forward) this.out(bytes);
    } else if (this.observeBytes(chunk, from, to, singleLine)) {
      if (this.runStart < 0) this.runStart = from;
    } else if (this.runStart >= 0) {
      this.outRun(this.runStart, from);
      this.runStart = -1;
    }
  }

  /** Decodes one whole event and reads it ({@link observe}). */
  private observeText(bytes: Uint8Array): boolean {
    const { data, event } = parseEventText(this.decoder.decode(bytes));
    return this.observe(data, event);
  }

  /** {@link observeText} of the event at [from, to) of `chunk`, decoded without a view of it (formats/utf8-range.ts). */
  private observeRange(chunk: Uint8Array, from: number, to: number): boolean {
    const { data, event } = parseEventText(utf8Range(chunk, from, to));
    return this.observe(data, event);
  }

  /**
   * Reads a plain `data: <payload>` event ({@link isPlainDataEvent}) whose payload is [start, end) of
   * `chunk`: only the payload is decoded (the same text {@link parseEventText} takes of the whole
   * event's, without decoding the rest and cutting it out; docs/performance.md item 179).
   */
  private observePayload(chunk: Uint8Array, start: number, end: number): boolean {
    return this.observe(utf8Range(chunk, start, end), undefined);
  }

  /**
   * Reads the event at [from, to) of `chunk` without decoding it when the bytes prove that
   * {@link observe} would change nothing and forward it: the event is the plain `data: <payload>\n\n`
   * form, content was already seen, and the payload holds none of the byte patterns observe reacts to
   * (`"error"`, `"tool_calls"` + `[`, `"finish_reason"` + `"`, `"usage"` + `{`; in UTF-8 JSON these ASCII
   * bytes occur exactly where the decoded text has them). `[DONE]` is recognised by its bytes. Any
   * other event is decoded and read as text. Searches are native (`Buffer#indexOf` over the chunk) and
   * their positions are kept for the rest of the push, so a chunk of many events costs a few scans.
   */
  private observeBytes(chunk: Uint8Array, from: number, to: number, singleLine: boolean | undefined): boolean {
    const st = this.state;
    if (st.terminal) return false; // after the first `[DONE]` (SPEC F-5: once) nothing more is forwarded
    const end = to - 2; // the payload ends at the first of the two LFs
    if (singleLine === false || !isPlainDataEvent(chunk, from, to, singleLine === true)) return this.observeRange(chunk, from, to);
    const start = from + 6;
    // Before the first content every event is read; a plain one as its payload's text (what parseEventText would take of it).
    if (!st.sawContent) return this.observePayload(chunk, start, end);
    if (end - start === 6 && isDone(chunk, start)) return this.done();
    const hits = HITS;
    if (
      this.nextHit(chunk, hits, 0, ERROR_KEY, start) < end ||
      this.keyHit(chunk, hits, 1, TOOL_CALLS_KEY, start, end, LBRACKET) ||
      this.keyHit(chunk, hits, 2, FINISH_KEY, start, end, QUOTE) ||
      this.keyHit(chunk, hits, 3, USAGE_KEY, start, end, LBRACE)
    ) {
      return this.observePayload(chunk, start, end);
    }
    // Forwarded unread: an event of more than 1 MiB nesting past MAX_JSON_DEPTH is refused all the same.
    if (end - start > DEPTH_CHECKED_BYTES && nestsDeeperThan(chunk.subarray(start, end))) throw new FormatError(upstreamNestedTooDeep("a stream event"));
    if (this.state.looking && this.contentIn(chunk, hits, start, end)) this.counted();
    return true;
  }

  /** An event with content was read (`state.contentEvents`); no more looking until the reader asks again (`state.looking`). */
  private counted(): void {
    this.state.looking = false;
    this.state.contentEvents++;
  }

  /** {@link hasContentText} on the bytes [from, end) of `chunk`, with the push's cached searches. */
  private contentIn(chunk: Uint8Array, hits: Int32Array, from: number, end: number): boolean {
    for (let k = 0; k < CONTENT_NEEDLES.length; k++) {
      const needle = CONTENT_NEEDLES[k]!;
      for (let i = this.nextHit(chunk, hits, CONTENT_HITS + k, needle, from); i < end; i = this.nextHit(chunk, hits, CONTENT_HITS + k, needle, i + 1)) {
        if (valueHasContent(chunk, i + needle.length, end)) return true;
      }
    }
    return false;
  }

  /** Next position ≥ `from` of needle `k` in `chunk` (cached per push in `hits`), or `chunk.length`. */
  private nextHit(chunk: Uint8Array, hits: Int32Array, k: number, needle: Buffer, from: number): number {
    let at = hits[k];
    if (at < from) {
      const i = indexOfBytes(chunk, needle, from);
      at = i === -1 ? chunk.length : i;
      hits[k] = at;
    }
    return at;
  }

  /** Whether `key` occurs in [from, end) followed by `: <open>` (JSON whitespace allowed), by bytes. */
  private keyHit(chunk: Uint8Array, hits: Int32Array, k: number, key: Buffer, from: number, end: number, open: number): boolean {
    for (let at = this.nextHit(chunk, hits, k, key, from); at < end; at = this.nextHit(chunk, hits, k, key, at + 1)) {
      let j = at + key.length;
      while (j < end && isSpace(chunk[j])) j++;
      if (chunk[j] !== 58) continue;
      j++;
      while (j < end && isSpace(chunk[j])) j++;
      if (chunk[j] === open) return true;
    }
    return false;
  }

  /**
   * `[DONE]` arrived. After a finish_reason or an in-band error it ends the stream and is forwarded.
   * Before either, the reply was cut off (some servers and proxies send `[DONE]` when their own
   * upstream broke): it is withheld, so that `end()` sends the truncation error and then `[DONE]`
   * (SPEC 6.4: a cut-off reply never reads as a finished one; the decoder treats it the same way).
   */
  private done(): boolean {
    const st = this.state;
    if (st.terminal) return false; // a second `[DONE]`: the stream ended at the first
    if (this.finishRaw === undefined && st.error === undefined) {
      if (this.choices === SOME_CHOICE) return false;
      // Only `choices: []` chunks before it, or no chunk at all (`[DONE]` alone): an empty reply, read
      // as the decoder reads it (decoder.ts `end`): a refusal when a prompt filter result said so
      // (forwarded as it came), else the empty reply's error (a failed attempt: nothing was forwarded
      // yet; SPEC 6.3's last row, the next target, not the 5xx row of a cut stream).
      if (this.promptFiltered) {
        this.finishRaw = "content_filter";
        st.stopReason = "refusal";
        st.sawContent = true;
      } else st.error = EMPTY_REPLY_ERROR;
    }
    st.terminal = true;
    return true;
  }

  /**
   * The data of the event {@link observe} reads, parsed at its first call for that event (a field, not
   * a closure per event: docs/performance.md item 123); undefined when it is not a JSON object.
   */
  private payload(data: string): Record<string, any> | undefined {
    // An event of more than 1 MiB nesting past MAX_JSON_DEPTH was refused before (observe).
    if (this.parsed === NOT_PARSED) this.parsed = tryParseJson(data);
    return isObj(this.parsed) ? this.parsed : undefined;
  }

  /** Reads one event; returns false when it must be withheld (the usage-only chunk not asked for, a premature `[DONE]`). */
  private observe(data: string | undefined, event: string | undefined): boolean {
    const st = this.state;
    if (st.terminal) return false; // nothing after the first `[DONE]` is forwarded (SPEC F-5), whatever it is
    if (data === undefined) return true;
    if (data === "[DONE]") return this.done();
    // An event of more than 1 MiB nesting past MAX_JSON_DEPTH is refused, parsed or not (throws).
    checkEventDepth(data);
    this.parsed = NOT_PARSED;
    if (event === "error" || data.includes('"error"')) {
      const err = inBandError(event, this.payload(data));
      if (err) {
        st.error ??= err;
        return true;
      }
    }
    // Before the first content the event is parsed anyway: its tool calls are read from the parse.
    if (!st.sawContent || keyFollowedBy(data, '"tool_calls"', LBRACKET)) {
      const p = this.payload(data);
      if (p !== undefined && this.choices !== SOME_CHOICE) {
        // Before the first content: whether the reply so far is only `choices: []` chunks (see done()).
        if (Array.isArray(p.choices) && p.choices.length > 0) this.choices = SOME_CHOICE;
        else {
          this.choices = NO_CHOICE;
          if (!this.promptFiltered && p.prompt_filter_results !== undefined) this.promptFiltered = promptFiltered(p.prompt_filter_results);
        }
      }
      const choice = p && Array.isArray(p.choices) && isObj(p.choices[0]) ? p.choices[0] : undefined;
      const d = choice && isObj(choice.delta) ? choice.delta : undefined;
      if (d) {
        const calls = Array.isArray(d.tool_calls) && d.tool_calls.length > 0;
        if (calls) this.sawTool = true;
        const content =
          (typeof d.content === "string" && d.content.length > 0) ||
          (Array.isArray(d.content) && d.content.length > 0) ||
          (typeof d.reasoning_content === "string" && d.reasoning_content.length > 0) ||
          (typeof d.reasoning === "string" && d.reasoning.length > 0) ||
          (typeof d.refusal === "string" && d.refusal.length > 0);
        if (calls || content) st.sawContent = true;
        if (this.state.looking && (content || (calls && callsCarry(d.tool_calls as unknown[])) || hasContentText(data))) this.counted();
      }
    } else if (this.state.looking && hasContentText(data)) this.counted();
    if (keyFollowedBy(data, '"finish_reason"', QUOTE)) {
      const p = this.payload(data);
      const choice = p && Array.isArray(p.choices) && isObj(p.choices[0]) ? p.choices[0] : undefined;
      const fr = choice?.finish_reason;
      if (typeof fr === "string" && fr.length > 0 && this.finishRaw === undefined) {
        st.sawContent = true;
        if (this.state.looking) this.counted();
        if (finishIsFailure(fr)) {
          // The client sees this finish_reason in-band; the reply failed (as the decoder reports it).
          st.error ??= failureFinishError(fr);
        } else {
          this.finishRaw = fr;
          const reason = stopFromChat(fr);
          st.stopReason = reason ? promoteStopReason(reason, this.sawTool) : reason;
        }
      }
    }
    if (keyFollowedBy(data, '"usage"', LBRACE)) {
      const p = this.payload(data);
      if (p) {
        const raw = isObj(p.usage) ? p.usage : isObj(p.x_groq) ? p.x_groq.usage : undefined;
        if (isObj(raw)) st.usageSeen = true;
        mergeUsage(st.usage, usageFromChat(raw));
        if (!this.includeUsage && isObj(p.usage) && Array.isArray(p.choices) && p.choices.length === 0) return false;
      }
    }
    return true;
  }
}

/** The failure a Chat `finish_reason` that is not a finish stands for (as formats/openai-chat/decoder.ts reports it). */
function failureFinishError(finish: string): HubError {
  const overloaded = finish === "insufficient_system_resource";
  return {
    kind: overloaded ? "overloaded" : "api_error",
    status: overloaded ? 503 : 502,
    message: `The upstream ended the reply with finish_reason "${finish}".`,
    code: finish,
  };
}

/**
 * The in-band error a Chat event holds, given its name and its data parsed (`p`, undefined when it is
 * not JSON): a payload with an `error` member or `object: "error"`, or under `event: error` the payload
 * itself when it has no `error` member; undefined when it holds none.
 */
function inBandError(event: string | undefined, p: unknown): HubError | undefined {
  if (!isObj(p)) return undefined;
  return errorFromPayload(event === "error" && p.error === undefined ? { error: p } : p);
}

/** Creates the Chat passthrough tap (codec contract). */
export function createTap(opts: TapOptions): PassthroughTap {
  return new ChatTap(opts);
}
