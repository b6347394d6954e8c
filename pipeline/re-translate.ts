/**
 * re-translate (SPEC R-9, F-3, F-4, F-9, 6.4): the provider's reply → the client's reply, chunk by
 * chunk. A {@link ReplyDriver} is the per-attempt state machine; {@link replyStream} wraps it, after the
 * commit point, as the client body: one pull-based ReadableStream reading the upstream.
 *
 * Drivers:
 * - passthrough: a native pair streaming both ways; the format's tap forwards the provider's bytes and
 *   observes usage, the finish and errors. Translated stream: provider SSE → decoder → normalizer →
 *   client encoder. Accumulated: provider SSE → decoder → normalizer → accumulator → one JSON body (a
 *   non-streaming client served by a streaming provider, F-9). Whole body: a JSON reply (non-streaming
 *   upstream) converted once at the end; replayed as a stream when the client wanted one.
 *
 * When the request was redacted (SPEC S-3), the hub-based drivers map placeholders back to the original
 * values (pipeline/restore-placeholders.ts) on the normalized events, before the encoder or the
 * accumulator; the attempt loop then uses no passthrough driver, whose bytes would carry the
 * placeholders. A native whole body is forwarded as it is unless it holds a placeholder.
 */
import { encodeResponseJson, type DecoderOptions, type EncoderOptions, type FormatCodec, type PassthroughTap, type StreamDecoder, type StreamEncoder } from "../formats/codec.ts";
import { Accumulator, responseToEvents } from "../formats/accumulate.ts";
import { concatBytes, SseReader } from "../formats/sse.ts";
import { FormatError, hubError, mergeUsage, type HubError, type HubEvent, type HubResponse, type ProviderFamily, type StopReason, type Usage, type Warning } from "../formats/hub.ts";
import { cutToolCallOf, EventNormalizer, isContentDelta, type NormalizerOptions } from "../formats/normalize.ts";
import { EventRestorer, restoreResponse, type Restoration } from "./restore-placeholders.ts";
import { gatheredChars, gatheredReplyTooLarge, MAX_WHOLE_REPLY_BYTES, notJsonError, replyTooLarge, tooDeepToParse } from "./whole-reply-bound.ts";
import type { ReplyEvent, ReplyEventSink } from "./ports.ts";
import type { OutputSample } from "./output-estimate.ts";
import { PassthroughDriver } from "./passthrough-driver.ts";
import type { UsageChunkAdder } from "./add-usage-chunk.ts";
import { hasUsableContent, opensBlock, replyChars, wholeReplyUnfinished } from "./reply-content.ts";
import { NO_SECRETS, type SecretSource } from "./scrub.ts";
import { scrubHubErrorEvent } from "./scrub-events.ts";
import { estimateReplyUsage, type UsageEstimates } from "./estimate-reply-usage.ts";
import { cutReplyAtStop, StopSequenceCutter } from "./cut-at-stop-sequence.ts";

const utf8 = new TextEncoder();
/** Decodes a whole JSON reply (non-streaming decodes keep no state between calls, so one serves every reply). */
const utf8Decoder = new TextDecoder();
const EMPTY = new Uint8Array(0);
/** The empty event output (shared: callers never modify an output). */
const NO_EVENTS: ReplyEvent[] = [];

/** The per-attempt reply driver's interface lives in reply-driver.ts; re-exported for the modules that import it from here. */
export type { ReplyDriver } from "./reply-driver.ts";
import type { ReplyDriver } from "./reply-driver.ts";

/**
 * Passthrough of a native streaming pair: bytes, or the events of an event tap (SPEC 2.5). `sample`
 * keeps what was forwarded, for `outputChars` (pipeline/output-estimate.ts); without it that is 0.
 * `secrets`: what an in-band error is scrubbed of (SPEC 2.4); without them, credential shapes only.
 * `usageChunk`: a native Chat stream's usage chunk when the upstream sends none (add-usage-chunk.ts).
 * `endsAtTerminal`: a native Chat stream, whose upstream is read no more after its first `[DONE]`
 * (PassthroughDriver.cut).
 */
