/**
 * The request context that flows through the pipeline stages (SPEC 3), and the helpers every stage
 * uses to answer with an error in the client's own format.
 */
import { RandomText } from "../formats/random-text.ts";
import { clientErrorStatus, Warnings, type HubError, type HubRequest, type StopReason, type Usage, type Warning, type WireFormat } from "../formats/hub.ts";
import type { Restoration } from "./restore-placeholders.ts";
import { codecFor } from "../formats/index.ts";
import type { Account, ClientKey, FlightRecording, Outcome, ReplyEventSink, RouteTrace } from "./ports.ts";
import type { Target } from "./resolve.ts";
import { ClientHeaders } from "./client-headers.ts";
import { scrubAndCut, TRACE_TEXT_MAX } from "./scrub.ts";
import { RequestText } from "../formats/write-body-json.ts";

/**
 * The client-facing endpoint a request came in on. `gemini` is generateContent and
 * streamGenerateContent (the URL says which); `gemini_count_tokens` is Gemini's `:countTokens`.
 */
export type Endpoint = "chat" | "responses" | "messages" | "count_tokens" | "gemini" | "gemini_count_tokens";

/** Which client format each endpoint speaks. */
export const ENDPOINT_FORMAT: Record<Endpoint, WireFormat> = {
  chat: "openai-chat",
  responses: "openai-responses",
  messages: "anthropic-messages",
  count_tokens: "anthropic-messages",
  gemini: "gemini",
  gemini_count_tokens: "gemini",
};

/** Whether an endpoint only counts tokens (no generation, no usage record). */
export function isCountTokens(endpoint: Endpoint): boolean {
  return endpoint === "count_tokens" || endpoint === "gemini_count_tokens";
}

/**
 * What the pipeline reads of a request besides its body: the URL (a Gemini `?key=`), the headers (the
 * client key, forwarding and session headers, what the executors pass on) and the signal that aborts
 * when the client leaves. A `Request` is one; a transport that is not an HTTP request of its own (a
 * Responses WebSocket frame, SPEC 2.5) makes a plain one.
 */
export interface RequestHead {
  readonly url: string;
  readonly headers: Headers;
  readonly signal: AbortSignal;
}

/**
 * A request body a transport already read and parsed (a Responses WebSocket frame, SPEC 2.5): the JSON
 * object, and its UTF-8 bytes (what the request's `rawBody` would have been), which the transport may
 * make only when they are first read ({@link bodyBytes}): a translated request never reads them. The
 * guard checks the size limit (SPEC G-4) on the text as received (`sent`), and on `maxBytes`, and on
 * `bytes` only when that bound is over the limit; it does not read or parse the body again.
 */
export interface ReceivedBody {
  readonly value: Record<string, unknown>;
  /**
   * The text the client sent the body in, when it has one (a WebSocket frame: its envelope fields,
   * `previous_response_id` and whitespace included): its UTF-8 bytes count against the body limit as an
   * HTTP body's do (SPEC G-4), whatever `bytes` (re-serialised, compact) would measure.
   */
  readonly sent?: string;
  /** The body's UTF-8 bytes (JSON text of `value`). */
  readonly bytes: Uint8Array;
  /** An upper bound of `bytes.byteLength`, known without making the bytes. */
  readonly maxBytes: number;
  /**
   * The text `value`'s members were parsed from beside the object it was parsed into, when the
   * transport has it (a WebSocket frame: formats/write-body-json.ts `RequestText`, docs/performance.md
   * item 167), for the tools memo; read by {@link requestTextOf} while `rawBody` is empty.
   */
  readonly requestText?: RequestText;
}

/**
 * The request body's bytes: `ctx.rawBody` (read by the guard, or re-serialised by redaction), or, while
 * that is empty, the event transport's body ({@link ReceivedBody.bytes}, made on its first read).
 */
export function bodyBytes(ctx: RequestContext): Uint8Array {
  return ctx.received && ctx.rawBody.byteLength === 0 ? ctx.received.bytes : ctx.rawBody;
}

/**
 * The request body's bytes beside the object parsed from them (formats/write-body-json.ts
 * `RequestText`: a tool list of the request found in the tools memo by its bytes, docs/performance.md
 * item 164), made once per request and again if redaction rewrote the body; while `rawBody` is empty
 * (an event transport's body, whose bytes are made only on demand), the transport's own text of it
 * ({@link ReceivedBody.requestText}: a WebSocket frame, item 167), or undefined.
 */
