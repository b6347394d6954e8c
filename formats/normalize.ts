/**
 * Turns the loosely ordered hub events a provider decoder produces into the canonical sequence every
 * client encoder relies on (the grammar is documented on {@link HubEvent}). This is where the
 * "broken translated stream" bug classes are fixed once for every format pair: interleaved parallel
 * tool calls (REFERENCE §6.1 step 5), blocks opened for nothing, empty deltas, a duplicate
 * `message_start`, a missing `block_stop`, `stop` although tools were called (§5.1), content after the
 * finish, and an upstream that ends without saying why it stopped (SPEC 6.4). For a client given tool
 * calls only whole (Gemini, Responses: {@link NormalizerOptions}), a call whose arguments a token limit
 * cut ends the reply with {@link cutToolCallError} instead of passing as a complete call. With
 * {@link NormalizerOptions.unfinishedAsError}, content then a reason that says generation broke off
 * (Gemini's MALFORMED_FUNCTION_CALL) ends it with {@link unfinishedReplyError} instead of the finish.
 *
 * Decoder-side contract (what a decoder may emit):
 * - `block_start.index` is a decoder-chosen KEY, unique per block within the stream (any integer);
 *   output indices are assigned here, from 0, in the order blocks are opened.
 * - text and thinking blocks are opened lazily, at their first non-empty content (a thinking block's
 *   signature counts as content); tool-call and redacted-thinking blocks open at once.
 * - several blocks may be open at a time; one output block is live, the others are buffered and
 *   replayed in start order when the live one stops (or at the finish).
 * - a delta for a key that was never started opens a text/thinking block implicitly; a stray
 *   `tool_args` delta is dropped.
 * - `usage` may come anywhere; `finish` closes every open block first.
 */
import type { BlockDelta, BlockStart, HubError, HubEvent, HubPart, StopReason } from "./hub.ts";
import type { TextDeltaSink } from "./codec.ts";
import { tryParseJson } from "./sse.ts";

interface PendingBlock {
  key: number;
  start: BlockStart;
  /** Deltas held while the block waits for its turn, or before its first content. */
  deltas: BlockDelta[];
  stopped: boolean;
  /** True once it was emitted as the live output block (or it is queued to be). */
  opened: boolean;
  /** Lazy blocks (text, thinking) open only when content arrives. */
  hasContent: boolean;
  /** A tool call's arguments so far, kept only for a client of whole tool calls ({@link NormalizerOptions}). */
  args?: string;
}

/** Options of an {@link EventNormalizer}. */
export interface NormalizerOptions {
  /**
   * The client's format carries a tool call only whole (codec.ts `FormatCodec.wholeToolCalls`: Gemini's
   * `args` object, the Responses `output_item.done` that Codex runs): each tool call's stop is held until
   * the next event, and a finish that says a token limit ended the reply (`max_tokens`,
   * `context_window_exceeded`) while the held call's arguments are not complete JSON (or empty, the
   * call being the reply's last block: cut right after its name) becomes
   * {@link cutToolCallError} instead, the call never closed (SPEC 6.4: a broken reply never passes as
   * a finished one). Any other next event lets the call close as it came.
   */
  wholeToolCalls?: boolean;
  /**
   * The reply is translated for its client (pipeline/re-translate.ts's decoding drivers, a client of
   * another format): content then a reason that says generation broke off ({@link isNoFinishWord},
   * Gemini's MALFORMED_FUNCTION_CALL) ends it with {@link unfinishedReplyError} instead of the finish
   * (SPEC 6.4). Absent: the finish as it came (a whole reply's decode, whose caller judges it:
   * pipeline/reply-content.ts wholeReplyUnfinished; a native pair, whose client gets its provider's word).
   */
  unfinishedAsError?: boolean;
}

/**
 * REFERENCE §5.1: a reply that emitted a tool call ends as tool use in every format, whatever plain
 * stop the provider said (many OpenAI-compatible servers say `stop`, Gemini always `STOP`). A token
 * limit or refusal keeps its own reason.
 */
export function promoteStopReason(reason: StopReason, sawTool: boolean): StopReason {
  return sawTool && (reason === "end_turn" || reason === "other" || reason === "stop_sequence") ? "tool_use" : reason;
}