export function passthroughDriver<Out = Uint8Array>(tap: PassthroughTap<Out>, sample?: OutputSample<Out>, secrets: SecretSource = NO_SECRETS, usageChunk?: UsageChunkAdder, endsAtTerminal = false): ReplyDriver<Out> {
  return new PassthroughDriver(tap, sample, secrets, usageChunk, endsAtTerminal);
}

/**
 * A hub driver's usage until it reads one: shared and frozen (never written: {@link HubDriver.addUsage}
 * makes the driver's own first), so a reply without usage, or one whose usage the driver adopts whole,
 * makes no empty record (docs/performance.md item 293).
 */
const NO_USAGE: Usage = Object.freeze({});

/** Shared state of the hub-based drivers. */
abstract class HubDriver<Out = Uint8Array> implements ReplyDriver<Out> {
  contentSeen = false;
  earlyError: HubError | undefined;
  lateError: HubError | undefined;
  /** The reply's usage so far ({@link NO_USAGE} until it has some); read only by others. */
  usage: Usage = NO_USAGE;
  usageSeen = false;
  /** Counted as the events pass ({@link gatheredChars}); for a whole reply without usage, from its content. */
  outputChars = 0;
  stopReason: StopReason | null = null;
  empty = false;
  /**
   * Where the usage of a reply the provider reported none for is estimated from (estimate-reply-usage.ts),
   * set by pipeline/commit.ts for the translating drivers; without it the client gets what came.
   */
  estimates: UsageEstimates | undefined;
  abstract readonly buffered: boolean;
  abstract push(chunk: Uint8Array): Out;
  abstract end(failure?: HubError): Out;

  protected observe(ev: HubEvent): void {
    switch (ev.type) {
      case "block_start":
      case "finish":
        if (ev.type === "finish") this.stopReason = ev.reason;
        else this.outputChars += gatheredChars(ev);
        this.contentSeen = true;
        return;
      case "block_delta":
        this.outputChars += gatheredChars(ev);
        return;
      case "message_start":
        if (ev.usage) this.addUsage(ev.usage);
        return;
      case "usage":
        this.addUsage(ev.usage);
        return;
      case "error":
        // After the finish the client encoders only close the reply (SPEC 6.4): it finished.
        if (this.stopReason !== null) return;
        if (this.contentSeen) this.lateError = ev.error;
        else this.earlyError = ev.error;
        return;
    }
  }

  /**
   * {@link observe} of every event `responseToEvents(resp)` replays for a whole reply, without making
   * them, but its usage (taken before, WholeBodyDriver.endWhole): content when a part opens a block or
   * the reply has a stop reason, and that stop reason.
   */
  protected observeReply(resp: HubResponse): void {
    if (!this.usageSeen) this.outputChars = replyChars(resp.content);
    if (resp.stopReason) {
      this.stopReason = resp.stopReason;
      this.contentSeen = true;
    } else if (resp.content.some(opensBlock)) this.contentSeen = true;
  }

  /**
   * {@link observe} of a text delta ({@link DecodingDriver} hands it on without its event objects,
   * docs/performance.md item 133): its characters reach the client.
   */
  protected observeText(text: string): void {
    this.outputChars += text.length;
  }

  protected addUsage(u: Usage): void {
    mergeUsage(this.usage === NO_USAGE ? (this.usage = {}) : this.usage, u);
    if (u.inputTokens !== undefined || u.outputTokens !== undefined) this.usageSeen = true;
  }

  /**
   * {@link addUsage} of a usage record the caller hands over (a codec's fresh `PlainReplyFacts.usage`,
   * nobody else's): the driver's first is kept as it is instead of copied into a record of its own.
   */
  protected takeUsage(u: Usage): void {
    if (this.usage !== NO_USAGE) return this.addUsage(u);
    this.usage = u;
    if (u.inputTokens !== undefined || u.outputTokens !== undefined) this.usageSeen = true;
  }
}

/**
 * The decode chain of the streaming-upstream drivers: provider decoder → normalizer → placeholder
 * restorer (only with a `restoration`, SPEC S-3) → {@link HubDriver.observe} and `deliver`.
 */
