/**
 * commit (SPEC R-8, 6.1, 6.4): what happens to an upstream success status before anything reaches the
 * client. The reply driver is chosen ({@link replyDriverFor}), the reply is read up to its first
 * content without writing to the client, and then either the attempt fails — a 200 that opens with an
 * error event is classified as if that error had come with its own status (an overloaded notice as a
 * 529), a whole reply with nothing usable is an empty reply (the next target) — or the request commits: the
 * account's error state is cleared, the conversation is bound to the account, and status and headers
 * are sent with the reply (whole, or streamed by re-translate.ts). A streamed reply whose end had
 * already arrived with its first content (a short reply from a fast upstream) is sent whole too.
 */
import { codecFor } from "../formats/index.ts";
import type { DecoderOptions, EncoderOptions, FormatCodec, TapOptions } from "../formats/codec.ts";
import type { RequestText } from "../formats/write-body-json.ts";
import { randomIdPart } from "../formats/random-text.ts";
import { FormatError, hubError, Warnings, type HubError, type HubRequest, type ProviderFamily } from "../formats/hub.ts";
import { chatCustomToolsOfBody, usesLegacyFunctions } from "../formats/openai-chat/index.ts";
import { eventTooLarge, MAX_SSE_EVENT_BYTES, SSE_HEADERS } from "../formats/sse.ts";
import { requestTextOf, tryHubOf, type RequestContext } from "./context.ts";
import type { UpstreamReply } from "./execute.ts";
import { committedReply, type AttemptFailure, type CommitAttempt, type CommitDeps, type Delivery } from "./commit-out.ts";
import { DEFAULT_FIRST_CONTENT_TIMEOUT_MS, type FlightRecording, type ProviderInfo, type ReplyEvent, type ReplyEventSink } from "./ports.ts";
import {
  AccumulatedDriver,
  idleTimeoutError,
  passthroughDriver,
  replyStream,
  SseEventsDriver,
  TranslatedEventDriver,
  TranslatedStreamDriver,
  upstreamBrokenError,
  wholeBody,
  WholeBodyDriver,
  type ByteReader,
  type ReadResult,
  type ReplyDriver,
} from "./re-translate.ts";
import { eventBytes, pumpEvents } from "./pump-events.ts";
import { recordedReader } from "./committed-reads.ts";
import { PassthroughDriver } from "./passthrough-driver.ts";
import { SERVER_TOOL_IDLE_FACTOR } from "./keep-alive-bound.ts";
import { Deadline } from "./deadline-sweep.ts";
import { gatewayStoppingError } from "./unserved-errors.ts";
import { byteSample, eventSample } from "./output-estimate.ts";
import type { Translated } from "./translate.ts";
import { NO_SECRETS, type SecretSource } from "./scrub.ts";
import { estimateInputOfRequest } from "./key-limits.ts";
import type { UsageEstimates } from "./estimate-reply-usage.ts";
import { UsageChunkAdder } from "./add-usage-chunk.ts";
import { mayBeUnlabelledSse, sniffSse } from "./sse-sniff.ts";
import { emptyReplyError, gatewayFailed, gatheredSilent, noContentInTime, SSE_EVENT_SEEN, sseScan, unusableReply, unusableReplyError } from "./commit-failures.ts";
import { releaseCut } from "./release-after-done.ts";

export type { AttemptFailure, CommitAttempt, CommitDeps, OpenStreams } from "./commit-out.ts";

/**
 * The reply driver for an upstream 2xx (SPEC F-2, R-9): the native passthrough tap when client and
 * provider speak the same format and the body was not rebuilt (and nothing was redacted: S-3 maps
 * placeholders back on the hub events); a translating stream for a streamed
 * reply to a streaming client; an accumulating driver for a streamed reply to a non-streaming client;
 * a whole-body driver for a JSON reply.
 *
 * With `events` (a request that came over an event transport, SPEC 2.5) the same choice yields the
 * client's events instead of bytes: the native passthrough of a format with an event tap forwards the
 * events the tap read; a translated stream to a client format with an event encoder is encoded
 * straight to events; any other driver's SSE bytes (a whole reply replayed as a stream) are read as
 * events as they come.
 *
 * `secrets` (the attempt's: the instance's and the key the request presented) are what a streamed
 * reply's in-band error is scrubbed of before the client gets it (SPEC 2.4, pipeline/scrub-events.ts);
 * without them only credential shapes are.
 */
