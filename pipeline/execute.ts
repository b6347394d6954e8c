/**
 * execute (SPEC R-7): one upstream call for one target on one account. The provider executor
 * (src/providers, one per kind) owns URLs, auth, the allow-listed forwarded headers (P-3), provider
 * fixes (P-2) and the outbound proxy (P-4); this stage owns the header timeout and cancellation.
 */
import type { GraceEnd, StoppableCall } from "./grace-end.ts";
import type { WireFormat } from "../formats/hub.ts";
import type { ClientHeaders } from "./client-headers.ts";
import type { Account, Credential, ProviderInfo } from "./ports.ts";
import { Deadline } from "./deadline-sweep.ts";

/** Everything an executor needs for one call. */
export interface UpstreamCall {
  provider: ProviderInfo;
  account: Account;
  /** Upstream model id. */
  model: string;
  /** The request body to send, serialised. */
  body: string | Uint8Array;
  /** Whether the body asks for a stream (Gemini picks the streaming URL from it). */
  stream: boolean;
  /** The wire format of the call (a provider of kind `openai` speaks Chat and Responses). */
  upstreamFormat: WireFormat;
  /** The client's format: format-specific client headers are forwarded only to the same format. */
  clientFormat: WireFormat;
  /** The client's headers (the request's, or as taken once by the pipeline); the executor forwards only its allow-list. */
  clientHeaders: Headers | ClientHeaders;
  /**
   * The endpoint called: the format's model call when absent; `count_tokens` is the format's token
   * count (Anthropic `/v1/messages/count_tokens`, Gemini `/v1beta/models/{model}:countTokens`; SPEC
   * 2.1), same auth and headers.
   */
  endpoint?: "count_tokens";
  /** Kind `codex`: the prompt-cache key the body carries, sent as `session_id` too (pipeline/translate.ts). */
  promptCacheKey?: string;
  /**
   * `anthropic-beta` values (prefixes) of the client's header not forwarded: the body was tidied of what
   * they enable (pipeline/translate.ts `Translated.droppedBetas`). Absent: the client's betas go as sent.
   */
  droppedBetas?: readonly string[];
  /**
   * The W3C `traceparent` of this attempt while spans are exported (pipeline/trace-context.ts); it
   * replaces the client's, which is forwarded as sent otherwise (SPEC O-5, P-3).
   */
  traceparent?: string;
  /** Aborts the call (client gone, header timeout, idle timeout). */
  signal: AbortSignal;
}

/**
 * The upstream's answer, headers received, body not yet read. Read only: a fetch `Response` is one (its
 * `status`, `headers`, `body` and `url`; the HTTP executor hands an API-key call's `Response` on as it
 * is, docs/performance.md item 264), and its fields are getters that cannot be set.
 */
export interface UpstreamReply {
  status: number;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
  /**
   * The credential the call carried when it differs from `account.credential` or is OAuth (a token
   * refreshed before the call): lets a 401 tell a revoked current token from a replaced one (P-7).
   */
  credential?: Credential;
  /** The URL called, when the executor tells (an error names its path only, never its query string). */
  url?: string;
  /**
   * true when the body is an event stream though its Content-Type does not say so (read from its first
   * bytes by pipeline/sse-sniff.ts): the commit point reads it as SSE.
   */
  sse?: boolean;
  /**
   * Set when pipeline/sse-sniff.ts waited its whole time for the first bytes of an unlabelled reply:
   * `since`, performance.now() of the last bytes it read (or of its start), and `held`, how many chunks
   * it read (the body gives them back first). The commit point's idle deadline counts from `since` (the
   * silence already waited counts) until the body reads past those chunks.
   */
  quiet?: { since: number; held: number };
}

/**
 * A provider executor. `send` resolves when response headers arrive; it rejects with
 * {@link TransportError} when the connection fails (refused, reset, DNS, TLS) or the signal aborts.
 * `send` need not be async: it may also throw synchronously (src/providers/index.ts HttpExecutor
 * returns fetch's promise as it is: building the URL or headers, or fetch itself, may throw at the call), so a caller
 * calls it inside the `try` that handles its rejection (both do: {@link executeCall} and
 * attempt-loop.ts `attemptOnce`).
 */
export interface Executor {
  send(call: UpstreamCall): Promise<UpstreamReply>;
}

/** Finds the executor for a provider. */
export type ExecutorFor = (provider: ProviderInfo) => Executor;

/** A failure below HTTP: no status was received. */
export class TransportError extends Error {
  constructor(
    readonly reason: "connect" | "reset" | "header_timeout" | "aborted" | "other",
    message: string,
  ) {
    super(message);
    this.name = "TransportError";
  }
}

/** Listener options of the parent-signal listener (one object for every call). */
const ONCE: AddEventListenerOptions = { once: true };

/** A call whose response headers arrived: the reply, the controller that aborts the call, and its listener on the client's signal. */
export interface SentCall {
  readonly reply: UpstreamReply;
  /** Aborts the upstream call later (client disconnect, idle timeout). */
  readonly controller: AbortController;
  readonly clientAbort: ClientAbort;
}

/**
 * A call's one listener on the client's signal (SPEC 6.4): when the signal aborts it aborts the upstream
 * call with the signal's reason and then runs {@link onAbort}, which the commit point sets for a streamed
 * reply (its end as `client_closed`, pipeline/commit.ts) and clears when the reply ends. A streamed reply
 * thus needs no second listener on the signal (docs/performance.md item 121). The listener stays on the
 * signal after the call's headers arrive (the upstream call lasts as long as its reply); it is removed
 * when the call fails before them. It is also the call's header deadline (a {@link Deadline} on the shared
 * sweep, not a timer: docs/performance.md item 235) and, once the headers arrived, the {@link SentCall}
 * that {@link executeCall} returns (`clientAbort` is itself): one object per call instead of a result
 * record and a timer closure (item 227).
 */
