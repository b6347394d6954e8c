/**
 * Native passthrough observer for Gemini (FormatCodec.createTap, SPEC F-3): a Gemini client's stream
 * served by a Gemini provider.
 *
 * - the upstream bytes are forwarded unchanged, each event once its blank line has arrived: a read is
 *   forwarded up to the end of its last complete event and the rest is held ({@link HeldEvent}), so a
 *   stream cut off inside an event never hands the client a torn JSON payload;
 * - usage (last `usageMetadata` with counts, mapped as in mapping.ts), content, the finish reason and
 *   an in-band `{"error": …}` are observed from the SSE payloads (a payload that is an array of chunks,
 *   the array form of a Gemini stream, chunk by chunk);
 * - for the keep-alive bound (pipeline/keep-alive-bound.ts) the reads that brought content are counted
 *   (`state.contentEvents`, {@link chunkHasContent}): a non-empty text, a call, code, a finish; a chunk
 *   of empty text or usage only is none;
 * - Gemini has no terminal event: the chunk with `finishReason` (or a prompt `blockReason`) is the
 *   end, so `terminal` is set by it;
 * - `end(failure?)`: a held last event that lacked its blank line is forwarded, completed, when its data
 *   is whole JSON (some servers close right after the last data line), and dropped when it was torn;
 *   then, when a finish or an upstream error was seen, nothing more (Gemini has no closing frames;
 *   SPEC 6.4 "only the missing closing frames are added"); otherwise one in-band error chunk
 *   `data: {"error": {…}}` (the `failure`, or the truncation error).
 */
import type { PassthroughTap, TapOptions, TapState } from "../codec.ts";
import { mergeUsage, type HubError, type Usage } from "../hub.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { HeldEvent, lastEventBoundary, SseReader, sseData, wholeEvents, type SseEvent } from "../sse.ts";
import { errorBody, errorFromStatus } from "./errors.ts";
import { mapFinishReason, mapUsage } from "./mapping.ts";
import { isObj, type JsonObject } from "../json.ts";

const utf8 = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** {@link lastEventBoundary} as {@link HeldEvent} asks for it: −1 when no event ended. */
const lastEventEnd = (bytes: Uint8Array): number => lastEventBoundary(bytes) || -1;

/**
 * The members of a part whose presence is content for the keep-alive bound (`state.contentEvents`):
 * a call, inline data, code and its result (Gemini's own code execution, a server tool), a file. A
 * text (or a thought's) counts when it is not empty; so does a thought signature.
 */
const PART_CONTENT = ['"functionCall"', '"inlineData"', '"executableCode"', '"codeExecutionResult"', '"fileData"'];
const TEXT_MEMBERS = ['"text"', '"thoughtSignature"'];
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * Whether one event's data (a chunk, or an array of them) has content for the keep-alive bound: a part
 * of {@link PART_CONTENT}, a non-empty {@link TEXT_MEMBERS} string, or a finish reason. A chunk of only
 * `{"text": ""}` parts, without parts or with usage only is none. Searches of the text, no parse.
 */
function chunkHasContent(data: string): boolean {
  for (const k of TEXT_MEMBERS) {
    for (let i = data.indexOf(k); i !== -1; i = data.indexOf(k, i + 1)) {
      let j = i + k.length;
      while (isSpace(data.charCodeAt(j))) j++;
      if (data.charCodeAt(j) !== 58) continue;
      j++;
      while (isSpace(data.charCodeAt(j))) j++;
      if (data.charCodeAt(j) === 34 && data.charCodeAt(j + 1) !== 34) return true;
    }
  }
  for (const k of PART_CONTENT) if (data.includes(k)) return true;
  return data.includes('"finishReason"');
}

/** Most usage-only payloads the tap keeps unparsed before merging them ({@link GeminiTap}). */
export const PENDING_MAX = 32;

/**
 * {@link PassthroughTap.isErrorEvent} of Gemini: data that is a chunk with an `error` object (or an
 * array of chunks holding one), what the tap reads an error from; its own error frame is one.
 */
function isErrorEvent(_event: string | undefined, data: string): boolean {
  let obj: unknown;
  try {
    obj = JSON.parse(data);
  } catch {
    return false;
  }
  return Array.isArray(obj) ? obj.some(isErrorChunk) : isErrorChunk(obj);
}

/** Whether a parsed Gemini chunk is an error object (`{"error": {…}}`). */
function isErrorChunk(obj: unknown): obj is { error: JsonObject } {
  return isObj(obj) && isObj(obj.error);
}

