/**
 * Passthrough tap for native Responses pairs (openai-responses / codex client → Responses provider,
 * SPEC F-3). The provider's bytes go to the client unchanged; on the side the tap reads:
 * - the response id and model (`response.created` etc., read only for `end`'s closing events) and the
 *   last `sequence_number`;
 * - content (any `*.delta`, an output item's start or end, or a terminal success) → `sawContent`. An
 *   item's start (`output_item.added`) is the start of a block, counted as Anthropic's tap counts
 *   `content_block_start`: a reasoning item that thinks at length before its summary (or without one)
 *   has begun the reply, and the commit point's first-content bound (pipeline/commit.ts) ends there;
 * - for the keep-alive bound (pipeline/keep-alive-bound.ts), the reads that brought content
 *   (`state.contentEvents`): an item's start or end, a non-empty delta, a hosted tool's progress, an
 *   annotation, the terminal success ({@link progresses}); `keepalive` and lifecycle events are none;
 * - the hosted tools in flight (`state.serverTools`: an item of a type the hub does not carry, such as
 *   `web_search_call`, added and not yet done), so a search that sends only `keepalive` events is
 *   not cut at the idle timeout; read off the `output_item.added` events (and `.done` while one is);
 * - the terminal event: `response.completed` / `response.incomplete` → usage (§5.10) and stop reason
 *   (`tool_use` when the final output holds a function call), `response.failed` → error; `error`
 *   events → error.
 * Only terminal and error events are `JSON.parse`d, found by their `event:` name (official streams
 * always name events, REFERENCE §0); a stream without names is parsed event by event. Lifecycle events
 * (`response.created`, `.in_progress`, `.queued`: each echoes the request) are kept unparsed and read
 * only when `end` has to close a reply that had no terminal event (their response id and model).
 *
 * Framing: bytes are forwarded up to the last complete event (blank line); the unterminated tail of
 * an event is held until its terminator arrives (an SSE event is unusable before that, so nothing is
 * delayed in effect). That keeps `end(failure)` able to append a well-formed `response.failed` after a
 * cut-off stream instead of gluing it onto half an event.
 *
 * `end(failure?)`: nothing when a terminal event arrived; otherwise an `error` event then
 * `response.failed`, with the next `sequence_number`s, the response id seen, `failure` (else the
 * upstream's `error` event, else a truncation error) and the items completed so far (those whose
 * `output_item.done` came; one whose event is over 64 KiB, an image's, by its `id` and `type` only:
 * the tap holds no second copy of it) as its `output` — SPEC 6.4, what the translated lanes' encoder sends
 * (encoder.ts `fail`) and OpenAI's own failed stream has (recorded `openai-responses/error-event.sse`:
 * `error`, then `response.failed`). The `error` event is what makes the OpenAI SDK throw (7.x's
 * `responses.stream()` otherwise resolves a "failed" response with the text so far, and a raw
 * `for await` ends quietly); it is left out when the upstream sent one already (the SDK raised on it),
 * and by the event tap (on Codex's Responses WebSocket an `error` frame is a request refused before its
 * response, as encoder.ts's event encoder says). When the provider sent nothing at all,
 * `response.created` goes first (the OpenAI SDK requires it, REFERENCE §0).
 *
 * A stream whose first event is not `response.created` (a third-party Responses server: recorded
 * `openai-responses/incomplete-max-output-tokens.sse` starts with an output item) gets one made before
 * that event, since the OpenAI SDK's `responses.stream()` throws on any other first event ("When
 * snapshot hasn't been set yet, expected 'response.created' event"; sdk16 S5). It names the response
 * as the first event does when that event carries one (its id and model: the SDK refuses a lifecycle
 * event whose id differs from the first's), else with no id (the stream's later events have none,
 * as in the recording), with the first event's sequence number. Such a stream is not passed on byte
 * for byte (it is no OpenAI stream, and already not as it came): each event goes out re-serialised
 * ({@link ResponsesObserver.repair}) with its `sequence_number` one higher, so the numbers keep
 * rising after the made event (until 2026-12-07 the made event and the first repeated one); its SSE
 * comments (`: keep-alive`), `id:` / `retry:` lines and `data: [DONE]` go out as they came, in order
 * with the events (until 2026-12-07 they were dropped: {@link ResponsesTap.repairedRead}); and a
 * terminal event whose `response` has no `output` gets the items completed so far (the
 * `output_item.done` events' items): the recording's `response.incomplete` has none, and openai 6.x's
 * `responses.stream()` takes the terminal's `response` as the final one and threw "rsp.output is not
 * iterable" (7.x keeps the items it read). A stream that begins with `response.created` (OpenAI's) is
 * passed on unchanged, terminal included. An `error` or `keepalive` event first is left alone, nothing
 * made nor rewritten (the SDK raises the one as it comes and refuses the other before any
 * `response.created`).
 *
 * The event tap ({@link createEventTap}, for Codex's Responses WebSocket, SPEC 2.5) reads the same
 * way and forwards the same events, as the events its reader dispatched (each complete event, in order;
 * the `end` events as events) instead of bytes that the socket would read as SSE a second time.
 */