/** Error sent when the provider stream ends without a finish (SPEC 6.4). */
export const TRUNCATED_ERROR: HubError = {
  kind: "api_error",
  status: 502,
  message: "The upstream stream ended before the reply was complete.",
  code: "upstream_truncated",
};

/**
 * The error of a reply that ended with nothing in it for a reason that is no finish (hub `other`:
 * Gemini's MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, OTHER, an unknown
 * finish_reason): REFERENCE §5.1's judgement row, before the commit point an upstream failure (the next
 * target; at the last one a 502 the client's SDK retries), not an empty finished turn, which an agent
 * reads as "done". Code `upstream_empty_reply`, the empty reply's row (pipeline/classify.ts). `raw` is
 * the provider's own word for it.
 */
export function unusableFinishError(raw: string | undefined): HubError {
  return {
    kind: "api_error",
    status: 502,
    message: `The upstream ended its reply with nothing in it, giving ${raw ? raw : "no known reason"} as the reason: not a finished reply.`,
    code: "upstream_empty_reply",
  };
}

/** `HubError.code` of {@link unfinishedReplyError}; pipeline/classify.ts reads it as a reply with nothing usable. */
export const UNFINISHED_REPLY_CODE = "upstream_unfinished_reply";

/**
 * Gemini's `finishReason` words that say generation broke off rather than finished (REFERENCE §5.1's
 * judgement row: MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, OTHER), read from
 * the hub's `rawStopReason` / a finish event's `raw`.
 */
const NO_FINISH_WORDS: ReadonlySet<string> = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "OTHER"]);

/** Whether a reply's raw stop reason (`raw`, the provider's own word) is one of REFERENCE §5.1's "no finish" words. */
export function isNoFinishWord(raw: string | undefined): boolean {
  return raw !== undefined && NO_FINISH_WORDS.has(raw);
}

/**
 * The error of a whole reply (read to its end before the commit point: a non-streamed client, or a
 * non-streaming upstream) that has content but ended with one of REFERENCE §5.1's "no finish" words
 * ({@link isNoFinishWord}, e.g. MALFORMED_FUNCTION_CALL after some text): before the commit point the
 * table says an upstream failure (the next target; at the last one a 502), not a finished turn. A
 * streamed reply translated for its client ends with it too ({@link EventNormalizer} emits it instead of
 * the finish, {@link NormalizerOptions.unfinishedAsError}): after the
 * commit point, with text already sent, the client's format's in-band error (SPEC 6.4), not `end_turn` /
 * `stop` (until 2026-12-07 it was). `raw` is the provider's word. Code {@link UNFINISHED_REPLY_CODE}.
 */
export function unfinishedReplyError(raw: string): HubError {
  return {
    kind: "api_error",
    status: 502,
    message: `The upstream broke off its reply, giving ${raw} as the reason: not a finished reply.`,
    code: UNFINISHED_REPLY_CODE,
  };
}

/** `HubError.code` of {@link cutToolCallError}; pipeline/classify.ts reads it as a reply with nothing usable. */
export const CUT_TOOL_CALL_CODE = "upstream_tool_call_cut";

/**
 * The error of a reply whose token limit cut a tool call in the middle of its arguments, for a client
 * that can only be given a call whole ({@link NormalizerOptions.wholeToolCalls}): the call would reach
 * it as complete (Gemini `args: {"arguments": "<the text so far>"}`, a Responses `function_call` with
 * status `completed`) and be run with broken arguments. Before the commit point a failed attempt with
 * nothing usable (no account effect, the next target); after it the format's in-band error. `name`
 * is the tool's; `reason` the hub stop reason that came instead of the call's end; `empty`: the limit
 * came right after the call's name, no arguments yet (it would pass as a call without arguments).
 */
export function cutToolCallError(name: string, reason: StopReason, empty = false): HubError {
  const limit = reason === "context_window_exceeded" ? "the context window" : "its output token limit";
  const where = empty ? "right after the name of a call to" : "in the middle of the arguments of a call to";
  return {
    kind: "api_error",
    status: 502,
    message: `The upstream reached ${limit} ${where} ${name || "a tool"}: the call is incomplete and was not passed on. Allow more output tokens, or ask for less.`,
    code: CUT_TOOL_CALL_CODE,
  };
}