export function replyDriverFor(ctx: RequestContext, provider: ProviderInfo, translated: Translated, reply: UpstreamReply, events?: false, secrets?: SecretSource): ReplyDriver;
export function replyDriverFor(ctx: RequestContext, provider: ProviderInfo, translated: Translated, reply: UpstreamReply, events: true, secrets?: SecretSource): ReplyDriver<ReplyEvent[]>;
export function replyDriverFor(
  ctx: RequestContext,
  provider: ProviderInfo,
  translated: Translated,
  reply: UpstreamReply,
  events = false,
  secrets: SecretSource = NO_SECRETS,
): ReplyDriver | ReplyDriver<ReplyEvent[]> {
  const providerCodec = codecFor(translated.upstreamFormat);
  const clientCodec = codecFor(ctx.clientFormat);
  const isSse = reply.sse === true || (reply.headers.get("content-type") ?? "").includes("text/event-stream");
  const hints = translated.decoderHints === undefined ? familyHints(provider.family) : { family: provider.family, callIdPart: randomIdPart, ...translated.decoderHints };
  // SPEC S-3: a redacted request's reply goes through the hub, where placeholders are mapped back.
  const restoration = ctx.restoration;
  if (isSse && translated.mode === "native" && ctx.stream && translated.upstreamFormat === ctx.clientFormat && !restoration) {
    const tapOptions = tapOptionsFor(provider.family, ctx.includeUsage);
    // What was forwarded is kept to estimate the output of a reply that ends without usage (output-estimate.ts).
    if (events && providerCodec.createEventTap) return passthroughDriver(providerCodec.createEventTap(tapOptions), eventSample(providerCodec, hints), secrets);
    // A Chat client that asked for usage gets its chunk though the upstream sends none (add-usage-chunk.ts).
    const usageChunk = ctx.includeUsage ? new UsageChunkAdder(new ReplyEncoderOptions(ctx)) : undefined;
    // A Chat stream ends at its first [DONE]: the upstream is read no more then (PassthroughDriver.cut).
    const tap = passthroughDriver(providerCodec.createTap(tapOptions), byteSample(providerCodec, hints), secrets, usageChunk, translated.upstreamFormat === "openai-chat");
    return events ? new SseEventsDriver(tap) : tap;
  }
  const encoderOptions = new ReplyEncoderOptions(ctx); // only for the drivers that encode (item 178)
  // A Responses client has no stop field: its own lane (native, no hub parsed) is never asked. An OpenAI
  // reasoning model's Chat body goes without the `stop` it refuses (Translated.stopsEmulated).
  const emulate = (translated.upstreamFormat === "openai-responses" && ctx.clientFormat !== "openai-responses") || translated.stopsEmulated === true;
  const stops = emulate ? emulatedStops(ctx) : undefined;
  if (isSse && ctx.stream) {
    if (events && clientCodec.createEventEncoder) return cutting(estimating(new TranslatedEventDriver(providerCodec, clientCodec, hints, encoderOptions, restoration, secrets), encoderOptions), stops);
    return asEvents(cutting(estimating(new TranslatedStreamDriver(providerCodec, clientCodec, hints, encoderOptions, restoration, secrets), encoderOptions), stops), events);
  }
  if (isSse) return asEvents(cutting(estimating(new AccumulatedDriver(providerCodec, clientCodec, hints, encoderOptions, restoration, undefined, secrets), encoderOptions), stops), events);
  const native = translated.mode === "native" && translated.upstreamFormat === ctx.clientFormat;
  const wholeOpts = restoration ? { native, clientStream: ctx.stream, restoration } : WHOLE_OPTS[(native ? 2 : 0) + (ctx.stream ? 1 : 0)]!;
  const whole = estimating(new WholeBodyDriver(providerCodec, clientCodec, hints, encoderOptions, wholeOpts), encoderOptions);
  if (stops) whole.stops = stops;
  return asEvents(whole, events);
}

/**
 * The request's stop sequences (Messages `stop_sequences`, Chat `stop`, Gemini `stopSequences`, as the
 * hub request holds them) when the gateway emulates them: the target's format has no stop field
 * (OpenAI Responses, REFERENCE §5.11; formats/openai-responses/build.ts sends none), or its model refuses
 * it (an OpenAI reasoning model on Chat: Translated.stopsEmulated); undefined when the request has none.
 */
function emulatedStops(ctx: RequestContext): readonly string[] | undefined {
  const stops = tryHubOf(ctx)?.stopSequences?.filter((s) => s.length > 0);
  return stops && stops.length > 0 ? stops : undefined;
}

/** `driver`, cutting its reply at the first of `stops` (pipeline/cut-at-stop-sequence.ts) when there are any. */
function cutting<D extends { emulateStops(stops: readonly string[]): void }>(driver: D, stops: readonly string[] | undefined): D {
  if (stops) driver.emulateStops(stops);
  return driver;
}

