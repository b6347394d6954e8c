/**
 * guard (SPEC 3, G-1…G-5): who may call, how big the body may be, whether it is JSON, and the client
 * quirks that are answered before routing.
 */
import { hubError, type HubError, type WireFormat } from "../formats/hub.ts";
import { concatBytes } from "../formats/sse.ts";
import { clientHeadersOf, errorAnswer, type ReceivedBody, type RequestContext } from "./context.ts";
import type { HeaderReader } from "./client-headers.ts";
import { checkKeyLimits } from "./key-limits.ts";
import type { RoutingTable, Target } from "./resolve.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../formats/json-depth.ts";
import { topLevelStringField } from "../formats/json-prefix-field.ts";
import { responsesFieldError } from "../formats/openai-responses/parse.ts";
import type { ClientKey, DecodeBody, DecodeFailure, KeyLimitCounters, KeyLookup } from "./ports.ts";
import { probeResponse, recogniseProbe } from "./probes.ts";
import { CallbackDeadline, Deadline } from "./deadline-sweep.ts";
import { CLIENT_KEY_PLACEHOLDERS } from "./scrub.ts";

/** Guard settings. */
export interface GuardSettings {
  /** SPEC G-1: keys required even from loopback. */
  requireApiKey: boolean;
  /** SPEC G-4: body limit in bytes (default 32 MiB). */
  maxBodyBytes: number;
  /**
   * How long the whole body may take to arrive once the guard starts reading it, in ms (default
   * {@link DEFAULT_BODY_TIMEOUT_MS}); a body still incomplete then is a 408 and the connection is closed.
   */
  bodyTimeoutMs?: number;
}

/**
 * Default of `server.body_timeout_ms`: 120 s, enough for a 32 MiB body at ~2.3 Mbit/s. The server's idle
 * timer is off while a request is in flight (a stream may be silent for minutes, src/http/keep-alive.ts),
 * so this is what frees a connection whose declared body never fully arrives.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 120_000;

/**
 * The key a request presents: `Authorization: Bearer KEY` or `x-api-key: KEY` (SPEC G-2); for the
 * Gemini routes also `x-goog-api-key: KEY` or `?key=KEY` in the URL (SPEC 2.1, how Gemini clients send
 * their key). Pass `url` only for Gemini routes.
 */
export function presentedKey(headers: HeaderReader, url?: string): string | undefined {
  const auth = headers.get("authorization");
  if (auth) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1].trim();
  }
  const x = headers.get("x-api-key");
  if (x) return x.trim();
  if (url === undefined) return undefined;
  const g = headers.get("x-goog-api-key");
  if (g) return g.trim();
  const q = url.indexOf("?");
  if (q < 0) return undefined;
  const key = new URLSearchParams(url.slice(q + 1)).get("key");
  return key ? key.trim() : undefined;
}

/** Result of the authentication decision. */
export type AuthDecision = { ok: true; key?: ClientKey } | { ok: false; error: HubError; /** the disabled key's name, when it was refused for that */ disabledKey?: string };

/** The decision of a request let through without a key: one record for every such request (nothing writes into a decision). */
const PASSED_WITHOUT_KEY: AuthDecision = Object.freeze({ ok: true });

/** The 403 `key_disabled`'s message for the client key `name` (the guard's, and the dry run's for that key). */
export function keyDisabledMessage(name: string): string {
  return `Client key ${JSON.stringify(name)} is disabled on this gateway for now: its requests are refused until an operator enables it again (switchyard keys enable ${name}).`;
}

/**
 * SPEC G-1/G-2: a local request (loopback peer, no forwarding headers) passes without a key unless keys
 * are required; a key it presents anyway is used for attribution when valid and ignored when not (local
 * tools often send a placeholder). Everything else needs a valid key: an unknown or revoked one is a 401
 * `invalid_api_key` (a placeholder key is told it is one: {@link refusalMessage}). A disabled key (`KeyLookup.disabled`) is a 403 `key_disabled` naming it, from
 * loopback too. `url` is given for the Gemini
 * routes ({@link presentedKey}): a refusal there names the Gemini ways to send a key.
 */