export function requestTextOf(ctx: RequestContext): RequestText | undefined {
  const bytes = ctx.rawBody;
  if (bytes.byteLength === 0) return ctx.received?.requestText;
  let text = ctx.requestText;
  if (text === undefined || text.source !== bytes || text.body !== ctx.body) text = ctx.requestText = new RequestText(ctx.body, bytes);
  return text;
}

/**
 * A request as it arrives: from the HTTP layer, an HTTP `Request` whose body the guard reads; from an
 * event transport, the request's head and the body it parsed already.
 */
export type IncomingRequest = IncomingCommon & ({ request: Request; body?: undefined } | { request: RequestHead; body: ReceivedBody });

/** The fields of an {@link IncomingRequest} that do not depend on how its body arrives. */
export interface IncomingCommon {
  endpoint: Endpoint;
  /** The TCP peer address from the socket (SPEC G-3), never from a header. */
  peer: string | undefined;
  /**
   * Formats that carry the model and the stream mode in the URL, not the body (Gemini,
   * `/v1beta/models/{model}:streamGenerateContent`): the model named there (URL-decoded).
   */
  pathModel?: string;
  /** With {@link pathModel}: whether the URL asked for a streamed reply. */
  pathStream?: boolean;
  /**
   * A refusal the HTTP layer read from the URL alone (Gemini: `:streamGenerateContent` without
   * `?alt=sse`, a method not served), or one an event transport decided itself (a Responses WebSocket
   * frame that is not JSON, names a `previous_response_id` the socket never issued, a warm-up over the
   * body limit: src/http/responses-socket.ts). The guard answers it after the client key's check (a
   * remote caller without a key gets its 401 first), and the request is finished, logged, counted and
   * traced like any other refused request (SPEC O-3, O-4, O-5).
   */
  refusal?: HubError;
  /** How the request arrived when not as an HTTP request of its own: a Responses WebSocket frame (SPEC 2.5). */
  transport?: "websocket";
  /**
   * With an event transport: the sink of the committed reply's events (SPEC 2.5). The reply is then not
   * written as SSE: a 2xx Response carries status and headers only, and the events go to the sink.
   */
  events?: ReplyEventSink;
}

/** State carried through the stages of one request. Times in ms since the epoch. */
export interface RequestContext {
  requestId: string;
  /** Opaque `sy_…` id, resolvable by an admin to the route trace. */
  routeId: string;
  startedAt: number;
  endpoint: Endpoint;
  clientFormat: WireFormat;
  /** The request's head; an HTTP `Request` (whose body the guard reads) unless {@link received} is set. */
  request: RequestHead;
  /**
   * The request's headers taken once, for the stages' reads (client-headers.ts); read them with
   * {@link clientHeadersOf}, which makes them for a context not made by {@link newContext}.
   */
  clientHeaders?: ClientHeaders;
  /** The body as an event transport handed it over, parsed (SPEC 2.5); the guard takes it instead of reading `request`. */
  received?: ReceivedBody;
  peer: string | undefined;
  /** true when the peer is not loopback or a forwarding header is present (SPEC G-1). */
  remote: boolean;
  /** The client key, when one was presented and valid. */
  key?: ClientKey;
  /** Set when the key's limit counters counted this request (SPEC 9.6): it must be settled once when it ends. */
  limitsAdmitted?: boolean;
  /** What the limit counters returned with the admission (a lease, SPEC D-2); handed back to `settle`. */
  limitsTicket?: unknown;
  /**
   * The body bytes exactly as received (re-serialised by redaction); empty when an event transport's
   * body ({@link received}) holds them and redaction did not rewrite it: read them with {@link bodyBytes}.
   */
  rawBody: Uint8Array;
  /** The parsed JSON body (always an object past the guard). */
  body: Record<string, unknown>;
  /** `rawBody` beside `body` for the tools memo, made on first use ({@link requestTextOf}). */
  requestText: RequestText | undefined;
  /**
   * The byte count of the body's bytes once a streamed reply let them go ({@link releaseSentBodies}):
   * what a size-based input estimate reads then (pipeline/key-limits.ts `estimateInputOfRequest`).
   */
  releasedBytes?: number;
  /** The model name the client asked for. */
  requestedModel: string;
  /** Whether the client asked for a streamed reply. */
  stream: boolean;
  /** Chat: the client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  /** The hub form of the body, parsed on first need (translation, predicates). */
  hub?: HubRequest;
  /** Set by the redact stage when it replaced anything: the placeholders to map back in the reply (SPEC S-3). */
  restoration?: Restoration;
  warnings: Warning[];
  trace: RouteTrace;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** Set when the guard answered a Claude Code housekeeping probe locally (SPEC G-5). */
  probe?: ProbeKind;
  /** The flight recorder's hooks for this request (SPEC O-6); undefined while the recorder is off. */
  recording: FlightRecording | undefined;
  /** The model and stream mode named in the URL (Gemini), see {@link IncomingRequest.pathModel}. */
  path?: { model: string; stream: boolean };
  /** The HTTP layer's or the event transport's refusal of the request ({@link IncomingRequest.refusal}). */
  refusal?: HubError;
  /** Set for a request that came as a Responses WebSocket frame (SPEC 2.5). */
  transport?: "websocket";
  /** The event transport's sink of the committed reply ({@link IncomingRequest.events}). */
  events?: ReplyEventSink;
  /**
   * Attempts that failed after their provider reported usage (a whole reply the gateway could not
   * pass on, a stream that broke before its first content): usage the provider bills though the
   * attempt served nothing (SPEC 9.5, O-1). Added to the request's usage row, cost and key limits
   * (src/limits/accounting.ts); set by the commit point ({@link BilledAttempt}), made by the first.
   */
  billed?: BilledAttempt[];
}