/**
 * `driver`, told where the usage of a reply without the provider's is estimated from
 * (pipeline/estimate-reply-usage.ts): every client format gets the estimate, a Gemini client as its
 * `usageMetadata` (since 2026-12-07; before, none).
 */
function estimating<D extends { estimates: UsageEstimates | undefined }>(driver: D, from: UsageEstimates): D {
  driver.estimates = from;
  return driver;
}

/**
 * A whole reply's options without a redaction to restore, by `native` and `clientStream` (index: 2 for
 * native, plus 1 for a streaming client): one record each for the process instead of one per reply
 * (docs/performance.md item 259). The driver only reads them.
 */
const WHOLE_OPTS: ReadonlyArray<{ readonly native: boolean; readonly clientStream: boolean }> = [
  { native: false, clientStream: false },
  { native: false, clientStream: true },
  { native: true, clientStream: false },
  { native: true, clientStream: true },
];

/**
 * `driver` as an event transport's (SPEC 2.5) when `events`, else as it is. A module function, not a
 * closure over `events` made per reply (a function and a scope per request: docs/performance.md item 239).
 */
function asEvents(driver: ReplyDriver, events: boolean): ReplyDriver | ReplyDriver<ReplyEvent[]> {
  return events ? new SseEventsDriver(driver) : driver;
}

/**
 * The decoders' options of a reply whose request needed no hints of its own (every request but a
 * Gemini one whose tool names were changed): its provider's family only, one record per family for the
 * process instead of one per reply (docs/performance.md item 247). Decoders, taps and output samples
 * only read them.
 */
const FAMILY_HINTS = new Map<ProviderFamily, Readonly<DecoderOptions>>();
function familyHints(family: ProviderFamily): DecoderOptions {
  let hints = FAMILY_HINTS.get(family);
  if (hints === undefined) FAMILY_HINTS.set(family, (hints = { family, callIdPart: randomIdPart }));
  return hints;
}

/**
 * A passthrough tap's options (its provider's family, the client's usage option): one record per family
 * and usage option for the process instead of one per reply (docs/performance.md item 327), as
 * {@link familyHints}. The taps only read them when they are made.
 */
const TAP_OPTIONS = new Map<ProviderFamily, readonly [Readonly<TapOptions>, Readonly<TapOptions>]>();
function tapOptionsFor(family: ProviderFamily, includeUsage: boolean): TapOptions {
  let pair = TAP_OPTIONS.get(family);
  if (pair === undefined) TAP_OPTIONS.set(family, (pair = [{ family, includeUsage: false }, { family, includeUsage: true }]));
  return pair[includeUsage ? 1 : 0];
}

/**
 * The encoders' options for one request's reply: the model the client asked for, its usage option, and
 * the parsed request, fetched only when an encoder reads it (Responses encoders echo request fields);
 * for a Chat client, whether it sent the legacy `functions` and the names of its own `custom` tools
 * (read by the Chat encoders, the latter at each tool call); `warn` adds an
 * encoder's warning to the request's (SPEC F-2). A class (the getters on its prototype), not an object
 * literal with `get`: no getter pair, getter function and scope per reply (issue 17).
 */
class ReplyEncoderOptions implements EncoderOptions {
  readonly model: string;
  readonly includeUsage: boolean;

  constructor(private readonly ctx: RequestContext) {
    this.model = ctx.requestedModel;
    this.includeUsage = ctx.includeUsage;
  }

  get request(): HubRequest | undefined {
    return this.ctx.clientFormat === "openai-responses" ? tryHubOf(this.ctx) : undefined;
  }

  get requestText(): RequestText | undefined {
    return this.ctx.clientFormat === "openai-responses" ? requestTextOf(this.ctx) : undefined;
  }

  get legacyFunctions(): boolean {
    return this.ctx.clientFormat === "openai-chat" && this.ctx.body.functions !== undefined && usesLegacyFunctions(this.ctx.body);
  }

  get customTools(): ReadonlySet<string> | undefined {
    return this.ctx.clientFormat === "openai-chat" ? chatCustomToolsOfBody(this.ctx.body.tools) : undefined;
  }

  warn(code: string, message: string): void {
    new Warnings(this.ctx.warnings).add(code, message);
  }

  /** estimate-reply-usage.ts {@link UsageEstimates}: the request body's input estimate, in tokens, as its usage row's. */
  estimatedInputTokens(): number {
    return estimateInputOfRequest(this.ctx);
  }
}