export function authenticate(remote: boolean, headers: HeaderReader, keys: KeyLookup, settings: GuardSettings, url?: string): AuthDecision {
  const secret = presentedKey(headers, url);
  const key = secret ? keys.lookup(secret) : undefined;
  if (key) return { ok: true, key };
  // A key an operator disabled for a while (`switchyard keys disable NAME`) is refused from loopback too:
  // unlike an unknown or revoked key (which a local tool's placeholder cannot be told from) it names the
  // client the operator stopped. Not a 401 that reads as a wrong key (clients then ask for a new one),
  // but a 403 saying what happened and how it ends.
  const off = secret ? keys.disabled?.(secret) : undefined;
  if (off) return { ok: false, error: hubError("permission", keyDisabledMessage(off.name), { code: "key_disabled" }), disabledKey: off.name };
  if (!remote && !settings.requireApiKey) return PASSED_WITHOUT_KEY;
  return { ok: false, error: hubError("authentication", refusalMessage(secret, url !== undefined, settings.requireApiKey), { code: "invalid_api_key" }) };
}

/**
 * The 401's message for the key a refused request presented (`secret`, undefined for none); `gemini`
 * for the Gemini routes, whose clients send it otherwise; `required` when `require_api_key` is on (else
 * the request was refused for coming from another machine). A placeholder ({@link CLIENT_KEY_PLACEHOLDERS}:
 * what `switchyard setup` writes, or README's examples send, when there is no client key) is answered as
 * no key is, saying what it is and how to get a real one: after an operator turns `require_api_key` on,
 * such a client never had a key that could be "not valid … or revoked" (try19 D5).
 */
function refusalMessage(secret: string | undefined, gemini: boolean, required: boolean): string {
  if (secret !== undefined && !CLIENT_KEY_PLACEHOLDERS.includes(secret)) {
    return "The API key is not valid for this gateway: it is not one of its client keys, or it was revoked (switchyard keys list shows them; switchyard keys create NAME makes one).";
  }
  const how = gemini
    ? "x-goog-api-key: KEY or ?key=KEY, as Gemini clients do (GEMINI_API_KEY for Gemini CLI and @google/genai), or as Authorization: Bearer KEY"
    : "Authorization: Bearer KEY or x-api-key: KEY";
  if (secret === undefined) return `An API key is required: send a client key of this gateway as ${how} (switchyard keys create NAME makes one).`;
  return (
    `An API key is required: ${required ? "this gateway now requires a client key" : "a request from another machine needs a client key"}, and ${JSON.stringify(secret)} is the placeholder switchyard setup writes (and the README's examples send) when there is none. ` +
    `Ask the gateway's operator for a client key (switchyard keys create NAME makes one) and run switchyard setup claude-code|codex|gemini --client-key KEY, or send it as ${how}.`
  );
}

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });

/** What a body read that ran out of time resolves to (never a body). */
const TIMED_OUT = Symbol("body timed out");

/**
 * A native body read (`request.bytes()`, for a body with a declared length within the limit) raced
 * against its deadline on the shared sweep: {@link settled} resolves with the bytes, with
 * {@link TIMED_OUT} when the deadline came first, or with the read's failure (it never rejects), and
 * {@link outcome} turns that into the bytes or the error. The deadline, the race and its answer are one
 * object (no promise executor, scope and expiry function: docs/performance.md item 242), awaited by the
 * caller itself (the gateway's `handle`, from {@link startGuard}: no async function of its own per
 * request, items 256 and 280).
 */
export class BodyRead extends Deadline {
  /** The race: the bytes, {@link TIMED_OUT}, or the read's failure (anything else). */
  readonly settled: Promise<unknown>;
  private readonly resolve: (value: unknown) => void;

  constructor(
    read: Promise<Uint8Array>,
    private readonly timeoutMs: number,
  ) {
    super();
    const race = Promise.withResolvers<unknown>();
    this.settled = race.promise;
    this.resolve = race.resolve;
    this.arm(timeoutMs);
    read.then(race.resolve, race.resolve);
  }

  /** {@link Deadline.expire}: the race ends as timed out (a read that settled first keeps its value). */
  expire(): void {
    this.resolve(TIMED_OUT);
  }

  /** What {@link settled} resolved with, as the bytes or the error (the 408, or the 400 of a read that failed); disarms the deadline. */
  outcome(settled: unknown): Uint8Array | HubError {
    this.disarm();
    if (settled instanceof Uint8Array) return settled;
    return settled === TIMED_OUT ? timedOut(this.timeoutMs) : unreadable();
  }
}

/** The 400 of a body that failed to arrive (the client closed). */
function unreadable(): HubError {
  return hubError("invalid_request", "The request body could not be read.");
}

