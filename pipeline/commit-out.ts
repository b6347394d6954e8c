/**
 * The commit point's second half (SPEC, 6.4): a reply that committed, handed to the client.
 * Once `commitWith` (pipeline/commit.ts) has read the reply up to its first content (or to its end),
 * what is left does not wait on anything: the trace's duration and status, the account's success and
 * the conversation's binding, the warnings and the answer's headers, then the whole reply as one body
 * (the request finished there) or the reply stream with its end, client-gone and shutdown paths. It is
 * a plain function of its own, not part of that async function: JavaScriptCore compiles an async
 * function as a generator, every local kept in its frame object across the awaits, and one function
 * of ~7,700 bytecodes took up to a second of FTL compiler time per compilation, compiled again and
 * again as lanes alternate (docs/performance.md item 196).
 */
import type { GraceEnd } from "./grace-end.ts";
import { Warnings, type HubError } from "../formats/hub.ts";
import { SSE_HEADERS } from "../formats/sse.ts";
import { releaseSentBodies, warningHeader, type Finished, type RequestContext } from "./context.ts";
import type { Classification, FailureFacts } from "./classify.ts";
import { TransportError, type ClientAbort, type UpstreamReply } from "./execute.ts";
import type { AccountPool, PickHints } from "./pick.ts";
import type { Account, AttemptRecording, AttemptTrace, Clock, ProviderInfo } from "./ports.ts";
import type { Target } from "./resolve.ts";
import type { Translated } from "./translate.ts";
import type { SecretSource } from "./scrub.ts";
import type { ByteReader, ReadResult, ReplyDriver } from "./re-translate.ts";
import { gatewayStoppingStreamError, type CommittedReadOpts } from "./committed-reads.ts";

/** A failed attempt: the error the client would get and what the classification table says (SPEC 6.3). */
export interface AttemptFailure {
  error: HubError;
  classification: Classification;
}

/** What the commit point reads and changes besides the attempt itself. */
export interface CommitDeps {
  clock: Clock;
  /** Binds the conversation to the account that answered (SPEC A-2) and says whether affinity hit (SPEC 2.4). */
  pool: Pick<AccountPool, "bind" | "cacheState">;
  /** Clears the account's error state after a committed reply and feeds latency to scoring (SPEC R-8); `now` is the commit's time. */
  health: { success(account: Account, provider: ProviderInfo, model: string, latencyMs: number, now?: number): void };
  /** Called exactly once per request when its reply is complete, failed, or the client left. */
  finish: (ctx: RequestContext, f: Finished) => void;
  /** Streamed replies still open, for the end of a shutdown's grace period ({@link OpenStreams}). */
  openStreams?: OpenStreams;
  /** Ended when a shutdown's grace period is over: a reply not committed yet fails as `gateway_stopping` (attempt-loop.ts AttemptDeps.graceOver). */
  graceOver?: GraceEnd;
  /**
   * Queues work for after the reply has been handed over (the app's after-reply queue, src/after-reply.ts,
   * which the next request settles before it picks): the account's success and the conversation's
   * binding, stamped with the commit's time, go there (docs/performance.md item 149). At once when absent.
   * `task` is called with `a`, `b` and `c` (a module function and the request's values: no closure per
   * request, item 231).
   */
  later?: <A, B, C>(task: (a: A, b: B, c: C) => void, a: A, b: B, c: C) => void;
}

/**
 * The streamed replies still open (SPEC D-3): each committed stream adds the function that ends it and
 * deletes it when it ends. A shutdown whose grace period is over calls the rest: the upstream call is
 * aborted, so the client gets the format's in-band error (SPEC 6.4) instead of a cut connection, the
 * `gateway_stopping` one (committed-reads.ts gatewayStoppingStreamError), and the request is reported
 * with outcome `error` and that code, not as an upstream error.
 */
export interface OpenStreams {
  add(end: () => void): void;
  delete(end: () => void): void;
}

/**
 * One attempt whose upstream answered with a 2xx status. Its `secrets()` ({@link SecretSource}: the
 * instance's and the key the request presented) are what its reply driver scrubs an in-band error of
 * (pipeline/scrub-events.ts); called as the attempt's method, only when the reply has one.
 */