/**
 * The commit point of one attempt whose upstream answered 2xx. Reads the reply up to its first
 * content (the whole reply for a buffering driver) under the provider's idle timeout, writing nothing
 * to the client; returns the failure when the reply opened with an error event, broke, went silent,
 * was empty, or had nothing usable (not even a finish reason). Otherwise commits and returns the
 * Response: whole when the reply was read to its end (a streamed reply too, when its end was already
 * there after the first content: {@link readIfReady}), else streamed (the stream then owns the
 * concurrency slot and calls `finish` when it ends or the client leaves, SPEC 6.4).
 * A plain function returning {@link commitWith}'s promise, not an async function of its own (one
 * generator, promise and scope fewer per attempt: docs/performance.md item 238); a driver that throws
 * while it is made throws here, where the caller's `await` in its `try` meets it as it met the rejection.
 */
export function commitReply(ctx: RequestContext, a: CommitAttempt, deps: CommitDeps): Promise<Response | AttemptFailure> {
  // An event stream labelled text/plain, octet-stream or nothing is told by its first bytes (sse-sniff.ts).
  if (mayBeUnlabelledSse(a.reply, a.translated.upstreamStream)) return sniffThenCommit(ctx, a, deps);
  return commitChosen(ctx, a, deps);
}

/** {@link commitReply} after the first bytes of an unlabelled reply said whether it is SSE. */
async function sniffThenCommit(ctx: RequestContext, a: CommitAttempt, deps: CommitDeps): Promise<Response | AttemptFailure> {
  a.reply = (await sniffSse(a.reply, a.target.provider.idleTimeoutMs)).reply;
  return commitChosen(ctx, a, deps);
}

/** {@link commitReply} once the reply's lane can be told from it. */
function commitChosen(ctx: RequestContext, a: CommitAttempt, deps: CommitDeps): Promise<Response | AttemptFailure> {
  const provider = a.target.provider;
  // SPEC 2.5: a request that came over an event transport gets its reply as events, never as SSE bytes.
  if (ctx.events) return commitWith(ctx, a, deps, replyDriverFor(ctx, provider, a.translated, a.reply, true, a), toEventSink(ctx.events, ctx.recording));
  return commitWith(ctx, a, deps, replyDriverFor(ctx, provider, a.translated, a.reply, false, a), HTTP_BODY);
}

/** The content type of a whole JSON reply. */
const JSON_HEADERS: Readonly<Record<string, string>> = { "content-type": "application/json" };

/** The reply as an HTTP body: whole (JSON, or SSE for a streaming client) or as one pull-based stream. */
const HTTP_BODY: Delivery<Uint8Array> = {
  handsOverAtOnce: false,
  whole(parts, clientStream) {
    const body = wholeBody(parts);
    return { body, bytes: typeof body === "string" ? Buffer.byteLength(body) : body.byteLength, contentHeaders: clientStream ? SSE_HEADERS : JSON_HEADERS };
  },
  end: endForBody,
  stream: (reader, driver, prefix, opts, onEnd, sent) => ({ body: replyStream(reader, driver, prefix, opts, onEnd, sent) }),
};

/** The driver classes' own `endWhole` (and the passthrough's `end`), called as known functions by {@link endForBody}. */
const END_WHOLE_BODY = WholeBodyDriver.prototype.endWhole;
const END_TRANSLATED_STREAM = TranslatedStreamDriver.prototype.endWhole;
const END_ACCUMULATED = AccumulatedDriver.prototype.endWhole;
const END_PASSTHROUGH = PassthroughDriver.prototype.end;

/**
 * {@link Delivery.end} of an HTTP body: the driver's `endWhole` when it has one, else its `end`. Each
 * driver class of the HTTP lanes is told apart here and its method called as a known function, so
 * that every call site sees one callee: this function is inlined into `commitWith`, and one method
 * call on `driver` there (`driver.endWhole(…)`) saw a different class on each kind of lane, which the
 * optimising compiler had speculated to be the one it had seen, so a lane of another kind made it
 * throw `commitWith`'s compiled code away and compile it again (docs/performance.md item 206). Any
 * other driver (none today: these are the four `replyDriverFor` makes for an HTTP body) is asked as before.
 */
function endForBody(driver: ReplyDriver<Uint8Array>, failure?: HubError): Uint8Array | string {
  if (driver instanceof WholeBodyDriver) return END_WHOLE_BODY.call(driver, failure);
  if (driver instanceof PassthroughDriver) return END_PASSTHROUGH.call(driver, failure) as Uint8Array;
  if (driver instanceof TranslatedStreamDriver) return END_TRANSLATED_STREAM.call(driver, failure);
  if (driver instanceof AccumulatedDriver) return END_ACCUMULATED.call(driver, failure);
  return driver.endWhole ? driver.endWhole(failure) : driver.end(failure);
}

/**
 * The reply as events to an event transport's sink (SPEC 2.5), seen by the flight recorder on the way
 * when it is on (SPEC O-6). The Response keeps the SSE content type: the events are an SSE reply's.
 */