/**
 * Whether a whole reply ends as {@link cutToolCallError} describes (a token-limit finish, its last
 * part a tool call whose arguments are not complete JSON, or none at all): the same judgement for a
 * reply that is not streamed (pipeline/re-translate.ts), for a client of whole tool calls. Returns that
 * error, or undefined.
 */
export function cutToolCallOf(content: readonly HubPart[], reason: StopReason | null): HubError | undefined {
  if (reason !== "max_tokens" && reason !== "context_window_exceeded") return undefined;
  const last = content.at(-1);
  return last?.type === "tool_call" && argumentsCut(last.arguments, true) ? cutToolCallError(last.name, reason, !last.arguments) : undefined;
}

/**
 * Whether a tool call's arguments, at a token-limit finish, are not a whole call: text that is not
 * complete JSON, or no arguments at all when the call is the reply's last block (the limit came right
 * after its name; a call without arguments that finished says so with a tool_use / tool_calls stop
 * reason, and one followed by another block was complete). `last`: nothing came after the call.
 */
function argumentsCut(args: string | undefined, last: boolean): boolean {
  if (args === undefined || args.length === 0) return last;
  return tryParseJson(args) === undefined;
}

/** Whether a delta carries content (non-empty text, reasoning, arguments or signature); the rest are dropped here. */
export function isContentDelta(d: BlockDelta): boolean {
  switch (d.type) {
    case "text":
    case "thinking":
      return d.text.length > 0;
    case "tool_args":
      return d.json.length > 0;
    case "signature":
      return d.signature.value.length > 0;
    case "thinking_part":
      return false;
  }
}

/**
 * Incremental normalizer. Feed decoder events to {@link EventNormalizer.event}; canonical events come
 * out of `emit` synchronously. Call {@link EventNormalizer.end} when the provider stream ended (EOF);
 * it emits {@link TRUNCATED_ERROR} unless a finish or an error was seen.
 */
export class EventNormalizer {
  private started = false;
  private finished = false;
  private failed = false;
  private nextIndex = 0;
  /** The live output block, if any. */
  private live: PendingBlock | null = null;
  private liveIndex = -1;
  /** Blocks by decoder key that are not finished yet. */
  private readonly blocks = new Map<number, PendingBlock>();
  /** Blocks waiting for their turn, in start order. */
  private readonly queue: PendingBlock[] = [];
  private sawTool = false;
  /** {@link NormalizerOptions.wholeToolCalls}. */
  private readonly wholeToolCalls: boolean;
  /** {@link NormalizerOptions.unfinishedAsError}. */
  private readonly unfinishedAsError: boolean;
  /** The live block is a tool call that stopped, its `block_stop` held until the next event (wholeToolCalls). */
  private held = false;

  /**
   * `emitText`, when given, takes the text deltas {@link EventNormalizer.text} hands on as they came
   * (codec.ts {@link TextDeltaSink}) instead of `emit`.
   */
  constructor(
    private readonly emit: (ev: HubEvent) => void,
    private readonly emitText?: TextDeltaSink,
    opts?: NormalizerOptions,
  ) {
    this.wholeToolCalls = opts?.wholeToolCalls === true;
    this.unfinishedAsError = opts?.unfinishedAsError === true;
  }

  /** Whether a tool-call block was emitted (latched). */
  get toolUsed(): boolean {
    return this.sawTool;
  }

  /** Whether the stream reached a finish or an error. */
  get terminated(): boolean {
    return this.finished || this.failed;
  }

