/**
 * The upstream reads of a committed reply (SPEC 6.4): the reader type, the provider's idle timeout
 * between reads, and the in-band errors of a read that failed or went silent. Used by the reply stream
 * (pipeline/re-translate.ts replyStream), the event pump (pipeline/pump-events.ts) and the commit point.
 */
import type { TapState } from "../formats/codec.ts";
import { FormatError, hubError, type HubError } from "../formats/hub.ts";
import { ContentWatch, keepAliveOnlyError, type ServerToolSource } from "./keep-alive-bound.ts";
import type { AttemptRecording } from "./ports.ts";
import { CallbackDeadline } from "./deadline-sweep.ts";
import { GATEWAY_STOPPING_CODE } from "./classify.ts";

/** The reader of an upstream body (the subset of ReadableStreamDefaultReader the pipeline uses). */
export interface ByteReader {
  read(): Promise<ReadResult>;
  cancel(reason?: unknown): Promise<void>;
}

/** One read of a {@link ByteReader}. */
export type ReadResult = { done: true; value?: undefined } | { done: false; value: Uint8Array };

/** Error sent in-band when the provider stream stays silent too long (SPEC 6.4). */
export function idleTimeoutError(ms: number): HubError {
  return hubError("timeout", `The upstream stream was silent for ${Math.round(ms / 1000)} s and was closed.`, {
    status: 504,
    code: "upstream_idle_timeout",
  });
}

/** Error sent in-band when the provider connection breaks mid-reply. */
export function upstreamBrokenError(message: string): HubError {
  return hubError("api_error", `The upstream connection broke mid-reply (${transportReason(message)}).`, { status: 502, code: "upstream_connection_lost" });
}

/**
 * Error sent in-band when the gateway itself ends a streamed reply still open at the end of a shutdown's
 * grace period (SPEC D-3: `server.shutdown_grace_ms` over, or a second signal), its upstream call
 * aborted: the 503 `gateway_stopping` of a request still waiting then (unserved-errors.ts
 * gatewayStoppingError), in-band; nothing about the upstream.
 */
export function gatewayStoppingStreamError(): HubError {
  return hubError(
    "overloaded",
    "The gateway is shutting down: its grace period for requests in flight ended before this reply was complete, and the upstream call was cancelled. Send the request again.",
    { status: 503, code: GATEWAY_STOPPING_CODE },
  );
}

/**
 * A short, client-safe reason from a fetch/stream error message: the error code when there is one
 * (ECONNRESET, …), else the first sentence without runtime hints ("pass `verbose: true` …").
 */
export function transportReason(message: string): string {
  const code = /\b(E[A-Z]{3,}|Connection[A-Za-z]+)\b/.exec(message)?.[1];
  if (code) return code;
  const first = message.split(/(?<=\.)\s|\n/)[0]?.trim() ?? "";
  return first.length > 0 && first.length <= 120 ? first.replace(/\.$/, "") : "connection error";
}

/**
 * The options of {@link committedReads}: the provider's idle timeout between reads (ms), the function
 * that aborts the upstream call, the commit point's read not awaited yet, and `stoppedBy`, set by
 * the one who ends the reply for a reason of the gateway's own (the end of a shutdown's grace period,
 * pipeline/commit-out.ts) before it aborts the call: that error, not a broken upstream, is then the
 * reads' failure.
 */
export interface CommittedReadOpts {
  idleTimeoutMs: number;
  abort: (reason: unknown) => void;
  pendingRead?: Promise<ReadResult>;
  stoppedBy?: HubError;
}

/**
 * The upstream reads of a committed reply under the provider's idle timeout (SPEC 6.4), shared by
 * `replyStream` (pipeline/re-translate.ts) and `pumpEvents` (pipeline/pump-events.ts): `next` (re)arms the idle deadline and starts a read — the commit
 * point's `pendingRead` first, so its chunk comes before any later one; when the deadline comes due while that
 * read waits, the call is aborted and the read cancelled, which settles it. The caller calls `settled`
 * once the read settled: from then until the next `next` no read waits, and a deadline due then
 * does nothing (the client is holding the stream back, e.g. a slow reader over HTTP; the upstream is not
 * the one that is silent), and `next` re-arms it for the full timeout. `failure` is the in-band error of
 * a read that threw (`e`) or of the timeout, once it fired. No promise of its own: each read is still
 * one hop.
 *
 * The reads are also one stream of the keep-alive sweep (pipeline/keep-alive-bound.ts): `took` counts
 * a read that brought more than keep-alives (one in which the driver read an event with content, or
 * a piece of a longer event), and a stream that waits on the upstream for the idle timeout without
 * such a read (an upstream that only pings, or repeats empty events, which renews the deadline) is aborted
 * the same way, with {@link keepAliveOnlyError} as its failure; while `driver` (the reply's) says a
 * server tool is in flight upstream, keep-alives keep it alive longer (keep-alive-bound.ts
 * SERVER_TOOL_IDLE_FACTOR). `disarm` (and `broken`) take it off.
 */