export interface CommitAttempt extends SecretSource {
  target: Target;
  account: Account;
  translated: Translated;
  reply: UpstreamReply;
  /** Aborts the upstream call. */
  controller: AbortController;
  /** The call's listener on the client's signal (execute.ts): a streamed reply sets its `onAbort`. */
  clientAbort: ClientAbort;
  /** ms since the epoch when the attempt started. */
  started: number;
  /** The attempt's entry in the route trace (duration and status are filled in here). */
  trace: AttemptTrace;
  /** The flight recorder's hooks for this attempt (SPEC O-6); undefined while the recorder is off. */
  recording?: AttemptRecording;
  /** Attempts made so far, this one included. */
  attempts: number;
  /** Whether a target or account other than the first serves (X-Switchyard-Fallback). */
  fallback: boolean;
  hints: PickHints;
  /** Releases the account's concurrency slot; idempotent. Called as the attempt's method (`a.release()`). */
  release(): void;
  /** Classifies a failure and fills the trace (the attempt loop's). Called as the attempt's method (`a.fail(…)`). */
  fail(facts: Omit<FailureFacts, "now">, error: HubError): AttemptFailure;
  /**
   * `text` as the attempt's route-trace `error` keeps it: scrubbed of every secret as a whole, then cut
   * to 300 characters (pipeline/scrub.ts scrubAndCut, TRACE_TEXT_MAX), so a secret the cut goes
   * through is not kept in part. Called as the attempt's method.
   */
  traceText(text: string): string;
  /**
   * The reply's driver, set by the commit point once it is made: a failure after it (`fail`) records the
   * usage the provider reported, if any, in the request's {@link RequestContext.billed}.
   */
  driver?: Pick<ReplyDriver<unknown>, "usage" | "usageSeen">;
  /**
   * Set true by the commit point when the reply streams on: its body (or event pump) then owns the
   * concurrency slot and releases it when it ends. Unset for a reply sent whole (its slot is released
   * at the commit) and for a failure (false or absent).
   */
  streaming?: boolean;
}

/**
 * How a committed reply reaches the client: as the bytes of an HTTP body ({@link HTTP_BODY}), or as
 * events handed to an event transport's sink ({@link toEventSink}).
 */
export interface Delivery<Out> {
  /**
   * Whether {@link whole} hands the reply to the client itself (an event sink writes its frames at
   * once), rather than as the body of the Response that the commit point returns: the commit point then
   * calls it before its bookkeeping, which the client's first frame need not wait for.
   */
  readonly handsOverAtOnce: boolean;
  /**
   * A reply read to its end while peeking: hands the reply over (an HTTP body: makes it) and returns
   * the Response body (null when the events went to a sink), the bytes handed over and the content
   * headers of the Response.
   */
  whole(parts: Array<Out | string>, clientStream: boolean): { body: Uint8Array | string | null; bytes: number; contentHeaders: Readonly<Record<string, string>> };
  /** Ends the driver for a reply that goes out whole: an HTTP body takes the text of a driver that has it ({@link ReplyDriver.endWhole}). */
  end(driver: ReplyDriver<Out>, failure?: HubError): Out | string;
  /**
   * A streamed reply: starts handing it over (SPEC R-9, 6.4, see {@link replyStream} and
   * {@link pumpEvents}); returns the Response body (null for a sink), and for a sink the function that
   * stops the delivery when the client left.
   */
  stream(
    reader: ByteReader,
    driver: ReplyDriver<Out>,
    prefix: Out[],
    opts: CommittedReadOpts & { onCancel: () => void },
    onEnd: (failure: HubError | undefined) => void,
    sent: { bytes: number },
  ): { body: ReadableStream<Uint8Array> | null; stop?: (reason?: unknown) => void };
}

/**
 * The reply of attempt `a`, committed: `driver` has seen its first content (or the reply ended, or a
 * buffering driver read it whole); `prefix` is the output so far (ending with the driver's end text when
 * `ended`), `reader` the upstream body's reader, `pendingRead` a read of it started after the commit
 * point that had not settled (the reply stream awaits it first), `idleMs` the provider's idle timeout
 * between reads. Returns the Response: whole (`deps.finish` called here) or streamed (the stream calls
 * it when it ends or the client leaves, SPEC 6.4; `a.streaming` is then set: the stream owns the slot).
 * The Response itself, not a record around it (docs/performance.md item 249).
 */