/**
 * The tap's state (TapState): `usage` is a getter that merges the payloads still kept unparsed first
 * ({@link GeminiTap.mergePending}). A class, so the getter is on its prototype: not a getter pair and
 * function made per reply (docs/performance.md item 301).
 */
class GeminiTapState implements TapState {
  sawContent = false;
  stopReason: TapState["stopReason"] = null;
  terminal = false;
  contentEvents = 0;
  looking = true;
  error: HubError | undefined = undefined;

  constructor(private readonly tap: GeminiTap) {}

  get usage(): Usage {
    return this.tap.mergedUsage();
  }
}

/**
 * The Gemini passthrough tap (see the module comment; FormatCodec.createTap). `push` returns the complete
 * events of what has arrived so far (the read itself when it ends on an event boundary); `end` returns the
 * bytes to append (possibly empty). Throws only when one event grows past MAX_SSE_EVENT_BYTES (sse.ts).
 *
 * A class with methods, not a closure per step made per reply (docs/performance.md item 301).
 */
class GeminiTap implements PassthroughTap {
  readonly state: GeminiTapState = new GeminiTapState(this);
  readonly isErrorEvent = isErrorEvent;
  /** Usage merged so far, without the {@link pending} payloads: read through `state.usage`, which merges them first. */
  private readonly usage: Usage = {};
  /**
   * Payloads whose only effect is their usage, not parsed yet, oldest first: Google repeats
   * `usageMetadata` (the counts so far) on every chunk, and each chunk's fields overwrite the previous
   * ones (mergeUsage), so mostly only the last one counts ({@link mergePending}). Made at the first
   * such payload.
   */
  private pending: string[] | undefined;
  private done = false;
  /** Bytes after the last complete event, not yet forwarded (a terminator can start up to 3 bytes before a read). */
  private readonly held = new HeldEvent(lastEventEnd, 3);
  private readonly reader: SseReader;

  constructor() {
    // Gemini's events are one unnamed `data:` line each: the reader's first look at such an event
    // (`quick`) takes its data, so no event object is made for it.
    this.reader = new SseReader(this.onEvent.bind(this), undefined, this.quick.bind(this));
  }

  push(chunk: Uint8Array): Uint8Array {
    if (this.done) return EMPTY;
    if (chunk.length === 0) return chunk;
    const out = this.held.push(chunk);
    if (out.length > 0) this.reader.push(out);
    return out;
  }

  end(failure?: HubError): Uint8Array {
    if (this.done) return EMPTY;
    this.done = true;
    const state = this.state;
    let tail = "";
    const rest = this.held.takeAll();
    if (rest.length > 0) {
      // A last event without its blank line: completed when its data is whole, else a torn event
      // that is not forwarded (the client's parser would dispatch it as broken JSON).
      const text = new TextDecoder().decode(rest);
      if (wholeEvents(text)) {
        tail = text + "\n\n";
        this.reader.pushText(tail);
      }
    }
    if (state.stopReason !== null || state.error) return tail.length > 0 ? utf8.encode(tail) : EMPTY;
    const err = failure ?? TRUNCATED_ERROR;
    state.error = err; // the client gets an in-band error: the reply failed (SPEC 6.4)
    return utf8.encode(tail + sseData(JSON.stringify(errorBody(err))));
  }

  /** `state.usage`: the usage with the pending payloads merged. */
  mergedUsage(): Usage {
    this.mergePending(undefined);
    return this.usage;
  }

  /** The reader's first look at a one-line unnamed `data:` event (SseQuickLook): `text[start, end)` is its data; takes every one. */
  private quick(text: string, start: number, end: number): boolean {
    this.onData(text.slice(start, end));
    return true;
  }

  /** The reader's dispatch of an event of another shape. */
  private onEvent(ev: SseEvent): void {
    this.onData(ev.data);
  }

  /** One event's data, read ({@link payload}). */
  private onData(data: string): void {
    if (this.state.error || data.length === 0 || data === "[DONE]") return;
    if (this.state.looking && chunkHasContent(data)) this.counted();
    this.payload(data);
  }

  /** A chunk with content was read (`state.contentEvents`); no more looking until the reader asks again (`state.looking`). */
  private counted(): void {
    this.state.looking = false;
    this.state.contentEvents++;
  }