/**
 * The start of {@link readBody}: the 413 when the declared length is over `limit`; a {@link BodyRead}
 * begun when a length within it is declared (the server reads no more than it: read natively, without a
 * JS stream reader, ~20 µs less per request, docs/performance.md; raced against the sweep, since Bun
 * cannot say whether the body is already complete: the read is pending either way, for at least one turn
 * of the event loop); undefined when no usable length is declared (the body is read as a stream).
 */
function startBodyRead(request: Request, limit: number, timeoutMs: number): BodyRead | HubError | undefined {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) return tooLarge(limit);
  // `bytes()`: the body as a Uint8Array at once, not an ArrayBuffer wrapped in one more object (item 224).
  if (declared !== null && /^\d+$/.test(declared)) return new BodyRead(request.bytes(), timeoutMs);
  return undefined;
}

/**
 * Reads a request body up to `limit` bytes within `timeoutMs` ms. Returns the bytes, or a 413 error when
 * the declared or actual size exceeds the limit (SPEC G-4), or a 408 (`request_timeout`) when the body
 * has not fully arrived `timeoutMs` (up to one sweep period later: pipeline/deadline-sweep.ts) after the read began (a
 * declared Content-Length larger than what is sent, a chunked body that stalls): the caller answers it
 * with `Connection: close`, which frees the connection (the server itself has no idle timeout: replies
 * may be silent for minutes). A body that fails to arrive otherwise (the client closed) is a 400.
 */
export async function readBody(request: Request, limit: number, timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS): Promise<Result<Uint8Array>> {
  const started = startBodyRead(request, limit, timeoutMs);
  const read = started instanceof BodyRead ? started.outcome(await started.settled) : (started ?? (await readStreamedBody(request, limit, timeoutMs)));
  return read instanceof Uint8Array ? { ok: true, value: read } : { ok: false, error: read };
}

/**
 * {@link readBody} of a body without a usable declared length: read as a stream, chunk by chunk, up to
 * `limit` bytes within `timeoutMs` ms; the bytes, or the 413, 408 or 400.
 */
async function readStreamedBody(request: Request, limit: number, timeoutMs: number): Promise<Uint8Array | HubError> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  // Out of time, the reader is cancelled: its pending read ends (done) and the flag says why.
  let late = false;
  const watched = new CallbackDeadline(() => {
    late = true;
    void reader.cancel().catch(() => {});
  });
  watched.arm(timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (late) return timedOut(timeoutMs);
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        void reader.cancel().catch(() => {});
        return tooLarge(limit);
      }
      parts.push(value);
    }
  } catch {
    return late ? timedOut(timeoutMs) : unreadable();
  } finally {
    watched.disarm();
  }
  return parts.length === 0 ? new Uint8Array(0) : concatBytes(parts, total);
}

/** The 408 of a body still incomplete `timeoutMs` after the read began (see {@link readBody}). */
function timedOut(timeoutMs: number): HubError {
  return hubError("invalid_request", `The request body did not fully arrive within ${timeoutMs} ms (server.body_timeout_ms); the connection is closed.`, {
    status: 408,
    code: "request_timeout",
  });
}

/** SPEC G-4: the 413 of a body over `limit` bytes. */
function tooLarge(limit: number): HubError {
  return hubError("request_too_large", `The request body exceeds the gateway's limit of ${limit} bytes.`, { code: "request_too_large" });
}

/**
 * SPEC G-4 for a body an event transport parsed already (SPEC 2.5's frames): the 413 error when the text
 * it was sent in (`sent`, as received: UTF-8 bytes, 1 to 3 per UTF-16 code unit, counted only when that
 * range straddles the limit) or the body itself is over `maxBodyBytes` bytes, else undefined. The
 * body's bytes are made (and counted) only when its bound (`maxBytes`) does not already place it under.
 */
export function receivedTooLarge(received: ReceivedBody, maxBodyBytes: number): HubError | undefined {
  const sent = received.sent;
  if (sent !== undefined && sent.length * 3 > maxBodyBytes && (sent.length > maxBodyBytes || Buffer.byteLength(sent, "utf8") > maxBodyBytes)) return tooLarge(maxBodyBytes);
  return received.maxBytes > maxBodyBytes && received.bytes.byteLength > maxBodyBytes ? tooLarge(maxBodyBytes) : undefined;
}

/** A body {@link parseJsonBody} refused: the 400 `invalid_request` it is (a class: told apart from any parsed object). */
class BadBody {
  readonly error: HubError;
  constructor(message: string) {
    this.error = hubError("invalid_request", message);
  }
}

/** A 400 `invalid_request` of a body that is no JSON object. */
function badBody(message: string): BadBody {
  return new BadBody(message);
}