import { mergeUsage, type HubError } from "../hub.ts";
import type { PassthroughTap, StreamEvent, TapOptions, TapState } from "../codec.ts";
import { errorEventNotJson, HeldEvent, SseReader, sseData, sseNamed, splitEvents, splitLines, type SseEvent } from "../sse.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { fromResponsesUsage, HUB_ITEMS, stopForTerminal } from "./common.ts";
import { failedCodeForKind, hubErrorFromOpenAi } from "./errors.ts";
import { ItemSnapshot } from "./item-snapshot.ts";

type Json = Record<string, any>;

const EMPTY = new Uint8Array(0);
/** Lifecycle events a tap keeps unparsed at most (ResponsesObserver.unreadLifecycle); OpenAI sends two or three per reply. */
const MAX_UNREAD_LIFECYCLE = 8;
/**
 * The longest `output_item.done` data (characters) a tap keeps whole for {@link ResponsesObserver.closing};
 * OpenAI's message and call items are far below it, an image's base64 far above.
 */
const MAX_KEPT_DONE_ITEM = 64 * 1024;
/** The empty event output (shared: callers never modify an output). */
const NO_EVENTS: StreamEvent[] = [];
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** Index just past the last SSE event terminator (`\n\n`, `\r\n\r\n`, `\r\r`) in `b`, or -1. */
function lastBoundary(b: Uint8Array, from: number): number {
  for (let i = b.length - 1; i >= from + 1; i--) {
    const c = b[i];
    if (c === 0x0a) {
      if (b[i - 1] === 0x0a) return i + 1;
      if (b[i - 1] === 0x0d && i >= 3 && b[i - 2] === 0x0a && b[i - 3] === 0x0d) return i + 1;
    } else if (c === 0x0d && b[i - 1] === 0x0d) {
      return i + 1;
    }
  }
  return -1;
}

/** {@link lastBoundary} as {@link HeldEvent} asks for it: bytes already held were searched, but a terminator may start up to 3 bytes back. */
const lastEventEnd = (bytes: Uint8Array, held: number): number => lastBoundary(bytes, Math.max(0, held - 3));

/**
 * What both Responses taps do on the side (module doc): read every complete event for the response id,
 * the sequence numbers, content, usage, the stop reason and errors; and make the closing events of a
 * reply that ended without a terminal event.
 */
abstract class ResponsesObserver {
  readonly state: TapState = { usage: {}, sawContent: false, stopReason: null, terminal: false, contentEvents: 0, looking: true, serverTools: 0 };
  protected readonly reader: SseReader;
  private lastSeq = -1;
  private events = 0;
  /** The response id and model the lifecycle events read so far gave (the last that names each wins), once {@link foldLifecycle} read them. */
  private responseId: string | undefined;
  private model: string | undefined;
  /**
   * The data of the lifecycle events read (`response.created`, `.queued`, `.in_progress`) and not yet
   * parsed: only {@link closing} needs what they say (the response id and model), and only for a reply
   * that ended without a terminal event. Each carries the whole response object with the request's echo
   * (`instructions`, `tools`: ~2 KB for the bench's request, ~18 KB for Codex's), which a parse per
   * event cost every stream (docs/performance.md item 214). At most {@link MAX_UNREAD_LIFECYCLE} are
   * kept: an upstream that sends more has them read then, so a stream holds no more than that many.
   */
  private unreadLifecycle: string[] | undefined;
  /**
   * The data of the `output_item.done` events read, unparsed: the items completed so far, which only
   * {@link closing} reads (the failed response's `output`). Not kept while {@link repairing} (the
   * snapshot has them); an event over {@link MAX_KEPT_DONE_ITEM} characters (an `image_generation_call`'s
   * base64 `result`, MBs) is kept as its item's `id` and `type` only ({@link doneItemStub}), so a stream
   * does not hold a second copy of what it already forwarded (issue 17).
   */
  private doneItems: string[] | undefined;
  /** The upstream sent an `error` event: {@link closing} sends none of its own. */
  private sawErrorEvent = false;
  /** A `response.created` was made before the first event ({@link startOf}): every event goes out {@link repair}ed. */
  protected repairing = false;
  /** While {@link repairing}: the items the events built, for a terminal event without `output`. */
  private snapshot: ItemSnapshot | undefined;
  /** `end()` is dispatching the unterminated tail: only a complete terminal event counts then. */
  protected flushing = false;
  /** `end()` ran: later calls append nothing. */
  protected ended = false;