function toEventSink(sink: ReplyEventSink, recording: FlightRecording | undefined): Delivery<ReplyEvent[]> {
  const target: ReplyEventSink = recording
    ? {
        events(batch) {
          recording.events(batch);
          sink.events(batch);
        },
        end: () => sink.end(),
      }
    : sink;
  return {
    handsOverAtOnce: true,
    whole(parts) {
      const events = (parts as ReplyEvent[][]).flat(); // `end` below gives no text
      const bytes = eventBytes(events);
      if (events.length > 0) target.events(events);
      target.end();
      return { body: null, bytes, contentHeaders: SSE_HEADERS };
    },
    end: (driver, failure) => driver.end(failure),
    stream(reader, driver, prefix, opts, onEnd, sent) {
      const pump = pumpEvents(reader, driver, prefix, opts, target, onEnd, sent);
      return { body: null, stop: pump.stop };
    },
  };
}

/** {@link commitReply} with the driver and the delivery chosen. */
async function commitWith<Out>(ctx: RequestContext, a: CommitAttempt, deps: CommitDeps, driver: ReplyDriver<Out>, delivery: Delivery<Out>): Promise<Response | AttemptFailure> {
  const { target, reply, controller } = a;
  const provider = target.provider;
  a.driver = driver; // a failure below records the usage the provider reported (RequestContext.billed)

  if (!reply.body) {
    // SPEC 6.3's last row: a 2xx without a body is a reply with nothing usable (the next target, no account effect).
    controller.abort();
    const e = hubError("api_error", `Upstream ${provider.id} answered HTTP ${reply.status} without a body.`, { status: 502, code: "upstream_empty_reply" });
    // the trace shows the status the upstream sent (its 2xx) beside the error; the client gets the 502
    return a.fail({ status: reply.status, error: e, unusable: true }, e);
  }
  // Chunk by chunk, JSON replies too: the idle timeout is the silence between chunks (a provider may
  // trickle a long JSON reply, or pad it with whitespace while it works), which a whole-body read
  // (fetch's bytes(), ~10 µs cheaper) could only turn into a limit on the whole reply.
  const upstream = reply.body.getReader() as unknown as ByteReader;
  const reader = a.recording ? recordedReader(upstream, a.recording) : upstream;
  /** The output so far; text only from `delivery.end`, for a reply that then goes out whole. */
  const prefix: Array<Out | string> = [];
  let ended = false;
  /** A read started after the commit point that had not settled: the reply stream awaits it first. */
  let pendingRead: Promise<ReadResult> | undefined;
  const idleMs = provider.idleTimeoutMs;
  // One idle deadline for the whole peek, renewed before each read (like replyStream): when it fires,
  // the call is aborted, which settles the pending read. A reply gathered for a non-streaming client
  // that holds nothing yet does not refresh it: events that add nothing (keep-alive pings) are silence
  // until its first content (SPEC 6.4's idle timeout; the attempt then fails like a silent upstream and
  // the loop moves on within the pre-commit deadline, 6.1/6.3). Once it holds content they keep it
  // alive, as they keep a committed stream alive (a reasoning model may ping for minutes). Before it,
  // what a committed stream counts as content keeps it alive too (pipeline/keep-alive-bound.ts): a read
  // whose events showed the upstream at work (`contentEvents` grew: a block's start, a server tool's
  // block, a hosted search's progress), and, while a server tool is in flight (`serverToolRunning`:
  // Anthropic's web search sends its server_tool_use block, then only pings until its result), pings
  // for up to SERVER_TOOL_IDLE_FACTOR idle timeouts after the last such read, as on a stream.
  const gathers = driver.gathers === true;
  /** Whether the driver emulates stop sequences (ReplyDriver.cut): only then is it asked after each read. */
  const cuts = driver.cut !== undefined;
  /** Bytes of events without content read by a gathering driver that holds nothing yet. */
  let contentless = 0;
  /** Gathering without content: when (performance.now()) the loop last refreshed `idle`, its `contentEvents` after the last read, when a read made them grow (0: never). */
  let armedAt = 0, events = gathers ? (driver.contentEvents ?? 0) : 0, progressAt = 0;
  /** Bytes read before the first content by a driver that streams (held in `prefix` until the commit). */
  let peeked = 0;
  /** A streamed reply (not a whole JSON body) and whether its reads carried an SSE event yet (commit-failures.ts sseScan). */
  const streamed = !driver.buffered || gathers;
  let scan = 0, scanned = false;
  // A deadline on the shared sweep, not a timer (pipeline/deadline-sweep.ts, docs/performance.md item 235);
  // `idle.silent` once it fired.
  const idle = new PeekIdle(controller, reader);
  idle.arm(idleMs);
  // An unlabelled reply's sniff (sse-sniff.ts) already waited for its first bytes: that silence counts,
  // so the deadline is one idle timeout from the last bytes it read, not a whole one more; the reads
  // that give back the bytes it held, and the one it left waiting, do not renew it.
  let sniffed = 0;
  if (reply.quiet !== undefined) {
    idle.dueAt = reply.quiet.since + idleMs;
    sniffed = reply.quiet.held + 1;
  }
  // A streamed reply (not a JSON one, which may be padded while the provider works) gets its first
  // content within the provider's first-content timeout of its headers, however many events without
  // content (keep-alive pings) arrive meanwhile: before the commit point the client gets nothing, so
  // an upstream that pings forever would hold it forever. The passthrough taps count a block's start
  // as content (Anthropic's content_block_start, a Responses output item's start): the client gets it
  // and the pings after it. A hub driver commits a block only with its first content, so a block it
  // began (`begun`: a thinking block's start with no thinking yet) gets the bound once more, counted
  // from that start: a model that thinks at length behind pings has that long to show the first of it
  // (its first thinking, or a signature), and one that never does is a timeout rather than a client
  // held forever. The deadline is made only when a read leaves the reply without content (most first
  // reads bring it).
  const firstMs = driver.buffered && !gathers ? 0 : (provider.firstContentTimeoutMs ?? Math.max(DEFAULT_FIRST_CONTENT_TIMEOUT_MS, idleMs));
  /** Whether the first-content bound still applies (a streamed reply without content). */
  let bounded = firstMs > 0;
  const peekStart = bounded ? performance.now() : 0;
  /** The first-content bound, made when a read leaves the reply without content: a deadline on the shared sweep, as `idle` (item 236). */
  let firstContent: FirstContentBound | undefined;
  /** When (performance.now()) a block began (`begun`) with no content yet: the bound counts from there too; -1 before. */
  let blockStart = -1;
  /** The upstream read failed (the connection broke, or the call was aborted): any other throw below is the gateway's own. */
  let readFailed = false;
  try {
    while (driver.buffered || !driver.contentSeen) {
      if (sniffed > 0) sniffed--;
      else if (!gathers || driver.contentSeen) idle.renew();
      else if (progressAt > armedAt || (driver.serverToolRunning === true && armedAt - progressAt < (SERVER_TOOL_IDLE_FACTOR - 1) * idleMs)) {
        // progress, or a server tool's pings: the last refresh is the first at 2 idle timeouts or later
        idle.renew();
        armedAt = performance.now();
      }
      let r: ReadResult;
      try {
        r = await reader.read();
      } catch (e) {
        if (!finishedAlready(ctx, driver)) {
          readFailed = true;
          throw e;
        }
        // SPEC 6.4: the stop reason had arrived, only the closing events were lost: the reply finished.
        ended = true;
        prefix.push(delivery.end(driver, idle.silent ? idleTimeoutError(idleMs) : upstreamBrokenError(e instanceof Error ? e.message : String(e))));
        break;
      }
      if (firstContent?.starved === true) return noContentInTime(a, provider.id, firstMs, blockStart >= 0);
      if (idle.silent) {
        if (!finishedAlready(ctx, driver)) return gatheredSilent(a, provider.id, driver, idleMs, contentless, armedAt - progressAt);
        ended = true;
        prefix.push(delivery.end(driver, idleTimeoutError(idleMs)));
        break;
      }
      if (r.done) {
        ended = true;
        prefix.push(delivery.end(driver));
        break;
      }
      if (streamed && scan !== SSE_EVENT_SEEN) {
        scan = sseScan(scan, r.value, !scanned);
        scanned = true;
      }
      if (driver.hold) driver.hold(r.value);
      else prefix.push(driver.push(r.value));
      if (cuts && driver.cut === true) {
        // The reply ended at an emulated stop sequence (pipeline/cut-at-stop-sequence.ts) or a Chat [DONE]: read no more of it for the client.
        ended = true;
        releaseCut(reader, driver); // at [DONE], cancelled a little later: the body can end and its connection be kept
        prefix.push(delivery.end(driver));
        break;
      }
      if (gathers && !driver.contentSeen) {
        contentless += r.value.byteLength;
        const n = driver.contentEvents ?? 0;
        if (n !== events) {
          events = n;
          progressAt = performance.now();
        }
      }
      if (driver.earlyError) break;
      if (bounded) {
        if (driver.contentSeen) {
          firstContent?.disarm();
          bounded = false;
        } else {
          if (blockStart < 0 && driver.begun === true) {
            blockStart = performance.now();
            if (firstContent !== undefined) firstContent.blockStart = blockStart;
          }
          // One deadline: when it is due after a block began, it is armed again for what is left of the block's bound.
          if (firstContent === undefined) {
            firstContent = new FirstContentBound(firstMs, blockStart, controller, reader);
            firstContent.arm(Math.max(0, firstMs - (performance.now() - peekStart)));
          }
        }
      }
      // Events without content (or bytes that are no events at all) are held here until the first
      // content: no more of them than one event may be (formats/sse.ts). A buffering driver keeps the
      // reply it builds, not these bytes.
      if (!driver.buffered && (peeked += r.value.byteLength) > MAX_SSE_EVENT_BYTES) throw eventTooLarge();
    }
    if (!ended && !driver.earlyError && !driver.buffered) {
      // Content was seen: the reply commits. What the upstream already delivered (the rest of a short
      // reply, often its end too) is taken now, without waiting for anything that has not arrived:
      // a reply that already ended is sent whole, in one write, instead of through the reply stream.
      let taken = 0;
      while (taken < READY_LIMIT) {
        const read = reader.read();
        // readIfReady inline: no async function, closures or `then` per read (docs/performance.md item 226).
        for (let hop = 0; hop < READY_HOPS && Bun.peek(read) === read; hop++) await null;
        const r = settledRead(read);
        if (r === undefined) {
          pendingRead = read; // still pending (or failed): the reply stream's first read
          break;
        }
        if (r.done) {
          ended = true;
          prefix.push(delivery.end(driver));
          break;
        }
        taken += r.value.byteLength;
        if (driver.hold) driver.hold(r.value);
        else prefix.push(driver.push(r.value));
        if (cuts && driver.cut === true) {
          ended = true;
          releaseCut(reader, driver);
          prefix.push(delivery.end(driver));
          break;
        }
      }
      // What a holding driver kept (the reply so far) is the stream's first output.
      if (!ended && driver.hold) prefix.push(driver.push(NO_BYTES));
    }
  } catch (e) {
    controller.abort();
    if (firstContent?.starved === true) return noContentInTime(a, provider.id, firstMs, blockStart >= 0);
    if (idle.silent) return gatheredSilent(a, provider.id, driver, idleMs, contentless, armedAt - progressAt);
    // A stream the formats cannot relay (an event past MAX_SSE_EVENT_BYTES) or a JSON reply past
    // MAX_WHOLE_REPLY_BYTES (re-translate.ts): a failed attempt.
    if (e instanceof FormatError) return a.fail({ status: e.error.status, error: e.error }, e.error);
    if (ctx.signal.aborted) return a.fail({ transport: "aborted" }, hubError("api_error", "The client went away.", { status: 499 }));
    if (deps.graceOver?.over) {
      const stopping = gatewayStoppingError(); // no account effect: the gateway's own shutdown cut the call
      return a.fail({ transport: "aborted", stopping: true, error: stopping }, stopping);
    }
    if (!readFailed) return gatewayFailed(a, e);
    return a.fail({ transport: "reset" }, hubError("api_error", `Upstream ${provider.id} broke the connection before answering.`, { status: 502 }));
  } finally {
    idle.disarm();
    firstContent?.disarm();
  }

  if (driver.earlyError) {
    controller.abort();
    void reader.cancel().catch(() => {});
    const e = driver.earlyError;
    // A reply the gateway cannot read (not JSON, not the format's shape, a stream that ended before its
    // first event: no byte, or only comments): SPEC 6.3's last row, not a 5xx the upstream sent
    // (commit-failures.ts). A whole JSON body cut mid-way is a cut reply (whole-reply-bound.ts notJsonError).
    if (unusableReply(e, streamed && scan !== SSE_EVENT_SEEN)) {
      const unusable = unusableReplyError(a, e, reply.status, reply.headers.get("content-type"));
      return a.fail({ status: reply.status, error: unusable, unusable: true }, unusable); // the trace: the upstream's 2xx and why it was unusable
    }
    const status = e.kind === "overloaded" ? 529 : e.status;
    return a.fail({ status, error: e, inBand: true }, e);
  }
  // SPEC 6.3's empty reply: nothing usable, not even a finish reason. The next target serves; at the
  // last one the client gets this failure (502 upstream_empty_reply), as it gets a streamed reply of
  // nothing (formats/openai-chat/decoder.ts EMPTY_REPLY_ERROR): a 200 would pass a reply that never
  // finished off as a finished one (SPEC 6.4, F-6), which a stream cannot carry without an error either.
  if (driver.buffered && driver.empty) {
    const e = emptyReplyError(provider.id);
    return a.fail({ status: reply.status, error: e, unusable: true }, e);
  }

  return committedReply(ctx, a, deps, driver, delivery, prefix, ended, reader, pendingRead, idleMs);
}