/**
 * Parses a JSON object body (SPEC G-4): invalid UTF-8, malformed JSON, JSON nested deeper than
 * {@link MAX_JSON_DEPTH} levels (checked before parsing: json-depth.ts), and a body that is not an
 * object all become a 400 `invalid_request` error.
 */
export function parseJsonObject(bytes: Uint8Array): Result<Record<string, unknown>> {
  const parsed = parseJsonBody(bytes);
  return parsed instanceof BadBody ? { ok: false, error: parsed.error } : { ok: true, value: parsed };
}

/** {@link parseJsonObject}'s object, or its refusal, without a result record (the guard's, per request). */
function parseJsonBody(bytes: Uint8Array): Record<string, unknown> | BadBody {
  if (nestsDeeperThan(bytes)) return badBody(`The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
  let text: string;
  try {
    text = fatalUtf8.decode(bytes);
  } catch {
    return badBody("The request body is not valid UTF-8.");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return badBody(e instanceof RangeError ? "The request body is nested too deeply." : "The request body is not valid JSON.");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return badBody("The request body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}

/**
 * The `Content-Encoding` of a request (SPEC G-4), lower-case; undefined without one or for `identity`.
 * Looked at only once the body failed to parse: a compressed body never parses as UTF-8 JSON (gzip, zlib
 * and zstd open with bytes that are not UTF-8), so the common path reads no extra header.
 */
function contentEncoding(headers: Headers): string | undefined {
  const encoding = headers.get("content-encoding")?.trim().toLowerCase();
  return !encoding || encoding === "identity" ? undefined : encoding;
}

/**
 * The refusal of a compressed body {@link GuardDeps.decodeBody} could not decode: 415
 * `unsupported_content_encoding` for a coding it does not know (or when the gateway has no decoder) or a
 * stack of more codings than it undoes (src/http/request-encoding.ts `MAX_CODINGS`), 413
 * `request_too_large` for one that decodes past `limit` bytes (SPEC G-4 holds the decoded body to the
 * limit: a zip bomb is refused, not inflated), 400 for bytes that are not that coding.
 */
function undecodable(failure: DecodeFailure, limit: number): HubError {
  const { problem, coding } = failure;
  if (problem === "too_large") {
    return hubError("request_too_large", `The request body exceeds the gateway's limit of ${limit} bytes once decompressed (Content-Encoding: ${coding}).`, { code: "request_too_large" });
  }
  if (problem === "corrupt") return hubError("invalid_request", `The request body could not be decompressed: it is not valid ${coding} data (Content-Encoding: ${coding}).`);
  if (problem === "stacked") {
    return hubError("invalid_request", `The request body lists more content codings than this gateway undoes (Content-Encoding: ${coding}); send it compressed once (gzip, deflate, br or zstd) or uncompressed.`, {
      status: 415,
      code: "unsupported_content_encoding",
    });
  }
  return hubError("invalid_request", `The request body is compressed with ${coding} (Content-Encoding), which this gateway does not decode; it takes gzip, deflate, br and zstd, or an uncompressed JSON body.`, {
    status: 415,
    code: "unsupported_content_encoding",
  });
}

/**
 * The guard on a body sent with `Content-Encoding` (`encoding`): decoded within the body limit
 * ({@link GuardDeps.decodeBody}), then parsed and checked as any body; the decoded bytes are the
 * request's `rawBody` (what a same-format lane forwards, without the client's coding).
 */
async function decodedGuard(ctx: RequestContext, deps: GuardDeps, bytes: Uint8Array, encoding: string): Promise<RequestContext | Response> {
  const limit = deps.settings().maxBodyBytes;
  const decoded = deps.decodeBody ? await deps.decodeBody(bytes, encoding, limit) : { problem: "unsupported" as const, coding: encoding };
  if (!(decoded instanceof Uint8Array)) return refuse(ctx, undecodable(decoded, limit));
  if (decoded.byteLength > limit) return refuse(ctx, tooLarge(limit));
  ctx.rawBody = decoded;
  const parsed = parseJsonBody(decoded);
  if (parsed instanceof BadBody) return refuse(ctx, parsed.error);
  return guardBody(ctx, deps, parsed);
}

/** A value or the error that prevented it. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: HubError };

/**
 * SPEC G-5: Claude Code's `[1m]` context suffix (`claude-sonnet-4-5[1m]`) is not part of any upstream
 * model id; strip it.
 */
export function stripClientModelSuffix(model: string): string {
  return model.endsWith("[1m]") ? model.slice(0, -4) : model;
}