abstract class DecodingDriver<Out = Uint8Array> extends HubDriver<Out> {
  /** The decoder started a block; the normalizer opens it only with content. */
  private blockBegun = false;
  /** Events with content the decoder produced (a block's start, a delta with content). */
  private produced = 0;
  /** {@link ReplyDriver.contentEvents}: {@link produced}, and the decoder's {@link StreamDecoder.progress}. */
  get contentEvents(): number {
    return this.produced + (this.decoder.progress ?? 0);
  }
  private normalizer: EventNormalizer;
  private readonly decoder: StreamDecoder;
  private readonly restorer: EventRestorer | undefined;
  /** The normalizer's options and outputs without a restorer (made per reply anyway), for {@link emulateStops}'s normalizer. */
  private readonly normalizerOpts: NormalizerOptions;
  private readonly toClient: (ev: HubEvent) => void;
  private readonly toClientText: (index: number, text: string, plain: boolean) => void;
  /** Set by {@link emulateStops}. */
  private stopCutter: StopSequenceCutter | undefined;

  /**
   * `client`: its `wholeToolCalls` trait is the normalizer's (formats/normalize.ts NormalizerOptions).
   * `secrets`: what an error event's words are scrubbed of before they are delivered (SPEC 2.4).
   */
  constructor(provider: FormatCodec, client: FormatCodec, decoderOptions: DecoderOptions, restoration: Restoration | undefined, secrets: SecretSource) {
    super();
    // `var`, not `const`, for what the callbacks below hold: they then share one scope with the
    // parameters (captured top-level `const`s get a second scope object per reply: docs/performance.md item 260).
    // A reply broken off after content (Gemini's MALFORMED_FUNCTION_CALL) ends in the client's in-band
    // error when translated (SPEC 6.4); a native pair (a redacted one comes here) keeps the provider's word.
    var opts = { wholeToolCalls: client.wholeToolCalls, unfinishedAsError: provider.format !== client.format };
    var sink = (ev: HubEvent) => {
      this.observe(ev);
      // An in-band error may echo a secret: scrubbed before the client's encoder writes it (only error events pay).
      this.deliver(ev.type === "error" ? scrubHubErrorEvent(ev, secrets) : ev);
    };
    var restorer = restoration ? new EventRestorer(restoration, sink) : undefined;
    this.restorer = restorer;
    var text = (index: number, text: string, plain: boolean) => {
      this.observeText(text);
      this.deliverText(index, text, plain);
    };
    this.normalizerOpts = opts;
    this.toClient = sink;
    this.toClientText = text;
    // Text deltas go on without their event objects (item 133), except through the restorer, which reads events.
    this.normalizer = restorer ? new EventNormalizer((ev) => restorer!.event(ev), undefined, opts) : new EventNormalizer(sink, text, opts);
    this.decoder = provider.createDecoder(
      decoderOptions,
      (ev) => {
        if (ev.type === "block_start") {
          this.blockBegun = true;
          this.produced++;
        } else if (ev.type === "block_delta" && isContentDelta(ev.delta)) this.produced++;
        this.normalizer.event(ev);
      },
      (index, text, plain) => {
        this.produced++; // a decoder hands on only non-empty text this way (codec.ts TextDeltaSink)
        this.normalizer.text(index, text, plain);
      },
    );
  }

  /**
   * {@link ReplyDriver.begun}: the decoder started a block, or began a part of the reply it opens as a
   * block only with content ({@link StreamDecoder.begun}: a Responses reasoning item's start).
   */
  get begun(): boolean {
    return this.blockBegun || this.decoder.begun === true;
  }

  /** {@link ReplyDriver.serverToolRunning}: the decoder's count of server tools in flight ({@link StreamDecoder.serverTools}). */
  get serverToolRunning(): boolean {
    return (this.decoder.serverTools ?? 0) > 0;
  }

  /** {@link ReplyDriver.dropped}: what the decoder left out of the upstream's stream so far ({@link StreamDecoder.dropped}). */
  get dropped(): readonly string[] | undefined {
    return this.decoder.dropped;
  }