/**
 * The idle deadline of the commit point's reads (SPEC 6.4's idle timeout, renewed before each read):
 * when due, the upstream call is aborted and its read cancelled, which settles the pending read, and
 * `silent` says why. A class, not a closure over the commit point's variables made per attempt
 * (docs/performance.md item 244).
 */
class PeekIdle extends Deadline {
  /** Whether the deadline fired. */
  silent = false;

  constructor(
    private readonly controller: AbortController,
    private readonly reader: ByteReader,
  ) {
    super();
  }

  /** {@link Deadline.expire}: the upstream went silent. */
  expire(): void {
    this.silent = true;
    this.controller.abort();
    void this.reader.cancel().catch(IGNORE);
  }
}

/**
 * The first-content bound of the commit point's reads (SPEC 6.4; made when a read leaves a streamed reply
 * without content): when due after a block began (`blockStart`, which the commit point keeps current), it
 * is armed again for what is left of the block's bound; otherwise the reply starved (`starved`): the call
 * is aborted and its read cancelled. A class, not a closure over the commit point's variables, which its
 * async function then made on every attempt, bound or not (docs/performance.md item 262).
 */
class FirstContentBound extends Deadline {
  /** Whether the bound ran out. */
  starved = false;

  constructor(
    private readonly firstMs: number,
    /** When (performance.now()) a block began with no content yet; -1 before. */
    public blockStart: number,
    private readonly controller: AbortController,
    private readonly reader: ByteReader,
  ) {
    super();
  }