/** A failed attempt's target and the usage its provider reported for it ({@link RequestContext.billed}). */
export interface BilledAttempt {
  readonly target: Target;
  /** The account the attempt was made with (its usage is counted under it, src/limits/accounting.ts). */
  readonly accountId?: string;
  readonly usage: Usage;
}

/** Which Claude Code housekeeping probe a request is (SPEC G-5; recognised by probes.ts). */
export type ProbeKind = "quota" | "warmup" | "topic" | "title";

/**
 * How a finished request is reported to the application (usage row, trace, log line, metrics): once
 * per request, when its reply is complete, failed, or the client left.
 */
export interface Finished {
  outcome: Outcome;
  status: number;
  /** The target and account that served, or of the last failed attempt; none when no attempt was made. */
  target?: Target;
  account?: Account;
  /** Token usage of the reply (as reported by the provider, else as estimated while streaming); none without a reply. */
  usage?: Usage;
  /** Whether the provider reported usage at all (false: the numbers are estimates or zero). */
  usageSeen?: boolean;
  /**
   * The reply's driver, for the characters of text, reasoning and tool arguments that reached the
   * client (`outputChars`): what the output of a reply without usage, or cut before its provider's
   * finish (`stopReason` null), is estimated from. Read it only then (a passthrough counts them when
   * read, pipeline/output-estimate.ts).
   */
  reply?: { readonly outputChars: number; readonly stopReason?: StopReason | null; readonly lateError?: HubError };
  /** ms since the epoch of the first byte written, if any. */
  firstByteAt?: number;
  /** Bytes of the reply body handed to the client after the commit point (metrics, SPEC O-3). */
  bytesSent?: number;
  attempts: number;
  fallback: boolean;
  /**
   * The error code of a reply that streamed and was then ended by the gateway itself: `gateway_stopping`
   * for a stream still open at the end of a shutdown's grace period (SPEC D-3; outcome `error`, status
   * 200, its in-band error pipeline/committed-reads.ts gatewayStoppingStreamError). The log line's
   * `code`; absent otherwise (a request served no reply has its code in `RouteTrace.error`).
   */
  code?: string;
}

/**
 * Writes the in-band error a served reply ended with after the commit point (SPEC 6.4: a cut stream, an
 * upstream's in-band error, an event that is not JSON; the reply driver's `lateError`) as the serving
 * attempt's `error`, so the route trace of an `upstream_error` reply (`calls inspect`, the dashboard's
 * call view) says why it broke off; `RouteTrace.error` stays for requests served no reply. An attempt
 * that has an error already keeps it. The text (the error's `traceMessage` when it has one: words the
 * client's message cut, formats/sse.ts errorEventNotJson) is scrubbed of `secrets` (the instance's and the key the
 * request presented) and credential shapes as a whole, then cut to 300 characters (scrub.ts
 * scrubAndCut, TRACE_TEXT_MAX): an in-band error may echo a credential.
 */
export function noteLateError(trace: RouteTrace, error: HubError | undefined, secrets: Iterable<string> = []): void {
  const served = trace.attempts.at(-1);
  if (served && error && served.error === undefined) served.error = scrubAndCut(error.traceMessage ?? error.message, TRACE_TEXT_MAX, secrets);
}