  /**
   * Emulates the request's stop sequences (`stops`, for an upstream format without a stop field: pipeline/cut-at-stop-sequence.ts):
   * the normalized events pass through a {@link StopSequenceCutter} before the client's side; what it drops past the cut (generated,
   * billed) counts in `outputChars`, for a reply whose usage never comes. Called before the first `push`; other replies never pay for it.
   */
  emulateStops(stops: readonly string[]): void {
    const restorer = this.restorer, dropped = (chars: number) => void (this.outputChars += chars);
    const cutter = restorer
      ? new StopSequenceCutter(stops, (ev) => restorer.event(ev), (index, text) => restorer.event({ type: "block_delta", index, delta: { type: "text", text } }), dropped)
      : new StopSequenceCutter(stops, this.toClient, this.toClientText, dropped);
    this.stopCutter = cutter;
    this.normalizer = new EventNormalizer((ev) => cutter.event(ev), (index, text, plain) => cutter.onText(index, text, plain), this.normalizerOpts);
  }

  /** {@link ReplyDriver.cut}: the reply ended at an emulated stop sequence or its end marker (StreamDecoder.sawEndMarker: Chat's `[DONE]`); undefined when neither can be. */
  get cut(): boolean | undefined {
    const ended = this.decoder.sawEndMarker;
    return ended === true ? true : (this.stopCutter?.cut ?? ended);
  }
  /** {@link ReplyDriver.cutAtEnd}: the decoder read the upstream's end marker. */
  get cutAtEnd(): boolean {
    return this.decoder.sawEndMarker === true;
  }

  /** One canonical (normalized, restored) event for the client side. */
  protected abstract deliver(ev: HubEvent): void;

  /**
   * A canonical text delta without its event objects (codec.ts TextDeltaSink; already observed): the
   * same as {@link deliver} of its event, which it makes unless a driver's client encoder takes it as it is.
   */
  protected deliverText(index: number, text: string, _plain: boolean): void {
    this.deliver({ type: "block_delta", index, delta: { type: "text", text } });
  }

  protected decode(chunk: Uint8Array): void {
    this.decoder.push(chunk);
  }

  /** The end of the upstream stream (or its `failure`): flushes decoder, normalizer and restorer. */
  protected endDecode(failure: HubError | undefined): void {
    if (failure) this.normalizer.event({ type: "error", error: failure });
    else this.decoder.end();
    this.normalizer.end();
    this.restorer?.end();
    // A finished reply without the provider's usage: the client's encoder gets the gateway's estimate
    // (after the finish, where usage goes in the canonical stream), not observed: the row stays estimated.
    if (this.estimates !== undefined && !this.usageSeen && this.stopReason !== null && !failure) this.deliver({ type: "usage", usage: estimateReplyUsage(this.estimates, this.outputChars) });
  }
}

/** Provider SSE → client SSE through the hub. */
export class TranslatedStreamDriver extends DecodingDriver {
  readonly buffered = false;
  private out = "";
  private readonly encoder: StreamEncoder;

  /**
   * `restoration`: the request's redaction placeholders, mapped back in text and tool arguments (SPEC S-3).
   * `secrets`: what an in-band error's words are scrubbed of (SPEC 2.4); without them, credential shapes only.
   */
  constructor(provider: FormatCodec, client: FormatCodec, decoderOptions: DecoderOptions, encoderOptions: EncoderOptions, restoration?: Restoration, secrets: SecretSource = NO_SECRETS) {
    super(provider, client, decoderOptions, restoration, secrets);
    if (!client.createEncoder) throw new Error(`${client.format} has no client encoder`);
    this.encoder = client.createEncoder(encoderOptions, (t) => (this.out += t));
  }

  protected deliver(ev: HubEvent): void {
    this.encoder.event(ev);
  }

  protected override deliverText(index: number, text: string, plain: boolean): void {
    if (this.encoder.text !== undefined) this.encoder.text(index, text, plain);
    else this.encoder.event({ type: "block_delta", index, delta: { type: "text", text } });
  }

  private take(): Uint8Array {
    if (this.out.length === 0) return EMPTY;
    const bytes = utf8.encode(this.out);
    this.out = "";
    return bytes;
  }

  push(chunk: Uint8Array): Uint8Array {
    if (chunk.byteLength > 0) this.decode(chunk);
    return this.take();
  }