  constructor() {
    this.reader = new SseReader(this.onEvent.bind(this));
  }

  /** An event the client gets was read (every complete one with data; at `end()` only a terminal one). */
  protected abstract forwarded(e: SseEvent): void;

  /** The `response.created` made for a stream that began without one ({@link startOf}), to go before its first event. */
  protected abstract lead(e: StreamEvent): void;

  /**
   * The first event of the stream, when it is not `response.created`: the `response.created` the
   * client gets before it (module doc). Parses that one event.
   */
  private startOf(data: string, name: string | undefined): void {
    const parsed = parse(data);
    const type = name ?? (typeof parsed?.type === "string" ? parsed.type : "");
    if (type === "response.created" || type === "error" || type === "keepalive") return;
    const from = parsed?.response && typeof parsed.response === "object" ? (parsed.response as Json) : undefined;
    const response: Json = {};
    if (typeof from?.id === "string") response.id = from.id;
    Object.assign(response, { object: "response", status: "in_progress", model: typeof from?.model === "string" ? from.model : null, output: [], usage: null, error: null, incomplete_details: null });
    const seq = typeof parsed?.sequence_number === "number" ? parsed.sequence_number : 0;
    this.repairing = true;
    this.snapshot = new ItemSnapshot();
    this.lead({ event: "response.created", data: JSON.stringify({ type: "response.created", sequence_number: seq, response }) });
  }

  /**
   * An event of a stream that began without `response.created`, as it goes out (module doc): its
   * `sequence_number` one higher than the upstream's (after the made event, which took the first
   * event's), and a terminal event's `response` without `output` given the items the events built
   * ({@link ItemSnapshot}, as openai 7.x's `ResponseStream` builds them: the completed ones for
   * `response.completed`, the unfinished ones too otherwise). An event whose data is not a JSON
   * object goes out as it came. Returns the event and its parsed (rewritten) data.
   */
  private repair(e: SseEvent, name: string | undefined): { event: SseEvent; parsed: Json | undefined } {
    const parsed = parse(e.data);
    if (!parsed) return { event: e, parsed };
    const type = typeof (name ?? parsed.type) === "string" ? ((name ?? parsed.type) as string) : "";
    this.snapshot?.read(type, parsed);
    if (typeof parsed.sequence_number === "number") parsed.sequence_number += 1;
    const r = parsed.response;
    if ((type === "response.completed" || type === "response.incomplete" || type === "response.failed") && r && typeof r === "object" && !Array.isArray(r.output)) {
      r.output = this.snapshot?.output(type !== "response.completed") ?? [];
    }
    return { event: { event: e.event, data: JSON.stringify(parsed) }, parsed };
  }

  /**
   * {@link PassthroughTap.isErrorEvent}: an `error` or `response.failed` event (named so, or by its
   * data's `type`), the two {@link onEvent} reads an error from; {@link closing} writes the latter.
   */
  isErrorEvent(event: string | undefined, data: string): boolean {
    const name = event ?? parse(data)?.type;
    return name === "error" || name === "response.failed";
  }