/**
 * Whether an address is loopback: 127.0.0.0/8, ::1, or an IPv4-mapped loopback (::ffff:127.x.y.z).
 * An undefined address (no socket information) is not loopback.
 */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  if (address === "::1") return true;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4.startsWith("127.");
}

/** Header sets of requests whose `Origin` the HTTP layer found trustworthy (SPEC 2.6, G-6). */
const vouchedOrigins = new WeakSet<Headers>();

/**
 * Records that the HTTP layer checked this request's `Origin` and found it to be the gateway's own
 * origin or an entry of `server.cors_origins` (SPEC 2.6): such a request keeps the loopback exemption.
 * Call it with the request's own `request.headers` object (the same object every reader sees).
 */
export function vouchForOrigin(headers: Headers): void {
  vouchedOrigins.add(headers);
}

/**
 * Whether a request counts as remote (SPEC G-1, G-3, G-6): its TCP peer is not loopback, or it carries
 * `X-Forwarded-For` / `X-Real-IP` / `Forwarded` (a local reverse proxy forwarding someone else; RFC 7239's
 * `Forwarded` is the only one HAProxy's `option forwarded` and some Envoy and nginx setups send), or it carries an
 * `Origin` (a web page sent it) that the HTTP layer has not vouched for with {@link vouchForOrigin}.
 * An unvouched `Origin` counts as remote whatever it says, so a path that skipped the origin check
 * still gives web pages no loopback exemption. `Host` is never consulted.
 */
export function isRemote(peer: string | undefined, headers: Headers | ClientHeaders): boolean {
  return (
    !isLoopback(peer) ||
    headers.has("x-forwarded-for") ||
    headers.has("x-real-ip") ||
    headers.has("forwarded") ||
    (headers.has("origin") && !vouchedOrigins.has(headers instanceof ClientHeaders ? headers.raw : headers))
  );
}

/** The request's headers as the stages read them ({@link RequestContext.clientHeaders}, made on first use). */
export function clientHeadersOf(ctx: RequestContext): ClientHeaders {
  return (ctx.clientHeaders ??= new ClientHeaders(ctx.request.headers));
}

/** Mints the ids of a request. */
export interface Ids {
  /** The request id (`X-Request-Id`). */
  request: () => string;
  /** The opaque route id (`X-Switchyard-Route-Id`). */
  route: () => string;
}

/** The last minting time read ({@link timeHex}) and its 12 hex chars. */
let lastMs = -1;
let lastHex = "";

/**
 * 12 lowercase hex chars: the current time in ms since the epoch (48 bits). Ids that start with it sort
 * (as text, byte order, as SQLite compares them) in the order they were minted, so the store's indexes
 * on them (usage by request id, traces by route id) grow at their end instead of at random pages. The
 * text is made once per millisecond (a request's two ids, and under load several requests, share it).
 */
function timeHex(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastHex = ms.toString(16).padStart(12, "0");
  }
  return lastHex;
}

/** 6 random bytes per request id (12 hex chars), 18 per route id (24 base64url chars). */
const REQUEST_RANDOM = new RandomText(6, 12, "hex");
const ROUTE_RANDOM = new RandomText(18, 24, "base64url");

/**
 * Default id minting: `req_` + 24 hex chars (12 of time, 12 random), `sy_` + 36 chars (12 hex of time,
 * then 18 random bytes as 24 base64url chars: opaque and unguessable). Both sort by the time they were
 * minted.
 */
export const defaultIds: Ids = {
  request: () => "req_" + timeHex() + REQUEST_RANDOM.next(),
  route: () => "sy_" + timeHex() + ROUTE_RANDOM.next(),
};

/**
 * The raw body of a context whose body is not read yet: one empty array shared by every context (a
 * zero-length view holds nothing that could be changed; the guard and redaction replace it, never write
 * into it), not a `Uint8Array` per request (docs/performance.md item 241).
 */
const NO_BYTES = new Uint8Array(0);

/**
 * Lets go of the request's bytes once its reply streams on past the commit point (no other attempt
 * will send them: SPEC 6.1 falls back only before the first byte), so that a long stream does not keep
 * them alive for minutes (issue 17: they survive eden collections, are promoted and die in the old
 * generation; docs/performance.md item 271): the attempt's upstream body (`translated.body`, sent),
 * and, unless something still reads them at the reply's end, the client's body bytes (`ctx.rawBody`)
 * and their tools-memo text. Kept for a Responses client (its reply echoes the request, read through
 * {@link requestTextOf}) and while the flight recorder records (it copies the client's body when the
 * request ends). The parsed body (and hub form) stay: the input estimate of a reply without usage reads
 * them when the request ends; `releasedBytes` keeps the size for the estimate of a body that does not
 * parse.
 */