  hold(chunk: Uint8Array): void {
    this.decode(chunk);
  }

  end(failure?: HubError): Uint8Array {
    this.endDecode(failure);
    this.encoder.end();
    return this.take();
  }

  /** {@link ReplyDriver.endWhole}: the output since the last `push`, as the encoder wrote it (text). */
  endWhole(failure?: HubError): string {
    this.endDecode(failure);
    this.encoder.end();
    const out = this.out;
    this.out = "";
    return out;
  }
}

/** The events produced since the last `take` (one batch per driver push or end). */
class EventBatch {
  private out: ReplyEvent[] = [];

  add(ev: ReplyEvent): void {
    this.out.push(ev);
  }

  /** The batch, and a new one begins (the shared empty output when nothing came). */
  take(): ReplyEvent[] {
    if (this.out.length === 0) return NO_EVENTS;
    const events = this.out;
    this.out = [];
    return events;
  }
}

/**
 * Provider SSE → the client's events, unframed, for an event transport (SPEC 2.5): the same decode chain
 * and client encoder as {@link TranslatedStreamDriver}, through the client codec's `createEventEncoder`,
 * so the events are never written as SSE bytes to be parsed again.
 */
export class TranslatedEventDriver extends DecodingDriver<ReplyEvent[]> {
  readonly buffered = false;
  private readonly out = new EventBatch();
  private readonly encoder: StreamEncoder;

  /** `restoration`, `secrets` as for {@link TranslatedStreamDriver}. Throws when the client format has no event encoder. */
  constructor(provider: FormatCodec, client: FormatCodec, decoderOptions: DecoderOptions, encoderOptions: EncoderOptions, restoration?: Restoration, secrets: SecretSource = NO_SECRETS) {
    super(provider, client, decoderOptions, restoration, secrets);
    if (!client.createEventEncoder) throw new Error(`${client.format} has no event encoder`);
    this.encoder = client.createEventEncoder(encoderOptions, (event, data) => this.out.add({ event, data }));
  }

  protected deliver(ev: HubEvent): void {
    this.encoder.event(ev);
  }

  protected override deliverText(index: number, text: string, plain: boolean): void {
    if (this.encoder.text !== undefined) this.encoder.text(index, text, plain);
    else this.encoder.event({ type: "block_delta", index, delta: { type: "text", text } });
  }

  push(chunk: Uint8Array): ReplyEvent[] {
    this.decode(chunk);
    return this.out.take();
  }

  end(failure?: HubError): ReplyEvent[] {
    this.endDecode(failure);
    this.encoder.end();
    return this.out.take();
  }
}

/**
 * The events of a driver whose output is SSE bytes (a whole JSON reply replayed as a stream; the
 * passthrough of a format without an event tap), for an event transport: its bytes are read as SSE
 * events as they come. Every observation (usage, stop reason, errors, content) is the wrapped driver's.
 */
export class SseEventsDriver implements ReplyDriver<ReplyEvent[]> {
  private readonly out = new EventBatch();
  private readonly reader = new SseReader((ev) => this.out.add({ event: ev.event, data: ev.data }));

  constructor(private readonly driver: ReplyDriver) {}

  push(chunk: Uint8Array): ReplyEvent[] {
    const bytes = this.driver.push(chunk);
    if (bytes.byteLength > 0) this.reader.push(bytes);
    return this.out.take();
  }

  end(failure?: HubError): ReplyEvent[] {
    const bytes = failure ? this.driver.end(failure) : this.driver.end();
    if (bytes.byteLength > 0) this.reader.push(bytes);
    this.reader.end();
    return this.out.take();
  }

  get contentSeen() {
    return this.driver.contentSeen;
  }
  get begun() {
    return this.driver.begun;
  }
  get earlyError() {
    return this.driver.earlyError;
  }
  get usage() {
    return this.driver.usage;
  }
  get usageSeen() {
    return this.driver.usageSeen;
  }
  get outputChars() {
    return this.driver.outputChars;
  }
  get stopReason() {
    return this.driver.stopReason;
  }
  get lateError() {
    return this.driver.lateError;
  }
  get buffered() {
    return this.driver.buffered;
  }
  get empty() {
    return this.driver.empty;
  }
  get gathers() {
    return this.driver.gathers;
  }
  get dropped() {
    return this.driver.dropped;
  }
  get replyWarnings() {
    return this.driver.replyWarnings;
  }
  get serverToolRunning() {
    return this.driver.serverToolRunning;
  }
  get cut() {
    return this.driver.cut;
  }
  get cutAtEnd() {
    return this.driver.cutAtEnd;
  }
}