export class ClientAbort extends Deadline implements EventListenerObject, SentCall, StoppableCall {
  /** Run after the upstream call is aborted when the client's signal aborts; undefined: nothing more. */
  onAbort: (() => void) | undefined = undefined;
  /** The upstream's reply; set by {@link executeCall} when its headers arrived (read only after that). */
  reply: UpstreamReply = undefined as unknown as UpstreamReply;
  /** Whether the header timeout fired. */
  timedOut = false;

  constructor(
    readonly controller: AbortController,
    private readonly parent: AbortSignal,
    /** The header timeout of the call, ms (SPEC 6.3); named in its error. */
    readonly headerTimeoutMs = 0,
    /** The gateway's end of a shutdown's grace period ({@link executeCall}'s `stop`), watching this call until {@link unstop}. */
    readonly stop?: GraceEnd,
  ) {
    super();
  }

  /** The `abort` event of the client's signal. */
  handleEvent(): void {
    this.controller.abort(this.parent.reason);
    this.onAbort?.();
  }

  /** {@link StoppableCall.stopNow}: the grace period ended while this call waited (the upstream call is aborted, nothing more). */
  stopNow(): void {
    this.controller.abort(this.stop?.signal.reason);
  }

  /** Leaves `stop`'s watch: the reply committed (a stream has its own shutdown end), or the call is over. */
  unstop(): void {
    this.stop?.unwatch(this);
  }

  /** {@link SentCall.clientAbort}: this listener. */
  get clientAbort(): ClientAbort {
    return this;
  }

  /**
   * The call failed before its headers arrived (`e`, what the send rejected with): the listener leaves
   * the client's signal and `stop`'s watch, and the answer is the {@link TransportError} to throw: a
   * header timeout, the client gone, the gateway's shutdown, or the failure classified.
   */
  failed(e: unknown): TransportError {
    this.parent.removeEventListener("abort", this);
    this.unstop();
    if (this.timedOut) return new TransportError("header_timeout", `no response headers within ${this.headerTimeoutMs} ms`);
    if (this.parent.aborted) return new TransportError("aborted", "the client went away");
    if (this.stop?.over) return new TransportError("aborted", "the gateway is shutting down");
    if (e instanceof TransportError) return e;
    return new TransportError(classifyFetchError(e), e instanceof Error ? e.message : String(e));
  }

  /** The call's header deadline (SPEC 6.3): no response headers within the provider's time aborts it. */
  expire(): void {
    this.timedOut = true;
    this.controller.abort(new TransportError("header_timeout", `no response headers within ${this.headerTimeoutMs} ms`));
  }
}

/**
 * Sends one call with a header timeout (SPEC 6.3: 60 s by default, per provider). The returned
 * controller aborts the upstream call later (client disconnect, idle timeout); aborting the parent
 * signal aborts it too, through the returned {@link ClientAbort} (registered on `parent` unless it had
 * aborted already, when the call is aborted at once and no listener is added). `stop` (the end of a
 * shutdown's grace period, SPEC D-3) aborts the call as well, until the caller calls
 * {@link ClientAbort.unstop} on the returned call (when its reply committed or it is done with it); a call
 * that fails is no longer listening. `call` is sent as it is, not copied: its `signal` is set to the
 * call's own (callers make a fresh object per call). Rejects with a {@link TransportError}. The attempt
 * loop takes these steps itself ({@link startCall}, {@link ClientAbort.failed}): one async layer fewer
 * per attempt (docs/performance.md item 263).
 */
export async function executeCall(
  executor: Executor,
  call: Omit<UpstreamCall, "signal"> & { signal?: AbortSignal },
  parent: AbortSignal,
  headerTimeoutMs: number,
  stop?: GraceEnd,
): Promise<SentCall> {
  const clientAbort = startCall(call, parent, headerTimeoutMs, stop);
  try {
    clientAbort.reply = await executor.send(call as UpstreamCall);
    return clientAbort;
  } catch (e) {
    throw clientAbort.failed(e);
  } finally {
    clientAbort.disarm();
  }
}

/**
 * {@link executeCall}'s steps before the send: the call's controller, its listener on `parent` (or the
 * call aborted at once when `parent` has aborted), its watch by `stop`, its header deadline armed, and
 * `call.signal` set to the controller's. The caller then sends `call`, sets the returned call's `reply`
 * when the headers arrive, throws {@link ClientAbort.failed} of a failure, and disarms it either way.
 */
export function startCall(
  call: Omit<UpstreamCall, "signal"> & { signal?: AbortSignal },
  parent: AbortSignal,
  headerTimeoutMs: number,
  stop?: GraceEnd,
): ClientAbort {
  const controller = new AbortController();
  const clientAbort = new ClientAbort(controller, parent, headerTimeoutMs, stop);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener("abort", clientAbort, ONCE);
  if (stop !== undefined && !stop.watch(clientAbort)) controller.abort(stop.signal.reason);
  clientAbort.arm(headerTimeoutMs);
  call.signal = controller.signal;
  return clientAbort;
}

/** Maps a fetch failure to a transport reason. */
export function classifyFetchError(e: unknown): TransportError["reason"] {
  const code = (e as { code?: string })?.code ?? "";
  const msg = e instanceof Error ? e.message : String(e);
  if (code === "ConnectionRefused" || /ECONNREFUSED|Unable to connect|ConnectionRefused/i.test(msg)) return "connect";
  if (code === "ECONNRESET" || /reset|socket.*closed|ConnectionClosed/i.test(msg)) return "reset";
  return "other";
}