  event(ev: HubEvent): void {
    if (this.failed) return;
    // A held tool call closes at the next event, unless a token-limit finish says it was cut (below).
    if (this.held && ev.type !== "usage" && ev.type !== "finish") this.release();
    switch (ev.type) {
      case "message_start":
        if (!this.started) {
          this.started = true;
          this.emit(ev);
        } else if (ev.usage) {
          this.emit({ type: "usage", usage: ev.usage });
        }
        return;
      case "usage":
        this.ensureStarted();
        this.emit(ev);
        return;
      case "error":
        // An error before anything else is passed on alone: the encoder decides how to frame it.
        this.failed = true;
        this.emit(ev);
        return;
      case "finish":
        if (this.finished) return;
        this.ensureStarted();
        if (this.wholeToolCalls && (ev.reason === "max_tokens" || ev.reason === "context_window_exceeded")) {
          // The tool calls still held or open, in order: one whose arguments the token limit cut ends
          // the reply with the error instead of the finish, the call never closed.
          for (let call = this.live; call !== null && call.start.type === "tool_call"; call = this.live) {
            if (argumentsCut(call.args, this.queue.length === 0)) {
              this.failed = true;
              this.held = false;
              this.emit({ type: "error", error: cutToolCallError(call.start.name, ev.reason, !call.args) });
              return;
            }
            if (!this.held) break; // open, complete: closed below
            this.release();
          }
        }
        this.flushAll();
        if (ev.reason === "other" && this.nextIndex === 0) {
          // Nothing came, and the reason is no finish: a failure, not an empty turn (unusableFinishError).
          this.failed = true;
          this.emit({ type: "error", error: unusableFinishError(ev.raw) });
          return;
        }
        if (this.unfinishedAsError && isNoFinishWord(ev.raw)) {
          // Content, then a reason that says generation broke off (Gemini's MALFORMED_FUNCTION_CALL):
          // not a finished reply (SPEC 6.4), the same failure as a whole reply's (unfinishedReplyError).
          this.failed = true;
          this.emit({ type: "error", error: unfinishedReplyError(ev.raw!) });
          return;
        }
        this.finished = true;
        this.emit({
          ...ev,
          reason: this.promote(ev.reason),
        });
        return;
      case "block_start":
        if (this.finished) return;
        this.ensureStarted();
        this.onStart(ev.index, ev.block);
        return;
      case "block_delta":
        if (this.finished) return;
        this.ensureStarted();
        this.onDelta(ev);
        return;
      case "block_stop":
        if (this.finished) return;
        this.onStop(ev.index);
        return;
    }
  }

  /**
   * `event({ type: "block_delta", index: key, delta: { type: "text", text } })` (codec.ts
   * {@link TextDeltaSink}): a non-empty text for the live block, whose key is its output index (a Chat
   * text block's usually is), goes on to `emitText` as it came, as {@link event} would hand on that
   * event; anything else is that event (docs/performance.md item 133).
   */
  text(key: number, text: string, plain: boolean): void {
    const live = this.live;
    if (this.emitText !== undefined && live !== null && live.key === key && key === this.liveIndex && text.length > 0 && !this.finished && !this.failed) {
      this.emitText(key, text, plain);
      return;
    }
    this.event({ type: "block_delta", index: key, delta: { type: "text", text } });
  }

  /** Provider stream ended. */
  end(): void {
    if (this.finished || this.failed) return;
    this.release();
    this.failed = true;
    this.emit({ type: "error", error: TRUNCATED_ERROR });
  }

  // ---------------------------------------------------------------------------------------------

  private promote(reason: StopReason): StopReason {
    return promoteStopReason(reason, this.sawTool);
  }

  private ensureStarted(): void {
    if (!this.started) {
      this.started = true;
      this.emit({ type: "message_start" });
    }
  }

  private onStart(key: number, start: BlockStart): void {
    const existing = this.blocks.get(key);
    if (existing && !existing.stopped) {
      // A second start for an open key: keep the first, merge what the new one adds (e.g. a tool
      // name that arrived after the id).
      if (existing.start.type === "tool_call" && start.type === "tool_call") {
        if (!existing.start.name && start.name) existing.start.name = start.name;
        if (!existing.start.id && start.id) existing.start.id = start.id;
      }
      return;
    }
    const block: PendingBlock = {
      key,
      start,
      deltas: [],
      stopped: false,
      opened: false,
      hasContent: start.type === "tool_call" || start.type === "redacted_thinking",
    };
    this.blocks.set(key, block);
    if (block.hasContent) this.schedule(block);
  }