/** What the guard needs from the application. */
export interface GuardDeps {
  keys: KeyLookup;
  settings: () => GuardSettings;
  /** Counters of client key limits (SPEC 9.6); without them only the models allow-list is checked. */
  limits?: KeyLimitCounters;
  /** Clock for the limit counters, ms since the epoch; default Date.now. */
  now?: () => number;
  /**
   * USD a token of one target is expected to cost (SPEC 9.5: what its model's priced requests cost per
   * token so far, or the dearer of its input and output prices before one settled), undefined when its
   * model has no price: with {@link routing}, the least a USD budget holds per expected token of a
   * request in flight to it (pipeline/key-limits.ts).
   */
  tokenPrice?: (target: Target) => number | undefined;
  /** The routing table in force, to find the targets a requested model names (for {@link tokenPrice}). */
  routing?: () => RoutingTable;
  /**
   * Decodes a body sent with `Content-Encoding` (gzip, deflate, br, zstd: src/http/request-encoding.ts),
   * bounded by the body limit (SPEC G-4); without it such a body is a 415.
   */
  decodeBody?: DecodeBody;
}

/**
 * Runs the guard on a context whose transport fields are set. Fills `key`, `rawBody`, `body` (read
 * from the HTTP request, or taken from `ctx.received` when an event transport parsed it already),
 * `requestedModel`, `stream`, `includeUsage` (and `limitsAdmitted`, SPEC 9.6); returns an error Response
 * in the client's format instead when the request may not proceed (a key's limit refuses it: 429/403), or (with `ctx.probe` set) the local answer to a Claude Code
 * housekeeping probe (SPEC G-5, see probes.ts). {@link startGuard} and {@link guardRead}'s steps, for
 * callers other than the gateway (tests, scripts); the gateway takes them itself.
 */
export async function guard(ctx: RequestContext, deps: GuardDeps): Promise<RequestContext | Response> {
  const step = startGuard(ctx, deps);
  return step instanceof BodyRead ? guardRead(ctx, deps, step, await step.settled) : step;
}

/**
 * What a step of the guard returns: its answer (the context, or the Response answering the request),
 * the native body read ({@link BodyRead}) the caller awaits (`settled`) and hands to {@link guardRead},
 * or, on the rare paths (a body without a declared length, a disabled key, a key with limits), a promise
 * of the answer. Never a rejected promise and never a throw for a request's own faults (those are answers).
 */
export type GuardStep = RequestContext | Response | BodyRead | Promise<RequestContext | Response>;

/**
 * The guard's first step ({@link guard}): who may call, then the body, up to the native read of an
 * HTTP body, which it returns for the caller to await itself. No async function per request: the
 * guard's work is synchronous apart from that read (docs/performance.md item 280).
 */
export function startGuard(ctx: RequestContext, deps: GuardDeps): GuardStep {
  const settings = deps.settings();
  const auth = authenticate(ctx.remote, clientHeadersOf(ctx), deps.keys, settings, ctx.clientFormat === "gemini" ? ctx.request.url : undefined);
  if (!auth.ok) return auth.disabledKey === undefined ? refuse(ctx, auth.error) : refuseDisabled(ctx, auth.disabledKey, auth.error, settings, deps.decodeBody);
  ctx.key = auth.key;
  if (auth.key) ctx.trace.keyName = auth.key.name;
  // The HTTP layer refused the URL, or the event transport the frame (IncomingRequest.refusal): answered after the key's check, the body unread.
  if (ctx.refusal) return refuseUrl(ctx, ctx.refusal);

  if (ctx.received) {
    // An event transport parsed the body already (SPEC 2.5): only its size is checked here (G-4), on
    // its bytes only when the transport's bound does not already place it under the limit.
    const received = ctx.received;
    const over = receivedTooLarge(received, settings.maxBodyBytes);
    if (over) return refuse(ctx, over);
    return guardBody(ctx, deps, received.value);
  }
  // Without a received body the head is the HTTP Request itself (IncomingRequest). readBody's steps:
  // the native read is awaited by the caller, then handed to guardRead (no result record per request,
  // docs/performance.md item 256).
  const request = ctx.request as Request;
  const timeoutMs = settings.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const started = startBodyRead(request, settings.maxBodyBytes, timeoutMs);
  if (started instanceof BodyRead) return started;
  if (started) return guardBytes(ctx, deps, started);
  return streamedGuard(ctx, deps, request, settings.maxBodyBytes, timeoutMs);
}