/**
 * Provider SSE → one client JSON body (F-9). The reply it gathers is bounded like a JSON reply
 * (pipeline/whole-reply-bound.ts {@link gatheredChars}): `push` (or `end`) throws
 * {@link gatheredReplyTooLarge} past it, which the commit point makes a failed attempt.
 */
export class AccumulatedDriver extends DecodingDriver {
  readonly buffered = true;
  readonly gathers = true;
  private readonly acc = new Accumulator();
  /** {@link ReplyDriver.replyWarnings} (set by `end`). */
  replyWarnings: readonly Warning[] | undefined;

  /** `restoration`, `secrets` as for {@link TranslatedStreamDriver}; `maxChars` is {@link MAX_WHOLE_REPLY_BYTES} unless a test passes less. */
  constructor(
    provider: FormatCodec,
    private readonly client: FormatCodec,
    decoderOptions: DecoderOptions,
    private readonly encoderOptions: EncoderOptions,
    restoration?: Restoration,
    private readonly maxChars: number = MAX_WHOLE_REPLY_BYTES,
    secrets: SecretSource = NO_SECRETS,
  ) {
    super(provider, client, decoderOptions, restoration, secrets);
  }

  protected deliver(ev: HubEvent): void {
    // `observe` counted the event's content first (outputChars)
    if (this.outputChars > this.maxChars) throw gatheredReplyTooLarge(this.maxChars);
    this.acc.event(ev);
  }

  push(chunk: Uint8Array): Uint8Array {
    this.decode(chunk);
    return EMPTY;
  }

  end(failure?: HubError): Uint8Array {
    const out = this.endWhole(failure);
    return typeof out === "string" ? utf8.encode(out) : out;
  }

  /** {@link ReplyDriver.endWhole}: the client's JSON body as text (nothing: an empty array). */
  endWhole(failure?: HubError): Uint8Array | string {
    this.endDecode(failure);
    const r = this.acc.result;
    // Nothing was sent yet: an error, early or late, is a failed attempt; but one after the provider's
    // stop reason (a break that lost only the closing events) leaves the reply finished (SPEC 6.4).
    if (r.error && this.stopReason === null) {
      this.earlyError = r.error;
      this.lateError = undefined;
      return EMPTY;
    }
    // Text, then a reason that is no finish (Gemini's MALFORMED_FUNCTION_CALL): nothing was sent yet, so
    // REFERENCE §5.1's pre-commit rule holds, a failed attempt (reply-content.ts wholeReplyUnfinished).
    const unfinished = wholeReplyUnfinished(r.response.content, r.response.stopReason, r.response.rawStopReason);
    if (unfinished) {
      this.earlyError = unfinished;
      this.lateError = undefined;
      return EMPTY;
    }
    this.empty = !hasUsableContent(r.response.content, r.response.stopReason);
    this.replyWarnings = this.client.responseWarnings?.(r.response);
    return encodeResponseJson(this.client, r.response, this.encoderOptions);
  }
}

/**
 * A whole JSON reply from a non-streaming upstream. Native pairs forward the bytes (usage read from the
 * decoded copy); others convert; a streaming client gets it replayed as a stream. A tool input it would
 * re-serialise nesting past MAX_JSON_DEPTH levels (formats/json-depth.ts), or a reply over 1 MiB nesting
 * that deep anywhere ({@link tooDeepToParse}, unparsed), is an early error. `push` throws
 * {@link replyTooLarge} when the reply grows past `maxBytes` (and holds nothing after).
 */