export function committedReply<Out>(
  ctx: RequestContext,
  a: CommitAttempt,
  deps: CommitDeps,
  driver: ReplyDriver<Out>,
  delivery: Delivery<Out>,
  prefix: Array<Out | string>,
  ended: boolean,
  reader: ByteReader,
  pendingRead: Promise<ReadResult> | undefined,
  idleMs: number,
): Response {
  const { target, account, reply } = a;
  const provider = target.provider;
  const now = deps.clock.now();
  const whole = driver.buffered || ended;
  // An event transport's whole reply leaves now (its frames carry no headers): the bookkeeping below is
  // done after the client has it, in the same synchronous run, so nothing else (the socket's next
  // frame, another request) runs before it is done (docs/performance.md item 137). An HTTP body leaves
  // when the Response is returned, after all of it anyway.
  const handed = whole && delivery.handsOverAtOnce ? delivery.whole(prefix, ctx.stream) : undefined;
  a.trace.durationMs = now - a.started;
  a.trace.status = reply.status;
  const cache = deps.pool.cacheState?.(a.hints, provider.id, account, now);
  // For the requests after this one, not for its reply: after it, at the commit's time (CommitDeps.later).
  if (deps.later) deps.later(succeeded, deps, a, now);
  else succeeded(deps, a, now);
  // The warnings of the body that was served join the request's before anything records them
  // (`finish` runs below for a whole reply; the trace is serialised there).
  if (a.translated.warnings.length > 0 || target.siblingOf) {
    const warnings = new Warnings(ctx.warnings);
    warnings.addAll(a.translated.warnings);
    if (target.siblingOf) {
      warnings.add("sibling_model", `The model ${target.siblingOf} does not exist at provider ${provider.id}; its sibling ${target.model} served this request.`);
    }
  }
  // SPEC F-2: what the upstream's reply held that this reply cannot carry is named, never dropped silently
  // (a stream's so far; what it leaves out later reaches the trace when it ends: `droppedAtEnd`).
  const dropped = driver.dropped;
  const droppedAtCommit = dropped?.length ?? 0;
  if (dropped !== undefined && droppedAtCommit > 0) warnDropped(ctx, provider.id, dropped);
  // What a reply sent whole changed in the client's format (an Anthropic call's cut arguments as `{}`).
  const changed = driver.replyWarnings;
  if (changed !== undefined && changed.length > 0) new Warnings(ctx.warnings).addAll(changed);
  // A record for `new Response`: no Headers of our own, its sets and its copy (docs/performance.md item 177).
  const headers: Record<string, string> = { "x-request-id": ctx.requestId, "x-switchyard-route-id": ctx.routeId };
  const warning = warningHeader(ctx.warnings);
  if (warning) headers["x-switchyard-warning"] = warning;
  if (a.fallback) headers["x-switchyard-fallback"] = "1";
  if (cache) headers["x-switchyard-cache"] = cache;

  if (whole) {
    const { body, bytes, contentHeaders } = handed ?? delivery.whole(prefix, ctx.stream);
    for (const k in contentHeaders) headers[k] = contentHeaders[k]!;
    a.release();
    deps.finish(ctx, finishedReport(a, driver, now, driver.lateError ? "upstream_error" : "ok", bytes));
    return new Response(body, { status: 200, headers });
  }

  // Committed and streaming on: the request's bytes are not sent again (docs/performance.md item 271).
  releaseSentBodies(ctx, a.translated);
  return streamedReply(ctx, a, deps, driver, delivery, prefix as Out[], reader, pendingRead, idleMs, headers, now, droppedAtCommit);
}

/**
 * {@link committedReply} of a reply that streams on (not read to its end at the commit point): the
 * reply stream or event pump with its end, client-gone and shutdown paths. A function of its own so that
 * a reply sent whole makes none of these closures or the scope they share (docs/performance.md item 233).
 */