/**
 * The guard's step after {@link startGuard}'s native body read (`read`) settled with `settled` (what
 * its `settled` promise resolved with): the rest of the guard on the bytes, or the 408/400 of a body
 * that did not arrive.
 */
export function guardRead(ctx: RequestContext, deps: GuardDeps, read: BodyRead, settled: unknown): RequestContext | Response | Promise<RequestContext | Response> {
  return guardBytes(ctx, deps, read.outcome(settled));
}

/** {@link startGuard} of a body without a usable declared length: read as a stream, then the rest of the guard. */
async function streamedGuard(ctx: RequestContext, deps: GuardDeps, request: Request, limit: number, timeoutMs: number): Promise<RequestContext | Response> {
  return guardBytes(ctx, deps, await readStreamedBody(request, limit, timeoutMs));
}

/** The guard on a read HTTP body (`bytes`), or the refusal of one that could not be read (`bytes` the error). */
function guardBytes(ctx: RequestContext, deps: GuardDeps, bytes: Uint8Array | HubError): RequestContext | Response | Promise<RequestContext | Response> {
  if (!(bytes instanceof Uint8Array)) {
    const refusal = refuse(ctx, bytes);
    // The rest of a body that did not arrive in time, or that was cut at the size limit (a chunked body
    // past max_body_bytes), must not be read as the next request nor hold the socket while it comes.
    if (bytes.status === 408 || bytes.status === 413) refusal.headers.set("connection", "close");
    return refusal;
  }
  ctx.rawBody = bytes;
  const parsed = parseJsonBody(bytes);
  if (parsed instanceof BadBody) {
    const encoding = contentEncoding(ctx.request.headers);
    return encoding === undefined ? refuse(ctx, parsed.error) : decodedGuard(ctx, deps, bytes, encoding);
  }
  return guardBody(ctx, deps, parsed);
}

/** The guard's checks of a parsed body, after the key and the body's size (see {@link guard}). */
function guardBody(ctx: RequestContext, deps: GuardDeps, body: Record<string, unknown>): RequestContext | Response | Promise<RequestContext | Response> {
  ctx.body = body;

  // Gemini names the model in the URL (SPEC 2.1).
  // The checks are checkRequestBody's, in its order (the dry run runs that one), in two steps so that
  // a request refused for a field's type still names its model in the route trace.
  const requested = requestedModelOf(ctx.path ? ctx.path.model : body.model);
  if (typeof requested !== "string") return refuse(ctx, requested);
  ctx.requestedModel = requested;
  ctx.trace.requestedModel = requested;
  const typeError = checkFieldTypes(ctx.clientFormat, body);
  if (typeError) return refuse(ctx, typeError);
  ctx.stream = ctx.path ? ctx.path.stream : streamRequested(ctx.clientFormat, body);
  ctx.includeUsage = ctx.clientFormat === "openai-chat" && includeUsageRequested(body);
  if (ctx.endpoint === "messages") {
    const probe = recogniseProbe(body, clientHeadersOf(ctx));
    if (probe) {
      ctx.probe = probe;
      ctx.trace.decisions.push({ subject: "guard", verdict: "out", reason: `Claude Code ${probe} probe answered locally` });
      return probeResponse(ctx, probe);
    }
  }
  // SPEC 9.6: the key's limits, last (a probe answered locally costs nothing and is not counted).
  // Only a key with limits has anything to check: no async call (a promise and its turns) otherwise.
  if (!ctx.key?.limits) return ctx;
  return limitsChecked(ctx, deps);
}

/** {@link guardBody}'s last check, for a key with limits (SPEC 9.6): the context, or the refusal. */
async function limitsChecked(ctx: RequestContext, deps: GuardDeps): Promise<RequestContext | Response> {
  const refused = await checkKeyLimits(ctx, deps.limits, deps.now ? deps.now() : Date.now(), deps.tokenPrice && deps.routing ? { price: deps.tokenPrice, routing: deps.routing } : undefined);
  return refused ?? ctx;
}

/**
 * How much of a disabled key's request body {@link refuseDisabled} reads for its model: at most
 * {@link DISABLED_PREFIX_BYTES} bytes, waiting at most {@link DISABLED_PREFIX_MS} ms for them. The 403
 * does not depend on the body, so a body that is slow or stalls must not hold it (review19 R7: read
 * whole, up to `server.body_timeout_ms`, a body stalled after `{"model":"anth/claude-x",` held the 403
 * 4.3 s at body_timeout_ms 4000, 120 s at the default). 64 KiB holds the model of every client's body
 * (they send it first or near the start, before the conversation); 300 ms is more than a local client
 * needs for that much and short beside any client's timeout.
 */