export function releaseSentBodies(ctx: RequestContext, translated: { body: string | Uint8Array }): void {
  translated.body = NO_BYTES;
  if (ctx.clientFormat === "openai-responses" || ctx.recording !== undefined || ctx.rawBody.byteLength === 0) return;
  ctx.releasedBytes = ctx.rawBody.byteLength;
  ctx.rawBody = NO_BYTES;
  ctx.requestText = undefined;
  if (ctx.hub !== undefined) ctx.body = RELEASED_BODY;
}

/** The parsed body of a context {@link releaseSentBodies} let go of: empty, and frozen so that a late write throws instead of going unseen. */
const RELEASED_BODY: Record<string, unknown> = Object.freeze({});

/**
 * A fresh context for an incoming request, as the gateway starts every request: ids minted, the client
 * format from the endpoint, `remote` from the peer and forwarding headers, the route trace begun. The
 * body fields (raw body, parsed body, model, stream) stay empty until the guard reads the body.
 */
export function newContext(incoming: IncomingRequest, now: number, ids: Ids = defaultIds): RequestContext {
  const requestId = ids.request();
  const routeId = ids.route();
  const clientFormat = ENDPOINT_FORMAT[incoming.endpoint];
  const clientHeaders = new ClientHeaders(incoming.request.headers);
  // One list for the request's warnings and its trace's (which `finish` sets to the request's anyway):
  // not a second array per request that is thrown away (docs/performance.md item 254).
  const warnings: Warning[] = [];
  const trace: RouteTrace = {
    routeId,
    requestId,
    ts: now,
    clientFormat,
    requestedModel: "",
    candidates: [],
    decisions: [],
    attempts: [],
    warnings,
  };
  const ctx: RequestContext = {
    requestId,
    routeId,
    startedAt: now,
    endpoint: incoming.endpoint,
    clientFormat,
    request: incoming.request,
    clientHeaders,
    peer: incoming.peer,
    remote: isRemote(incoming.peer, clientHeaders),
    rawBody: NO_BYTES,
    body: {},
    requestText: undefined,
    requestedModel: "",
    stream: false,
    includeUsage: false,
    warnings,
    trace,
    signal: incoming.request.signal,
    recording: undefined,
  };
  // Set only when present (no spread of a conditional object per request).
  if (incoming.pathModel !== undefined) ctx.path = { model: incoming.pathModel, stream: incoming.pathStream === true };
  if (incoming.refusal) ctx.refusal = incoming.refusal;
  if (incoming.transport) ctx.transport = incoming.transport;
  if (incoming.events) ctx.events = incoming.events;
  if (incoming.body) ctx.received = incoming.body;
  return ctx;
}

/**
 * The headers every answer to this request carries (SPEC 2.4: `X-Request-Id`, `X-Switchyard-Route-Id`),
 * as a new Headers for one response to add its own to. Made when a response is (not when the request
 * starts: one Headers per request, not a template and its copy). Made empty and set field by field:
 * Bun's `Headers` built from an object literal reads the literal's properties through the generic path
 * (0.2–0.4 µs more per request in a loop, ~3.6 µs in the running server's profile: docs/performance.md
 * item 130).
 */
export function responseHeaders(ctx: RequestContext): Headers {
  const headers = new Headers();
  headers.set("x-request-id", ctx.requestId);
  headers.set("x-switchyard-route-id", ctx.routeId);
  return headers;
}

/** The `X-Switchyard-Warning` value, bounded: see pipeline/warning-header.ts. */
export { warningHeader } from "./warning-header.ts";

/**
 * The response header the official OpenAI and Anthropic SDKs obey before their own retry rules
 * (openai-node and anthropic-sdk-typescript `shouldRetry`: `x-should-retry: false` → no retry, whatever
 * the status; otherwise a 429 is retried twice by default, each try reaching the gateway).
 */
export const NO_RETRY_HEADER = "x-should-retry";

/**
 * The error answer of a request that no reply served (a refusal, or the last error after every target
 * failed): records it in the route trace (`RouteTrace.error`, so the operator sees why in `calls inspect`
 * and the dashboard) and builds it in the client's format ({@link errorResponse}). Call it before
 * `finish` (which hands the trace over).
 */