function streamedReply<Out>(
  ctx: RequestContext,
  a: CommitAttempt,
  deps: CommitDeps,
  driver: ReplyDriver<Out>,
  delivery: Delivery<Out>,
  prefix: Out[],
  reader: ByteReader,
  pendingRead: Promise<ReadResult> | undefined,
  idleMs: number,
  headers: Record<string, string>,
  now: number,
  droppedAtCommit: number,
): Response {
  const controller = a.controller;
  const provider = a.target.provider;
  for (const k in SSE_HEADERS) headers[k] = SSE_HEADERS[k]!;
  let done = false;
  const sent = { bytes: 0 };
  // The end of a shutdown's grace period marks the reads' options (`reads`, below) `stoppedBy` before it
  // aborts the call, so the reply ends with the in-band `gateway_stopping`, not a broken upstream's error.
  const endAtShutdown = () => {
    reads.stoppedBy = gatewayStoppingStreamError();
    controller.abort(new TransportError("other", "the gateway is shutting down: its grace period for open streams is over"));
  };
  deps.openStreams?.add(endAtShutdown);
  let stop: ((reason?: unknown) => void) | undefined;
  /** A streamed reply's end: what it left out after the commit point is named in the trace's warning (its header went out already). */
  const droppedAtEnd = () => {
    const d = driver.dropped;
    if (d !== undefined && d.length > droppedAtCommit) warnDropped(ctx, provider.id, d);
  };
  const clientGone = () => {
    a.release();
    deps.openStreams?.delete(endAtShutdown);
    if (done) return;
    done = true;
    droppedAtEnd();
    const gone = new TransportError("aborted", "the client went away");
    controller.abort(gone);
    stop?.(gone);
    deps.finish(ctx, finishedReport(a, driver, now, "client_closed", sent.bytes));
  };
  // SPEC 6.4: a client that disconnects cancels the upstream call at once and frees the slot. Bun
  // aborts the request's signal on disconnect: the call's own listener on it aborts the upstream call
  // and then runs clientGone (execute.ts ClientAbort; no second listener). Body cancellation is the
  // second path to the same end.
  a.clientAbort.onAbort = clientGone;
  const reads: CommittedReadOpts & { onCancel: () => void } = { idleTimeoutMs: idleMs, abort: (reason) => controller.abort(reason), onCancel: clientGone, pendingRead };
  const delivered = delivery.stream(
    reader,
    driver,
    prefix, // not ended: no text
    reads,
    (failure) => {
      a.release();
      deps.openStreams?.delete(endAtShutdown);
      a.clientAbort.onAbort = undefined;
      if (done) return;
      done = true;
      droppedAtEnd();
      if (failure === undefined) return deps.finish(ctx, finishedReport(a, driver, now, "ok", sent.bytes));
      // Ended by the gateway's stop: an error of the gateway's (no upstream blamed), code `gateway_stopping`.
      const stopped = reads.stoppedBy;
      if (stopped === undefined) return deps.finish(ctx, finishedReport(a, driver, now, "upstream_error", sent.bytes));
      a.trace.error = a.traceText(stopped.message);
      const f = finishedReport(a, driver, now, "error", sent.bytes);
      f.code = stopped.code;
      deps.finish(ctx, f);
    },
    sent,
  );
  stop = delivered.stop;
  a.streaming = true;
  return new Response(delivered.body, { status: 200, headers });
}

/**
 * The report of a committed request (`finish`'s), made when its reply has ended: usage is read from the
 * driver then; `now` is the commit's time (the first byte's). A plain function, not a closure made per
 * request (docs/performance.md item 230).
 */
function finishedReport(a: CommitAttempt, driver: ReplyDriver<unknown>, now: number, outcome: Finished["outcome"], bytesSent: number): Finished {
  return {
    outcome,
    status: 200,
    target: a.target,
    account: a.account,
    usage: { ...driver.usage },
    usageSeen: driver.usageSeen,
    reply: driver,
    firstByteAt: now,
    bytesSent,
    attempts: a.attempts,
    fallback: a.fallback,
  };
}

/**
 * The commit's bookkeeping for the requests that follow (none of it goes into this reply): the account's
 * success (SPEC R-8: error state cleared, latency to scoring) and the conversation's binding to the
 * account (SPEC A-2, unless affinity is off), both at the commit's time `now` (ms since the epoch).
 */
function succeeded(deps: CommitDeps, a: CommitAttempt, now: number): void {
  deps.health.success(a.account, a.target.provider, a.target.model, now - a.started, now);
  if (a.hints.affinity !== false) deps.pool.bind(a.hints, a.account, now);
}

/** The code of the warning that names what the upstream's reply held and the client's reply leaves out. */
const DROPPED_CODE = "reply_content_dropped";

/**
 * Names in the request's warnings (the `X-Switchyard-Warning` header when it has not gone out yet, and
 * the route trace) what the reply of upstream `providerId` held that the client's reply, written from
 * the hub, cannot carry (SPEC F-2): one warning, replaced by a longer list when a stream leaves out more
 * after its commit point.
 */
function warnDropped(ctx: RequestContext, providerId: string, dropped: readonly string[]): void {
  const warning = {
    code: DROPPED_CODE,
    message: `The reply of upstream ${providerId} held ${dropped.join(", ")}, which this reply cannot carry (the gateway's common form has no place for it); left out.`,
  };
  const at = ctx.warnings.findIndex((w) => w.code === DROPPED_CODE);
  if (at >= 0) ctx.warnings[at] = warning;
  else ctx.warnings.push(warning);
}