  /**
   * The events that close a reply without a terminal event (module doc): `response.failed` with
   * `failure` (else the upstream's `error`, else truncation) and the items completed so far, after an
   * `error` event when `errorEvent` and the upstream sent none, after `response.created` when nothing
   * came at all. Records the error in `state`.
   */
  protected closing(failure: HubError | undefined, errorEvent: boolean): StreamEvent[] {
    const err = failure ?? this.state.error ?? TRUNCATED_ERROR;
    this.state.error = err;
    this.foldLifecycle();
    const model = this.model;
    const id = this.responseId ?? "resp_failed";
    const code = failedCodeForKind(err.kind);
    let seq = Math.max(this.lastSeq, this.events - 1);
    const out: StreamEvent[] = [];
    if (this.events === 0) {
      out.push({
        event: "response.created",
        data: JSON.stringify({
          type: "response.created",
          sequence_number: ++seq,
          response: { id, object: "response", status: "in_progress", model: model ?? null, output: [], usage: null, error: null, incomplete_details: null },
        }),
      });
    }
    if (errorEvent && !this.sawErrorEvent) {
      // encoder.ts `fail`'s error event: the OpenAI SDK raises on it.
      out.push({ event: "error", data: JSON.stringify({ type: "error", sequence_number: ++seq, code, message: err.message, param: err.param ?? null }) });
    }
    out.push({
      event: "response.failed",
      data: JSON.stringify({
        type: "response.failed",
        sequence_number: ++seq,
        response: {
          id,
          object: "response",
          status: "failed",
          model: model ?? null,
          error: { code, message: err.message },
          incomplete_details: null,
          output: this.outputSoFar(),
          usage: null,
        },
      }),
    });
    return out;
  }

  /** The items of the `output_item.done` events read, by their `output_index` (arrival order without one); a repaired stream's from its snapshot. */
  private outputSoFar(): Json[] {
    if (this.repairing && this.snapshot) return this.snapshot.output(false);
    const done: { at: number; item: Json }[] = [];
    for (const data of this.doneItems ?? []) {
      const ev = parse(data);
      if (ev?.item && typeof ev.item === "object") done.push({ at: typeof ev.output_index === "number" ? ev.output_index : done.length, item: ev.item as Json });
    }
    return done.sort((a, b) => a.at - b.at).map((d) => d.item);
  }

  // ---------------------------------------------------------------------------------------------

  private onEvent(e: SseEvent): void {
    let data = e.data;
    if (data.length === 0 || data === "[DONE]") return;
    let name = e.event;
    let parsed: Json | undefined;
    if (this.flushing) {
      // The held tail is forwarded only when it is a complete terminal event; anything else is a
      // half event that the client never sees, so it must not count.
      parsed = parse(data);
      name ??= typeof parsed?.type === "string" ? parsed.type : "";
      if (!parsed || (name !== "response.completed" && name !== "response.incomplete" && name !== "response.failed")) return;
    }
    if (this.events === 0 && name !== "response.created") this.startOf(data, name);
    if (this.repairing) {
      const fixed = this.repair(e, name);
      e = fixed.event;
      data = e.data;
      parsed = fixed.parsed;
    }
    this.events++;
    this.forwarded(e);
    this.trackSeq(data);
    if (name === undefined) {
      parsed = parse(data);
      name = typeof parsed?.type === "string" ? parsed.type : "";
    }
    switch (name) {
      case "response.created":
      case "response.in_progress":
      case "response.queued": {
        // Read by `closing` only (the id and model), when a reply ends without a terminal event.
        const unread = (this.unreadLifecycle ??= []);
        if (unread.push(data) >= MAX_UNREAD_LIFECYCLE) this.foldLifecycle();
        return;
      }
      case "response.completed":
      case "response.incomplete": {
        const r = (parsed ?? parse(data))?.response as Json | undefined;
        if (!r) return; // a cut-off terminal event (only possible at end()) is no terminal
        this.state.terminal = true;
        this.state.sawContent = true;
        this.counted();
        const usage = fromResponsesUsage(r?.usage, r?.output);
        if (usage) mergeUsage(this.state.usage, usage);
        const status = typeof r?.status === "string" ? r.status : name === "response.incomplete" ? "incomplete" : "completed";
        const output = Array.isArray(r?.output) ? (r!.output as Json[]) : [];
        const sawTool = output.some((o) => o?.type === "function_call" || o?.type === "custom_tool_call");
        this.state.stopReason = stopForTerminal(status, r?.incomplete_details?.reason, sawTool);
        return;
      }
      case "response.failed": {
        const r = (parsed ?? parse(data))?.response as Json | undefined;
        if (!r) return;
        this.state.terminal = true;
        if (!this.state.error) this.state.error = hubErrorFromOpenAi(r?.error ?? { code: "server_error" }, 0);
        const usage = fromResponsesUsage(r?.usage, r?.output);
        if (usage) mergeUsage(this.state.usage, usage);
        return;
      }
      case "error": {
        const ev = parsed ?? parse(data);
        const inner = ev?.error && typeof ev.error === "object" ? (ev.error as Json) : ev;
        if (!this.state.error) this.state.error = ev ? hubErrorFromOpenAi(inner, 0) : errorEventNotJson(data);
        this.sawErrorEvent = true;
        return;
      }
      case "response.output_item.added":
      case "response.output_item.done": {
        this.state.sawContent = true;
        this.counted();
        // A hosted tool's item (not one the hub carries) is a server tool in flight until it is done; a
        // `.done` is read for its type only while one is.
        const added = name === "response.output_item.added";
        if (!added && !this.repairing) (this.doneItems ??= []).push(data.length > MAX_KEPT_DONE_ITEM ? doneItemStub(data) : data); // read by `closing` only
        if (!added && this.state.serverTools === 0) return;
        const type = itemType(parsed, data);
        if (type === undefined || HUB_ITEMS.has(type)) return;
        if (added) this.state.serverTools!++;
        else this.state.serverTools!--;
        return;
      }
      default:
        if (!this.state.sawContent && name.endsWith(".delta")) this.state.sawContent = true;
        if (this.state.looking && progresses(name, data)) this.counted();
        return;
    }
  }