export function errorAnswer(ctx: RequestContext, err: HubError, headers: Headers = responseHeaders(ctx)): Response {
  const t: RouteTrace["error"] = { status: clientErrorStatus(ctx.clientFormat, err.status, err.operatorOnly), kind: err.kind, message: err.message };
  if (err.code !== undefined) t.code = err.code;
  if (err.param !== undefined) t.param = err.param;
  ctx.trace.error = t;
  const { response, body } = errorReply(ctx.clientFormat, err, headers);
  // What the client read: its format's type and code, not the hub kind (tryout5 saw "500 api_error" for a Chat client's server_error).
  const e = (body as { error?: unknown } | undefined)?.error;
  if (e && typeof e === "object") {
    const o = e as Record<string, unknown>;
    const type = typeof o.type === "string" ? o.type : typeof o.status === "string" ? o.status : undefined;
    if (type !== undefined) t.clientType = type;
    if (typeof o.code === "string") t.clientCode = o.code;
  }
  return response;
}

/**
 * Builds an error Response in `format` (SPEC 2.4 headers included). Never a stack trace, never HTML.
 * The status is `err.status` as {@link clientErrorStatus} has it for the format (the body's own code
 * too: Gemini writes it). `Retry-After` is set from `err.retryAfterSeconds` when present. A request's own refusal (its headers
 * carry a route id) says `X-Switchyard-Cache: miss` unless the attempt loop set it: no account served
 * it, so no binding was used (SPEC 2.4, every response).
 */
export function errorResponse(format: WireFormat, err: HubError, headers?: Headers): Response {
  return errorReply(format, err, headers).response;
}

/**
 * The `WWW-Authenticate` challenge of every 401 the gateway answers itself (RFC 9110 15.5.2: a 401 MUST
 * carry one; RFC 6750 3 names the scheme): `Bearer`, in every client format, since every route takes
 * `Authorization: Bearer KEY` (guard.ts `presentedKey`) next to its clients' own header (`x-api-key` for
 * Anthropic's, `x-goog-api-key` or `?key=` for Gemini's), for which no challenge scheme is registered.
 * The admin API and the dashboard's sign-in send it too.
 */
export const WWW_AUTHENTICATE = 'Bearer realm="switchyard"';

/** {@link errorResponse} with the body object it sent (for the route trace's record of what the client read). */
function errorReply(format: WireFormat, err: HubError, headers?: Headers): { response: Response; body: unknown } {
  const status = clientErrorStatus(format, err.status, err.operatorOnly);
  if (status !== err.status) err = { ...err, status };
  const h = new Headers(headers);
  if (err.operatorOnly) h.set(NO_RETRY_HEADER, "false");
  h.set("content-type", "application/json");
  if (err.status === 401 && !h.has("www-authenticate")) h.set("www-authenticate", WWW_AUTHENTICATE);
  if (!h.has("x-switchyard-cache") && h.has("x-switchyard-route-id")) h.set("x-switchyard-cache", "miss");
  if (err.retryAfterSeconds !== undefined && err.retryAfterSeconds > 0) {
    h.set("retry-after", String(Math.ceil(err.retryAfterSeconds)));
  }
  const body = codecFor(format).errorBody(err);
  return { response: new Response(JSON.stringify(body), { status: err.status, headers: h }), body };
}

/** Lazily parses the hub form of the client body. Throws FormatError on invalid input. */
export function hubOf(ctx: RequestContext): HubRequest {
  if (!ctx.hub) {
    const codec = codecFor(ctx.clientFormat);
    if (!codec.parseRequest) throw new Error(`${ctx.clientFormat} is not a client format`);
    ctx.hub = codec.parseRequest(ctx.body);
    // Gemini names the model in the URL, not the body.
    if (!ctx.hub.model) ctx.hub.model = ctx.requestedModel;
  }
  return ctx.hub;
}

/**
 * {@link hubOf} for the stages that can do without the parsed body (affinity key, encoder options,
 * order facts): undefined instead of a throw when the body cannot be parsed; `onError` gets the error.
 */
export function tryHubOf(ctx: RequestContext, onError?: (e: unknown) => void): HubRequest | undefined {
  try {
    return hubOf(ctx);
  } catch (e) {
    onError?.(e);
    return undefined;
  }
}

/** Adds a warning once (by code and message) to the request. */
export function warn(ctx: RequestContext, w: Warning): void {
  new Warnings(ctx.warnings).add(w.code, w.message);
}