export function committedReads(reader: ByteReader, opts: CommittedReadOpts, driver?: ServerToolSource) {
  /** The idle timeout: a deadline on the shared sweep (pipeline/deadline-sweep.ts), armed by each `next`. */
  let idle: CallbackDeadline | undefined;
  /** The error of the bound that ended the reads (the idle timeout, or only keep-alives for as long). */
  let expired: HubError | undefined;
  let pendingRead = opts.pendingRead;
  const expire = (error: HubError) => {
    expired = error;
    opts.abort(error);
    void reader.cancel().catch(() => {});
  };
  // `waiting` lives on the watch: the sweep reads it too.
  // A server tool in flight (`driver.serverToolRunning`) gives keep-alives the longer bound (keep-alive-bound.ts).
  const watch = new ContentWatch(opts.idleTimeoutMs, (ms, serverTool) => expire(keepAliveOnlyError(ms, serverTool)), driver);
  watch.start();
  const disarm = () => {
    idle?.disarm();
    watch.stop();
  };
  return {
    next(): Promise<ReadResult> {
      watch.waiting = true;
      // arm() also re-arms a deadline that already came due while nothing was read
      idle ??= new CallbackDeadline(() => {
        if (!watch.waiting || expired) return;
        watch.stop();
        expire(idleTimeoutError(opts.idleTimeoutMs));
      });
      idle.arm(opts.idleTimeoutMs);
      const read = pendingRead ?? reader.read();
      pendingRead = undefined;
      return read;
    },
    /**
     * The read from `next` settled with `r` (a chunk or the end); returns whether a bound (the idle
     * timeout, or no content for as long) or the gateway (`opts.stoppedBy`) ended the reads meanwhile.
     */
    settled(r: ReadResult): boolean {
      watch.waiting = false;
      return expired !== undefined || opts.stoppedBy !== undefined;
    },
    /**
     * Before a read goes to `driver`: its count of events with content (`contentEvents`, compared after
     * the push for {@link took}), with a passthrough's tap told whether to look for content in it at all
     * (TapState.looking: only while the keep-alive sweep has seen none since its last pass,
     * ContentWatch.wants).
     */
    look(driver: { readonly contentEvents?: number; readonly tapState?: TapState }): number | undefined {
      const st = driver.tapState;
      if (st === undefined) return driver.contentEvents;
      st.looking = watch.wants();
      return st.contentEvents;
    },
    /**
     * A read's chunk, once `driver` took it, for the keep-alive sweep: `before` is what {@link look}
     * returned for this read. Counted as content when the driver's `contentEvents` changed (it read an
     * event with content: a decoder's events, a passthrough tap's count); for a driver that counts
     * none (`before` undefined), the bytes are counted unless they are only keep-alives.
     */
    took(chunk: Uint8Array, driver: { readonly contentEvents?: number }, before: number | undefined): void {
      if (before === undefined) watch.saw(chunk);
      else watch.sawDecoded(chunk, driver.contentEvents !== before);
    },
    failure(e?: unknown): HubError {
      return expired ?? opts.stoppedBy ?? upstreamBrokenError(e instanceof Error ? e.message : String(e));
    },
    disarm,
    /**
     * A bug in the driver or the delivery (a decoder or encoder that throws on a reply it did not
     * expect): the idle deadline is disarmed, the upstream call aborted and its read cancelled; returns the
     * request's failure, which the caller reports once and hands to `driver.end` for the in-band error.
     */
    broken(e: unknown): HubError {
      disarm();
      opts.abort(e);
      void reader.cancel().catch(() => {});
      // A reply the formats refused to relay further (an event past MAX_SSE_EVENT_BYTES) says so.
      if (e instanceof FormatError) return e.error;
      return hubError("api_error", "The gateway failed while relaying the reply.", { status: 500 });
    },
  };
}

/** A reader that hands every chunk it reads to the flight recorder too (SPEC O-6). */
export function recordedReader(reader: ByteReader, recording: AttemptRecording): ByteReader {
  return {
    async read() {
      const r = await reader.read();
      if (!r.done) recording.bytes(r.value);
      return r;
    },
    cancel: (reason) => reader.cancel(reason),
  };
}