  /** Reads the lifecycle events not read yet, in order, into {@link responseId} and {@link model}. */
  private foldLifecycle(): void {
    const unread = this.unreadLifecycle;
    if (unread === undefined) return;
    this.unreadLifecycle = undefined;
    for (const data of unread) {
      const r = parse(data)?.response as Json | undefined;
      if (r && typeof r.id === "string") this.responseId = r.id;
      if (r && typeof r.model === "string") this.model = r.model;
    }
  }

  /** An event with content was read (`state.contentEvents`); no more looking until the reader asks again (`state.looking`). */
  private counted(): void {
    if (!this.state.looking) return;
    this.state.looking = false;
    this.state.contentEvents++;
  }

  /** Reads the top-level `"sequence_number":N` without parsing the event (it is the last such key). */
  private trackSeq(data: string): void {
    const at = data.lastIndexOf('"sequence_number":');
    if (at < 0) return;
    let i = at + 18;
    while (data.charCodeAt(i) === 32) i++;
    let n = 0;
    let digits = 0;
    for (let c = data.charCodeAt(i); c >= 48 && c <= 57; c = data.charCodeAt(++i)) {
      n = n * 10 + (c - 48);
      digits++;
    }
    if (digits > 0 && n > this.lastSeq) this.lastSeq = n;
  }
}

/** The byte tap: forwards the provider's bytes up to the last complete event (module doc, Framing). */
class ResponsesTap extends ResponsesObserver implements PassthroughTap {
  /** The incomplete event's bytes (lastBoundary looks up to 3 bytes back, so 4 held bytes are searched again). */
  private readonly held = new HeldEvent(lastEventEnd, 4);

  constructor(_opts: TapOptions) {
    super();
  }

  /** The made `response.created` (module doc), not yet sent. */
  private leading: Uint8Array | undefined;
  /** The events read and {@link ResponsesObserver.repair}ed, not yet sent (a stream that began without `response.created`), in order. */
  private repaired: string[] = [];

  protected forwarded(e: SseEvent): void {
    // the bytes go out as they came (push), or rewritten when repairing
    if (this.repairing) this.repaired.push(e.event !== undefined ? sseNamed(e.event, e.data) : sseData(e.data));
  }

  /** The repaired events read so far (emptied), joined. */
  private takeRepaired(): Uint8Array {
    const out = this.repaired.join("");
    this.repaired = [];
    return out.length === 0 ? EMPTY : utf8.encode(out);
  }