  /** One event's data: parsed and observed, or after the first content kept unparsed when it can only change the usage. */
  private payload(data: string): void {
    // After the first content, an event naming no finish reason, error or prompt feedback can only
    // change the usage (its parts no longer matter): kept unparsed until the usage is read or a later
    // event is parsed. A text with a `\u` escape is parsed now (an escaped member name could hide).
    if (this.state.sawContent && !data.includes("finishReason") && !data.includes("error") && !data.includes("promptFeedback") && !data.includes("\\u")) {
      // Bounded: every PENDING_MAX payloads are merged (newest first, mostly one parse), so a long
      // stream holds a few chunks, not the whole reply.
      const pending = (this.pending ??= []);
      if (pending.push(data) >= PENDING_MAX) this.mergePending(undefined);
      return;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(data);
    } catch {
      return; // passthrough: the client sees the bytes as they are
    }
    if (Array.isArray(obj)) {
      // Several chunks in one payload (the array form of a Gemini stream): observed in order.
      for (let i = 0; i < obj.length && !this.state.error; i++) this.observe(obj[i]);
      return;
    }
    this.observe(obj);
  }

  /**
   * Merges the {@link pending} payloads' usage as if each had been parsed in turn, given the usage of
   * the event that comes after them (`later`, merged by the caller), parsing only the payloads that can
   * still set a field: newest first, a payload is parsed only when its text names a Gemini field behind
   * a usage field that neither `later` nor a newer payload set (pending payloads have no `\u` escape, so
   * a member name can only be spelled out). With a chunk's usage repeated on every chunk that is one
   * parse, or none when the finish chunk carries usage too.
   */
  private mergePending(later: Usage | undefined): void {
    const list = this.pending;
    if (list === undefined || list.length === 0) return;
    this.pending = undefined;
    let needInput = later?.inputTokens === undefined;
    let needCache = later?.cacheReadTokens === undefined;
    let needOutput = later?.outputTokens === undefined;
    let needReasoning = later?.reasoningTokens === undefined;
    let found: Usage[] | undefined;
    for (let i = list.length - 1; i >= 0 && (needInput || needCache || needOutput || needReasoning); i--) {
      const d = list[i]!;
      const may =
        (needInput && d.includes('"promptTokenCount"')) ||
        (needCache && d.includes('"cachedContentTokenCount"')) ||
        (needOutput && d.includes('"candidatesTokenCount"')) ||
        ((needOutput || needReasoning) && d.includes('"thoughtsTokenCount"'));
      if (!may) continue;
      let obj: unknown;
      try {
        obj = JSON.parse(d);
      } catch {
        continue;
      }
      const u = isObj(obj) ? mapUsage(obj.usageMetadata) : undefined;
      if (!u) continue;
      (found ??= []).push(u);
      if (u.inputTokens !== undefined) needInput = false;
      if (u.cacheReadTokens !== undefined) needCache = false;
      if (u.outputTokens !== undefined) needOutput = false;
      if (u.reasoningTokens !== undefined) needReasoning = false;
    }
    if (found !== undefined) for (let i = found.length - 1; i >= 0; i--) mergeUsage(this.usage, found[i]);
  }

  /** Observes one parsed chunk: an error, usage, content, the finish or a blocked prompt. */
  private observe(obj: unknown): void {
    if (!isObj(obj)) return;
    const state = this.state;
    if (isErrorChunk(obj)) {
      state.error = errorFromStatus(obj.error, 0);
      return;
    }
    const u = mapUsage(obj.usageMetadata);
    this.mergePending(u);
    if (u) mergeUsage(this.usage, u);
    const cands = obj.candidates;
    if (Array.isArray(cands) && cands.length > 0) {
      const c = cands.find(isFirstCandidate);
      if (isObj(c)) {
        const parts = isObj(c.content) ? c.content.parts : undefined;
        if (!state.sawContent && Array.isArray(parts)) {
          for (const p of parts) {
            if (!isObj(p)) continue;
            if ((typeof p.text === "string" && p.text.length > 0) || isObj(p.functionCall)) {
              state.sawContent = true;
              break;
            }
          }
        }
        if (typeof c.finishReason === "string" && c.finishReason.length > 0 && state.stopReason === null) {
          state.stopReason = mapFinishReason(c.finishReason);
          state.terminal = true;
          state.sawContent = true;
        }
      }
    } else if (isObj(obj.promptFeedback) && typeof obj.promptFeedback.blockReason === "string" && state.stopReason === null) {
      state.stopReason = "refusal";
      state.terminal = true;
      state.sawContent = true;
    }
  }
}

/** Whether a candidate is the first one (`index` 0, or none given). */
function isFirstCandidate(x: unknown): boolean {
  return isObj(x) && (typeof x.index === "number" ? x.index : 0) === 0;
}

/** Creates a Gemini passthrough tap (FormatCodec.createTap; see {@link GeminiTap}). */
export function createTap(_opts: TapOptions): PassthroughTap {
  return new GeminiTap();
}