export class WholeBodyDriver extends HubDriver {
  /** The request's stop sequences, emulated for an upstream format without a stop field (set by pipeline/commit.ts). */
  stops: readonly string[] | undefined;
  readonly buffered = true;
  /** What the upstream's reply held that the client's reply, written from the hub, leaves out (set by `end`). */
  dropped: readonly string[] | undefined;
  /** {@link ReplyDriver.replyWarnings} (set by `end`). */
  replyWarnings: readonly Warning[] | undefined;
  /**
   * The reply's first chunk; {@link rest} holds every chunk (this one first) once a second came. A JSON
   * reply mostly arrives in one read: no array per reply for it (docs/performance.md item 290).
   */
  private first: Uint8Array | undefined;
  private rest: Uint8Array[] | undefined;
  /** Bytes held in {@link first} and {@link rest}. */
  private held = 0;

  /** `maxBytes` is {@link MAX_WHOLE_REPLY_BYTES} unless a test passes less. */
  constructor(
    private readonly provider: FormatCodec,
    private readonly client: FormatCodec,
    private readonly decoderOptions: DecoderOptions,
    private readonly encoderOptions: EncoderOptions,
    private readonly opts: Readonly<{ native: boolean; clientStream: boolean; restoration?: Restoration }>,
    private readonly maxBytes: number = MAX_WHOLE_REPLY_BYTES,
  ) {
    super();
  }

  push(chunk: Uint8Array): Uint8Array {
    if ((this.held += chunk.length) > this.maxBytes) {
      this.first = this.rest = undefined;
      throw replyTooLarge(this.maxBytes);
    }
    if (this.first === undefined) this.first = chunk;
    else if (this.rest === undefined) this.rest = [this.first, chunk];
    else this.rest.push(chunk);
    return EMPTY;
  }

  end(failure?: HubError): Uint8Array {
    const out = this.endWhole(failure);
    return typeof out === "string" ? utf8.encode(out) : out;
  }