  /**
   * What goes out of a repaired stream's read: the complete events `held` gave (`bytes`), each event
   * the reader dispatched (with data, not `[DONE]`) as {@link ResponsesObserver.repair} rewrote it, after
   * the event's comment, `id:` and `retry:` lines as they came; a block that dispatches nothing (an SSE
   * comment such as `: keep-alive`, `data: [DONE]`, a lone `id:` / `retry:`) as it came. In order.
   */
  private repairedRead(bytes: Uint8Array): Uint8Array {
    if (bytes.length === 0 && this.repaired.length === 0) return EMPTY;
    const queue = this.repaired;
    this.repaired = [];
    let next = 0;
    let out = "";
    const parts = splitEvents(utf8Decoder.decode(bytes));
    for (let i = 0; i < parts.length; i += 2) {
      const block = parts[i]!;
      if (block.length === 0) continue;
      const end = parts[i + 1] ?? "";
      const lines = splitLines(block);
      let data: string | undefined;
      let extra = "";
      for (let j = 0; j < lines.length; j += 2) {
        // An SSE line: `field: value` (one space after the colon dropped), `field` alone, `:comment`.
        const line = lines[j]!;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        if (field === "data") {
          const v = colon < 0 ? "" : line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1);
          data = data === undefined ? v : `${data}\n${v}`;
        } else if (colon === 0 || field === "id" || field === "retry") extra += `${line}\n`;
      }
      const dispatches = data !== undefined && data.length > 0 && data !== "[DONE]";
      if (dispatches && next < queue.length) out += extra + queue[next++]!;
      else if (!dispatches) out += block + end;
      // (an event the reader dispatched with nothing repaired for it cannot happen: the two read the same bytes)
    }
    for (; next < queue.length; next++) out += queue[next]!;
    return out.length === 0 ? EMPTY : utf8.encode(out);
  }

  protected lead(e: StreamEvent): void {
    this.leading = utf8.encode(sseNamed(e.event!, e.data));
  }

  push(chunk: Uint8Array): Uint8Array {
    if (chunk.length === 0) return EMPTY;
    this.reader.push(chunk);
    const out = this.held.push(chunk);
    return this.led(this.repairing ? this.repairedRead(out) : out);
  }

  /** `out` after the made `response.created` when one waits (the read that completed the first event). */
  private led(out: Uint8Array): Uint8Array {
    const lead = this.leading;
    if (lead === undefined) return out;
    this.leading = undefined;
    const joined = new Uint8Array(lead.length + out.length);
    joined.set(lead, 0);
    joined.set(out, lead.length);
    return joined;
  }

  end(failure?: HubError): Uint8Array {
    if (this.ended) return EMPTY;
    this.ended = true;
    const terminalBefore = this.state.terminal;
    // SseReader.end() dispatches a final event that lacks its blank line.
    this.flushing = true;
    this.reader.end();
    const tail = this.held.takeAll();
    if (this.repairing) {
      // A terminal event without its blank line was read and repaired; nothing else of the tail goes out.
      if (this.state.terminal) return this.led(this.takeRepaired());
      let out = "";
      for (const e of this.closing(failure, true)) out += sseNamed(e.event!, e.data);
      return utf8.encode(out);
    }
    if (tail.length > 0 && !terminalBefore && this.state.terminal) {
      // The terminal event arrived without its blank line: forward it, terminated.
      const out = new Uint8Array(tail.length + 2);
      out.set(tail, 0);
      out[tail.length] = 0x0a;
      out[tail.length + 1] = 0x0a;
      return this.led(out);
    }
    // Any other unterminated tail is half an event: dropped, never glued to what follows.
    if (this.state.terminal) return EMPTY;
    let out = "";
    for (const e of this.closing(failure, true)) out += sseNamed(e.event!, e.data);
    return utf8.encode(out);
  }
}

/** The event tap: forwards the events its reader dispatched (module doc). */
class ResponsesEventTap extends ResponsesObserver implements PassthroughTap<StreamEvent[]> {
  private out: StreamEvent[] = [];
  /** Set by `end()` after a terminal event: a tail after it is dropped, as the byte tap drops it. */
  private closed = false;

  protected forwarded(e: SseEvent): void {
    if (!this.closed) this.out.push({ event: e.event, data: e.data });
  }

  protected lead(e: StreamEvent): void {
    this.out.push(e);
  }

  push(chunk: Uint8Array): StreamEvent[] {
    if (chunk.length === 0) return NO_EVENTS;
    this.reader.push(chunk);
    return this.take();
  }

  end(failure?: HubError): StreamEvent[] {
    if (this.ended) return NO_EVENTS;
    this.ended = true;
    this.closed = this.state.terminal;
    // SseReader.end() dispatches a final event that lacks its blank line; only a terminal one counts.
    this.flushing = true;
    this.reader.end();
    if (this.state.terminal) return this.take();
    this.out = [];
    return this.closing(failure, false);
  }