  private onDelta(ev: Extract<HubEvent, { type: "block_delta" }>): void {
    const key = ev.index;
    const delta = ev.delta;
    let block = this.blocks.get(key);
    if (!block || block.stopped) {
      if (delta.type === "text") {
        block = this.implicit(key, { type: "text" });
      } else if (delta.type === "thinking" || delta.type === "signature" || delta.type === "thinking_part") {
        block = this.implicit(key, { type: "thinking" });
      } else {
        return; // stray tool_args for an unknown call: nothing to attach it to
      }
    }
    const content = isContentDelta(delta);
    if (!content && delta.type !== "thinking_part") return; // empty delta: drop
    if (this.wholeToolCalls && delta.type === "tool_args") block.args = block.args === undefined ? delta.json : block.args + delta.json;
    if (block === this.live) {
      // The decoder's own event when its key is the output index (a Chat text block's usually is).
      this.emit(key === this.liveIndex ? ev : { type: "block_delta", index: this.liveIndex, delta });
      return;
    }
    block.deltas.push(delta);
    if (!block.hasContent && content) {
      block.hasContent = true;
      this.schedule(block);
    }
  }

  private onStop(key: number): void {
    const block = this.blocks.get(key);
    if (!block || block.stopped) return;
    block.stopped = true;
    this.blocks.delete(key);
    if (block === this.live) {
      this.closeLive();
      this.drain();
    } else if (!block.hasContent) {
      // never had content: it is dropped, no block for nothing
    }
    // a queued block that stopped stays queued; drain() emits it whole
  }

  private implicit(key: number, start: BlockStart): PendingBlock {
    const block: PendingBlock = { key, start, deltas: [], stopped: false, opened: false, hasContent: false };
    this.blocks.set(key, block);
    return block;
  }

  /** A block has content: make it live now if possible, else queue it. */
  private schedule(block: PendingBlock): void {
    if (block.opened) return;
    block.opened = true;
    if (this.live && this.live.start.type !== "tool_call" && this.live.start.type !== "redacted_thinking") {
      // Text and thinking never resume once another block has content: close the live one.
      this.blocks.delete(this.live.key);
      this.live.stopped = true;
      this.closeLive();
    }
    if (this.live || this.queue.length > 0) {
      this.queue.push(block);
      if (!this.live) this.drain();
      return;
    }
    this.open(block);
  }

  private open(block: PendingBlock): void {
    this.live = block;
    this.liveIndex = this.nextIndex++;
    if (block.start.type === "tool_call") this.sawTool = true;
    this.emit({ type: "block_start", index: this.liveIndex, block: block.start });
    const held = block.deltas;
    block.deltas = [];
    for (const d of held) this.emit({ type: "block_delta", index: this.liveIndex, delta: d });
    if (block.stopped) {
      this.closeLive();
    }
  }

  private closeLive(): void {
    const live = this.live;
    if (!live) return;
    if (this.wholeToolCalls && live.start.type === "tool_call" && !this.finished) {
      // Held until the next event: it says whether a token limit cut the call (NormalizerOptions).
      // The block stays live meanwhile, so nothing else opens before it closes.
      this.held = true;
      return;
    }
    this.held = false;
    this.emit({ type: "block_stop", index: this.liveIndex });
    this.live = null;
  }

  /** Closes a held tool call ({@link held}) and opens what waited behind it. */
  private release(): void {
    if (!this.held) return;
    this.held = false;
    this.emit({ type: "block_stop", index: this.liveIndex });
    this.live = null;
    this.drain();
  }

  /** Opens queued blocks while nothing is live; blocks that already stopped are emitted whole. */
  private drain(): void {
    while (!this.live && this.queue.length > 0) {
      const next = this.queue.shift()!;
      this.open(next);
    }
  }

  /** At the finish: close the live block and emit every queued and open block whole, in order. */
  private flushAll(): void {
    // Nothing is held from here on: each block closes at once (the finish is the next event).
    this.finished = true;
    for (;;) {
      if (this.live) {
        this.blocks.delete(this.live.key);
        this.live.stopped = true;
        this.closeLive();
      }
      const next = this.queue.shift();
      if (!next) break;
      next.stopped = true;
      this.open(next);
    }
    this.blocks.clear();
  }
}

/** Runs a whole event list through a normalizer (tests, non-streaming paths). */
export function normalizeEvents(events: Iterable<HubEvent>, opts: { end?: boolean } & NormalizerOptions = {}): HubEvent[] {
  const out: HubEvent[] = [];
  const n = new EventNormalizer((e) => out.push(e), undefined, opts);
  for (const e of events) n.event(e);
  if (opts.end ?? true) n.end();
  return out;
}