  /**
   * {@link ReplyDriver.endWhole}: the upstream's bytes when they go out as they came, else the reply
   * the gateway wrote, as text (nothing: an empty array).
   */
  endWhole(failure?: HubError): Uint8Array | string {
    if (failure) {
      this.earlyError = failure;
      return EMPTY;
    }
    const bytes = this.rest !== undefined ? concatBytes(this.rest) : (this.first ?? EMPTY);
    if ((this.earlyError = tooDeepToParse(bytes))) return EMPTY;
    let body: unknown;
    try {
      body = JSON.parse(utf8Decoder.decode(bytes));
    } catch {
      this.earlyError = notJsonError(bytes);
      return EMPTY;
    }
    // A native reply of the plainest shape (the usual answer) is observed from its facts: the bytes go
    // out as they came, and nothing needs the hub reply decodeResponse would build (item 92).
    const facts = this.opts.native && !this.opts.clientStream && !this.opts.restoration ? this.provider.plainReplyFacts?.(body) : undefined;
    if (facts) {
      if (facts.usage) this.takeUsage(facts.usage);
      if (!this.usageSeen) this.outputChars = facts.outputChars;
      this.stopReason = facts.stopReason;
      this.contentSeen = true;
      this.empty = false;
      this.earlyError = undefined;
      return bytes;
    }
    let resp: HubResponse;
    try {
      resp = this.provider.decodeResponse(body, this.decoderOptions);
    } catch (e) {
      // A FormatError is the decoder refusing the upstream's reply (a 502, a failed attempt); anything
      // else (a TypeError) is the gateway's own bug, which the commit point reports as its own failure
      // (pipeline/commit.ts gatewayFailed, classification row gateway_error), not the upstream's.
      if (!(e instanceof FormatError)) throw e;
      this.earlyError = e.error;
      return EMPTY;
    }
    // The request's stop sequences, emulated for an upstream without a stop field (cut-at-stop-sequence.ts).
    if (this.stops !== undefined) cutReplyAtStop(resp, this.stops);
    if (resp.usage) this.addUsage(resp.usage); // first: an attempt failed below is billed it all the same (RequestContext.billed)
    // A reason that is no finish (Gemini's MALFORMED_FUNCTION_CALL), with nothing in it or after some
    // text: a failed attempt, the whole reply being read before the commit point (reply-content.ts
    // wholeReplyUnfinished); a native client gets its provider's word as it came.
    if (!this.opts.native && (this.earlyError = wholeReplyUnfinished(resp.content, resp.stopReason, resp.rawStopReason))) return EMPTY;
    // A tool call a token limit cut, for a client given calls only whole: a failed attempt (normalize.ts).
    if (!this.opts.native && this.client.wholeToolCalls && (this.earlyError = cutToolCallOf(resp.content, resp.stopReason))) return EMPTY;
    // SPEC S-3: a reply holding a placeholder is re-encoded with the values, even for a native pair.
    const restored = this.opts.restoration ? restoreResponse(this.opts.restoration, resp) : false;
    // A native pair's streaming client gets the reply as its own format's stream, every field kept,
    // when the format writes one (Chat, Gemini); else it is replayed through the hub.
    const nativeStream = this.opts.native && this.opts.clientStream && !restored && this.provider.replayAsStream !== undefined;
    // Replayed as events only for a streaming client, whose encoder needs them.
    const events = this.opts.clientStream && !nativeStream ? responseToEvents(resp) : undefined;
    if (events) for (const ev of events) this.observe(ev);
    else this.observeReply(resp);
    // No usage from the provider: the client gets the gateway's estimate (estimate-reply-usage.ts), not observed.
    const estimated = this.estimates !== undefined && !this.usageSeen && !(this.opts.native && !restored) ? estimateReplyUsage(this.estimates, this.outputChars) : undefined;
    if (estimated) resp.usage = estimated;
    this.empty = !hasUsableContent(resp.content, resp.stopReason);
    this.earlyError = undefined;
    if (nativeStream) return this.provider.replayAsStream!(body, this.encoderOptions);
    // What the reply written from the hub leaves out is said in a warning (the commit point's).
    if (resp.dropped && (events || !this.opts.native || restored)) this.dropped = resp.dropped;
    if (events) {
      let out = "";
      if (!this.client.createEncoder) throw new Error(`${this.client.format} has no client encoder`);
      const encoder = this.client.createEncoder(this.encoderOptions, (t) => (out += t));
      const normalizer = new EventNormalizer((ev) => encoder.event(ev));
      for (const ev of events) normalizer.event(ev);
      if (estimated) normalizer.event({ type: "usage", usage: estimated });
      normalizer.end();
      encoder.end();
      return out;
    }
    if (this.opts.native && !restored) return bytes;
    this.replyWarnings = this.client.responseWarnings?.(resp);
    return encodeResponseJson(this.client, resp, this.encoderOptions);
  }
}

/** After the commit point: the committed reads moved to their own module; re-exported for the modules that import them from here. */
export { committedReads, idleTimeoutError, transportReason, upstreamBrokenError, type ByteReader, type ReadResult } from "./committed-reads.ts";

/**
 * The body of a reply sent whole from its parts (a driver's outputs, the last perhaps its text from
 * {@link ReplyDriver.endWhole}): one text is the body as it is (Bun writes a string body without a JS
 * byte array, docs/performance.md item 186); else the parts' bytes, text encoded as UTF-8, joined.
 * Only the last part is asked whether it is text (only `delivery.end` gives text, and last): a
 * `typeof` of each part, strings and byte arrays alternating with the lanes, kept its optimised code
 * and that of `committedReply`, which inlines it, exiting and recompiling (docs/performance.md item 204).
 */
export function wholeBody(parts: ReadonlyArray<Uint8Array | string>): Uint8Array | string {
  const n = parts.length;
  const last = n > 0 ? parts[n - 1] : undefined;
  const isText = typeof last === "string";
  let text = false;
  let bytes = false;
  for (let i = 0; i < n - 1; i++) {
    const p = parts[i]!;
    if (typeof p === "string") text = true;
    else if (p.byteLength > 0) bytes = true;
  }
  if (isText && !text && !bytes) return last;
  if (!isText && !text) return concatBytes(parts as Uint8Array[]);
  return concatBytes(parts.map((p) => (typeof p === "string" ? utf8.encode(p) : p)));
}

/** The client body after the commit point moved to its own module; re-exported for the modules that import it from here. */
export { endedWith, replyStream } from "./stream-reply.ts";