export const DISABLED_PREFIX_BYTES = 64 * 1024;
/** See {@link DISABLED_PREFIX_BYTES}: how long the read waits, in ms. */
export const DISABLED_PREFIX_MS = 300;

/**
 * The 403 for a disabled key (`err`), recorded under the key's name and, when it names one, its
 * requested model (try18 D19: Calls and Usage by key showed such refusals as "no valid key"). The model
 * comes from what is known without waiting (the path for Gemini, an event transport's parsed body),
 * else from the first bytes of the body ({@link readBodyPrefix}: at most {@link DISABLED_PREFIX_BYTES}
 * within {@link DISABLED_PREFIX_MS}): the whole body parsed when it arrived in that, else the top-level
 * `model` of the prefix when the prefix holds it whole; a compressed body (`Content-Encoding`) decoded
 * first by `decode` (the guard's {@link GuardDeps.decodeBody}) when it arrived whole in that (until
 * 2026-12-07 its compressed bytes were parsed, so its model was never named), else its model is left
 * out. The client gets the same 403 whatever the body
 * holds, at once: a body too large, late, cut short or not JSON only leaves the model out. A body not
 * read to its end (late or over the prefix) closes the connection after the 403, as the 408 does: its
 * rest must not be read as the next request.
 */
async function refuseDisabled(ctx: RequestContext, keyName: string, err: HubError, settings: GuardSettings, decode?: DecodeBody): Promise<Response> {
  ctx.trace.keyName = keyName;
  let model: unknown;
  let unread = false;
  if (ctx.path) model = ctx.path.model;
  else if (ctx.received) model = ctx.received.value.model;
  else {
    const prefix = await readBodyPrefix(ctx.request as Request, Math.min(DISABLED_PREFIX_BYTES, settings.maxBodyBytes), DISABLED_PREFIX_MS);
    if (prefix.complete) {
      // A compressed body (Content-Encoding, SPEC G-4) is decoded as the guard decodes it, within the body limit.
      const encoding = contentEncoding(ctx.request.headers);
      const decoded = encoding === undefined ? prefix.bytes : decode ? await decode(prefix.bytes, encoding, settings.maxBodyBytes) : undefined;
      const parsed = decoded instanceof Uint8Array ? parseJsonObject(decoded) : undefined;
      if (parsed?.ok) model = parsed.value.model;
    } else {
      unread = true;
      model = topLevelStringField(prefix.bytes, "model");
    }
  }
  const requested = model === undefined ? undefined : requestedModelOf(model);
  if (typeof requested === "string") {
    ctx.requestedModel = requested;
    ctx.trace.requestedModel = requested;
  }
  const refusal = refuse(ctx, err);
  if (unread) refusal.headers.set("connection", "close");
  return refusal;
}

/** The first bytes of a request body, and whether they are all of it. */
export interface BodyPrefix {
  bytes: Uint8Array;
  /** True when the body ended within them. */
  complete: boolean;
}

/**
 * Reads the start of a request body: chunks as they arrive until the body ends, at least `maxBytes`
 * bytes are in (the chunk that reaches it is kept whole), or `waitMs` ms have passed, whichever is
 * first; never throws (a body that fails to arrive is an incomplete prefix). The rest is left unread.
 * A timer per call: for rare paths only (a disabled key's refusal), not for every request's body.
 */
export async function readBodyPrefix(request: Request, maxBytes: number, waitMs: number): Promise<BodyPrefix> {
  if (!request.body) return { bytes: new Uint8Array(0), complete: true };
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), waitMs);
  });
  const prefix = (complete: boolean): BodyPrefix => ({ bytes: parts.length === 0 ? new Uint8Array(0) : concatBytes(parts, total), complete });
  try {
    while (total < maxBytes) {
      const next = await Promise.race([reader.read(), late]);
      if (next === TIMED_OUT) return prefix(false);
      if (next.done) return prefix(true);
      parts.push(next.value);
      total += next.value.byteLength;
    }
    return prefix(false);
  } catch {
    return prefix(false);
  } finally {
    clearTimeout(timer);
  }
}

/** The guard's refusal: `err` in the client's format, with the request's headers. */
/**
 * The HTTP layer's refusal of a request's URL, or an event transport's of a frame
 * ({@link RequestContext.refusal}), naming the model of the URL (Gemini's `…/models/{model}:method`) or
 * of the transport's parsed body in the route trace and the log line when there is one.
 */