  /** {@link Deadline.expire}: armed again for what is left of a begun block's bound, else starved. */
  expire(): void {
    const left = this.blockStart < 0 ? 0 : this.firstMs - (performance.now() - this.blockStart);
    if (left > 0) {
      this.arm(left);
      return;
    }
    this.starved = true;
    this.controller.abort();
    void this.reader.cancel().catch(IGNORE);
  }
}

/**
 * Whether a buffering driver's reply (a stream gathered for a non-streaming client) already has its
 * provider's stop reason while the client is still there: a break or silence of the upstream after it
 * then lost only the closing events (Anthropic's `message_stop`, a Chat usage chunk or `[DONE]`), and
 * the reply is finished with what arrived, as a streaming client's is (SPEC 6.4, `endedWith` in
 * re-translate.ts), instead of failing the attempt.
 */
function finishedAlready(ctx: RequestContext, driver: ReplyDriver<unknown>): boolean {
  return driver.buffered && driver.stopReason !== null && !ctx.signal.aborted;
}

/**
 * Bytes of a streamed reply taken after its first content while they are already there (see
 * {@link readIfReady}); past this the reply is committed as a stream, so a long reply that arrives
 * faster than it is read still reaches the client in parts.
 */
const READY_LIMIT = 64 * 1024;