  private take(): StreamEvent[] {
    if (this.out.length === 0) return NO_EVENTS;
    const out = this.out;
    this.out = [];
    return out;
  }
}

/**
 * Whether an event the observer does not read otherwise shows the reply under way, for the keep-alive
 * bound (`state.contentEvents`): a delta (`*.delta`) whose `delta` is not an empty string, a hosted
 * tool's progress (`response.web_search_call.searching`, `…file_search_call…`, `…mcp_call…`: a name
 * with `_call.` in it, or `_call_` as in `code_interpreter_call_code.delta`), an annotation. Lifecycle
 * events (`response.in_progress`), `keepalive`, content parts' and texts' `.added` / `.done` (which
 * come with the deltas and items around them) are none.
 */
function progresses(name: string, data: string): boolean {
  if (name.endsWith(".delta")) return !emptyDelta(data);
  return name.includes("_call") || name.endsWith("annotation.added");
}

/** Whether the event's `"delta"` member is an empty string (the first such member: the event's own, before its ids' values). */
function emptyDelta(data: string): boolean {
  const at = data.indexOf('"delta"');
  if (at < 0) return false;
  let j = at + 7;
  while (data.charCodeAt(j) === 32) j++;
  if (data.charCodeAt(j) !== 58) return false;
  j++;
  while (data.charCodeAt(j) === 32) j++;
  return data.charCodeAt(j) === 34 && data.charCodeAt(j + 1) === 34;
}

/** `"item": {"type": "…"` (or after the item's `"id"`, as OpenAI writes it), in any spacing: the item's type. */
const ITEM_TYPE = /"item"\s*:\s*\{(?:\s*"id"\s*:\s*"[^"\\]*"\s*,)?\s*"type"\s*:\s*"([^"\\]*)"/;

/** The type of the output item an `output_item.added` / `.done` event carries (`parsed` when the event was parsed); undefined when none. */
function itemType(parsed: Json | undefined, data: string): string | undefined {
  let t: unknown = parsed?.item?.type;
  if (t === undefined) {
    const m = ITEM_TYPE.exec(data);
    // Another member order than OpenAI's: the event parsed (its items' starts and ends, a few per reply).
    t = m ? m[1] : parse(data)?.item?.type;
  }
  return typeof t === "string" ? t : undefined;
}

/** `"item": {` … `"id": "…"` before any nested object: the item's id (OpenAI writes it first). */
const ITEM_ID = /"item"\s*:\s*\{[^{}]*?"id"\s*:\s*"([^"\\]*)"/;

/**
 * What a tap keeps of an `output_item.done` event too large to keep whole (MAX_KEPT_DONE_ITEM): the
 * event with its item's `id` and `type` only (read without parsing the event; absent when not found
 * so) and its top-level `output_index` (the last such key, as `trackSeq` reads the sequence number).
 */
function doneItemStub(data: string): string {
  const item: Json = {};
  const id = ITEM_ID.exec(data.slice(0, 4096))?.[1];
  if (id !== undefined) item.id = id;
  const type = itemType(undefined, data.slice(0, 4096));
  if (type !== undefined) item.type = type;
  const stub: Json = { item };
  const at = data.lastIndexOf('"output_index":');
  const n = at < 0 ? NaN : Number.parseInt(data.slice(at + 15, at + 32).trimStart(), 10);
  if (Number.isFinite(n)) stub.output_index = n;
  return JSON.stringify(stub);
}

function parse(data: string): Json | undefined {
  try {
    const v = JSON.parse(data) as unknown;
    return v && typeof v === "object" ? (v as Json) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates the passthrough tap for a native Responses stream (module doc). `push` returns the bytes to
 * forward (the input, up to its last complete event); `end` returns what to append.
 */
export function createTap(opts: TapOptions): PassthroughTap {
  return new ResponsesTap(opts);
}

/**
 * Creates the event tap for a native Responses stream to an event transport (SPEC 2.5, module doc):
 * `push` returns the complete events of the read (in order, possibly none), `end` the closing events.
 */
export function createEventTap(_opts: TapOptions): PassthroughTap<StreamEvent[]> {
  return new ResponsesEventTap();
}