function refuseUrl(ctx: RequestContext, err: HubError): Response {
  // The model the refused request named, for its log line and Calls row: the URL's (Gemini), or that of
  // the body an event transport parsed before refusing it (a Responses WebSocket frame, SPEC 2.5).
  const requested = ctx.path ? requestedModelOf(ctx.path.model) : ctx.received ? requestedModelOf(ctx.received.value.model) : undefined;
  if (typeof requested === "string") ctx.requestedModel = ctx.trace.requestedModel = requested;
  return refuse(ctx, err);
}

function refuse(ctx: RequestContext, err: HubError): Response {
  return errorAnswer(ctx, err);
}

/**
 * The checks of a request's parsed body that every request gets before routing, whatever its route
 * (the guard's, and the dry run's: src/admin/routing-api.ts, so that it refuses what the endpoint
 * refuses): `model` (the body's, or the URL's for Gemini) is a non-empty string, then
 * {@link checkFieldTypes}. Returns the requested model (trimmed, Claude Code's `[1m]` suffix dropped),
 * or the 400 the endpoint answers in the client's format. No allocation on success.
 */
export function checkRequestBody(format: WireFormat, body: Record<string, unknown>, model: unknown): string | HubError {
  const requested = requestedModelOf(model);
  if (typeof requested !== "string") return requested;
  return checkFieldTypes(format, body) ?? requested;
}

/** The requested model named by `model` (trimmed, `[1m]` dropped), or the 400 when it is no non-empty string. */
export function requestedModelOf(model: unknown): string | HubError {
  if (typeof model !== "string" || model.trim() === "") return hubError("invalid_request", "The request must name a model (string field `model`).", { param: "model" });
  return stripClientModelSuffix(model.trim());
}

/**
 * The type checks every request gets, whatever its route (G-4: bad input is a 400 in the client's
 * format, never silently reinterpreted): `stream` is a boolean; Chat/Anthropic `messages` is a
 * non-empty array; Responses `input`, when given, is a string or an array (it is optional there:
 * stored prompts), and no `background` or empty `previous_response_id` (formats/openai-responses/parse.ts
 * `responsesFieldError`); token limits are positive integers. Field-level validation beyond this is the codecs' (for
 * translated requests) or the provider's (for native passthrough).
 */
export function checkFieldTypes(format: WireFormat, body: Record<string, unknown>): HubError | undefined {
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") {
    return badField("stream", "`stream` must be true or false.");
  }
  switch (format) {
    case "openai-chat":
    case "anthropic-messages": {
      if (!Array.isArray(body.messages)) return badField("messages", "`messages` must be an array of messages.");
      if (body.messages.length === 0) return badField("messages", "`messages` must contain at least one message.");
      return positiveIntField(body, "max_tokens") ?? positiveIntField(body, "max_completion_tokens");
    }
    case "openai-responses": {
      const input = body.input;
      if (input !== undefined && input !== null && typeof input !== "string" && !Array.isArray(input)) {
        return badField("input", "`input` must be a string or an array of input items.");
      }
      return positiveIntField(body, "max_output_tokens") ?? responsesFieldError(body);
    }
    case "gemini": {
      // countTokens may wrap the request as `generateContentRequest` (Gemini API).
      const inner = body.contents === undefined && typeof body.generateContentRequest === "object" && body.generateContentRequest !== null
        ? (body.generateContentRequest as Record<string, unknown>)
        : body;
      if (!Array.isArray(inner.contents)) return badField("contents", "`contents` must be an array of Content objects.");
      if (inner.contents.length === 0) return badField("contents", "`contents` must contain at least one Content.");
      return undefined;
    }
    default:
      return undefined;
  }
}

/** A 400 `invalid_request` naming the offending field. */
function badField(param: string, message: string): HubError {
  return hubError("invalid_request", message, { param });
}

/** Undefined when `body[k]` is absent, null or a positive integer; else the 400 naming it. */
function positiveIntField(body: Record<string, unknown>, k: string): HubError | undefined {
  const v = body[k];
  if (v === undefined || v === null) return undefined;
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? undefined : badField(k, `\`${k}\` must be a positive integer.`);
}

/** `stream` omitted means non-streaming in every client format (SPEC 2.1). */
export function streamRequested(_format: WireFormat, body: Record<string, unknown>): boolean {
  return body.stream === true;
}

function includeUsageRequested(body: Record<string, unknown>): boolean {
  const so = body.stream_options;
  return typeof so === "object" && so !== null && (so as Record<string, unknown>).include_usage === true;
}