/** An empty read: pushed to a holding driver to take the output it kept ({@link ReplyDriver.hold}). */
const NO_BYTES = new Uint8Array(0);

/** The microtask turns {@link readIfReady} waits for a read to settle (Bun's fetch body settles a read of received data at once, or its end after one). */
const READY_HOPS = 4;

/** Marks a read's failure as handled: it is left to the read's later awaiter. */
const IGNORE = () => {};

/**
 * The result of `read` if it has settled with one (read synchronously: `Bun.peek` gives a pending
 * promise back as it is, a settled one's value or reason), else undefined: a read still pending, or
 * one that failed, is left to its later awaiter (a handler is added so that a failure meanwhile does not
 * count as unhandled). `Bun.peek.status` tells a value from a reason only once the read has settled: it
 * makes an array per call, `Bun.peek` nothing.
 */
export function settledRead(read: Promise<ReadResult>): ReadResult | undefined {
  const value = Bun.peek(read);
  if (value !== read && Bun.peek.status(read) === "fulfilled") return value as ReadResult;
  read.then(undefined, IGNORE);
  return undefined;
}

/**
 * The result of `read` if it settles within {@link READY_HOPS} microtask turns (the chunk, or the end,
 * was already received), else undefined. Never waits for I/O: no timer, no event-loop turn. A read that
 * fails is left to its later awaiter (undefined here). The commit point runs the same steps inline
 * (no async function of its own per read); scripts/lib/floor-server.ts calls this one.
 */
export async function readIfReady(read: Promise<ReadResult>): Promise<ReadResult | undefined> {
  for (let hop = 0; hop < READY_HOPS && Bun.peek(read) === read; hop++) await null;
  return settledRead(read);
}
