/**
 * save-tokens (SPEC R-6, S-1, S-2): token savers on the body about to be sent, between translate and
 * execute in the attempt loop.
 *
 * Tool-result compression (S-1, on by default): every tool result of the upstream body (found through
 * the provider format's `FormatCodec.toolResults` accessor) of {@link MIN_CHARS} characters or more
 * that a rule recognises is shortened (pipeline/savers/). Error results are left alone: those the
 * provider format marks (`is_error`, Gemini `error`, a legacy Responses `success: false`), and those
 * whose text starts with `Error:` (or is `Error`): how the Chat and Responses builders carry a client's
 * `is_error` (those formats have no flag), and how a Chat client writes a failed tool. Each result is
 * judged by itself alone, never by matching other results' text, so a later result (an `is_error` one
 * with the same text) cannot change how an earlier one is sent.
 *
 * Skipped (S-2) when the settings turn it off, for a request with `X-Switchyard-Token-Saver: off`, and
 * for Anthropic-format providers with prompt caching (kinds `anthropic`, `claude-code`), whose cache
 * depends on byte-identical history.
 *
 * Never costing more than it saves (S-4): compression is a pure function of the tool result's text
 * (pipeline/savers/), so a result compresses to the same bytes in every later turn wherever it sits and
 * a provider's prefix cache keeps hitting. `cache_control` markers (S-4's "content before the last
 * marker is never changed") count only where they reach the provider: {@link MARKERS_REACH_PROVIDER}.
 * There, when the client's conversation holds a marker, every tool result is left exactly as the
 * client wrote it: clients move their marker forward each turn (Claude Code marks its newest message,
 * an Anthropic SDK client may mark the previous turn's last one), so a result shortened while after the
 * marker would be sent whole once the marker passed it, breaking the prefix the provider cached and
 * undoing the saving. Every other provider format drops the markers in translation (Chat builders and
 * the Chat tidy pass remove them, strict servers reject them; Gemini drops them with a warning;
 * Responses has none): those providers' caches are plain prefix caches that never see a marker, and the
 * pure function alone decides, so a result is the same bytes in every turn whatever the client marks.
 * Either way whether a result is shortened depends only on the result itself and on per-request facts
 * that a conversation keeps from turn to turn (the provider, the header, the settings, whether the
 * client marks its conversation), never on where a later turn puts its marker or on other results.
 *
 * Cost: a request whose client body has no tool result of {@link MIN_CHARS} characters or more costs
 * one walk over the client body's messages (cached per request) and nothing else: the upstream body is
 * neither parsed nor re-serialised, native passthrough bytes stay the client's. The upstream body is
 * re-serialised only when a result actually changed. Compression is pure, so the same history
 * compresses to the same bytes every turn; results are cached across requests (bounded LRU), so a
 * resent history costs a lookup per tool result, not a compression.
 *
 * The outcome of each run is written to `ctx.trace.tokenSaver` (the last attempt's wins: it describes
 * the body that was actually served): what was shortened, why the savers were skipped, or, when they
 * looked at long tool results and shortened none, how many they left as they were.
 */
import { KIND_TRAITS } from "../formats/codec.ts";
import type { ProviderKind, ToolResultSlot } from "../formats/codec.ts";
import { codecFor } from "../formats/index.ts";
import { indexOfBytes } from "../formats/index-of-bytes.ts";
import { bodyBytes, clientHeadersOf, type RequestContext } from "./context.ts";
import type { HeaderReader } from "./client-headers.ts";
import type { TokenSaverTrace } from "./ports.ts";
import type { Target } from "./resolve.ts";
import { compressToolResult, MIN_CHARS, type Compressed } from "./savers/index.ts";
import type { Translated } from "./translate.ts";

export { MIN_CHARS } from "./savers/index.ts";

/** The token-saver settings (config `settings.token_savers`, SPEC 2.3). */
export interface TokenSaverSettings {
  /** SPEC S-1: tool-result compression, default true. */
  compressToolResults: boolean;
}

/** The request header that turns every token saver off for one request (SPEC 2.4). */
export const TOKEN_SAVER_HEADER = "x-switchyard-token-saver";


/** Whether the request turned the token savers off (`off`; also `false`, `0`, `no`, any case). */
export function saverHeaderOff(headers: HeaderReader): boolean {
  const v = headers.get(TOKEN_SAVER_HEADER);
  return v !== null && ["off", "false", "0", "no"].includes(v.trim().toLowerCase());
}

/** Why the savers do not run for this attempt, or undefined when they do (SPEC S-2). */
export function skipReason(
  kind: ProviderKind,
  headers: HeaderReader,
  settings: TokenSaverSettings | undefined,
): "disabled" | "header" | "prompt_cache" | undefined {
  if (!settings?.compressToolResults) return "disabled";
  if (saverHeaderOff(headers)) return "header";
  if (KIND_TRAITS[kind].promptCacheSensitive) return "prompt_cache";
  return undefined;
}

/** Per-request state kept across attempts: the client-body scan. */
interface RequestState {
  /** The client body has a non-error tool result of MIN_CHARS or more. */
  candidates: boolean;
  /** The client's conversation holds a `cache_control` marker (on a message, block or part). */
  marked: boolean;
}

/**
 * Provider formats whose requests carry the client's `cache_control` markers to the provider, whose
 * cache may be keyed on them (the Anthropic Messages builders and tidy pass keep them; reached here by
 * kind `anthropic-compatible`, since `anthropic` and `claude-code` skip the savers altogether, S-2).
 * The others drop them: formats/openai-chat build and tidy, formats/gemini build (`dropped_cache_control`),
 * formats/openai-responses (no such field). A Chat client's own markers passed through natively to kind
 * `openai` reach OpenAI, whose prompt cache is an automatic prefix cache that does not read them.
 */
export const MARKERS_REACH_PROVIDER: ReadonlySet<string> = new Set(["anthropic-messages"]);

/**
 * Whether a tool result is left alone as an error: the format marks it (`isError`), or its first text
 * starts with `Error:` or is `Error` (how the Chat and Responses builders carry `is_error`, and how a
 * Chat client writes a failed tool). A pure function of the result itself.
 */
function errorResult(slot: ToolResultSlot): boolean {
  return slot.isError || slot.text.startsWith("Error:") || slot.text === "Error";
}

/** Where each client format keeps its conversation (the array a `cache_control` marker can sit in). */
const MESSAGES_KEY: Record<string, string> = {
  "anthropic-messages": "messages",
  "openai-chat": "messages",
  "openai-responses": "input",
  gemini: "contents",
};

const CACHE_CONTROL = new TextEncoder().encode('"cache_control"');

/** Whether `value` holds a `cache_control` key at any depth. */
function holdsCacheControl(value: unknown, depth = 0): boolean {
  if (depth > 32 || typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some((v) => holdsCacheControl(v, depth + 1));
  for (const [k, v] of Object.entries(value)) if (k === "cache_control" || holdsCacheControl(v, depth + 1)) return true;
  return false;
}

/**
 * Index of the last conversation item of `body` that holds an Anthropic-style `cache_control` marker
 * (on a block, a content part or the item itself), or -1. A conversation with such a marker is sent
 * with its tool results as the client wrote them where the markers reach the provider
 * ({@link MARKERS_REACH_PROVIDER}, S-4). Markers in `system` or `tools` come before every message and
 * protect no tool result.
 */
export function lastCacheMarkerIndex(format: string, body: Record<string, unknown>, raw: Uint8Array): number {
  const key = MESSAGES_KEY[format];
  const items = key ? body[key] : undefined;
  if (!Array.isArray(items) || indexOfBytes(raw, CACHE_CONTROL) === -1) return -1;
  for (let i = items.length - 1; i >= 0; i--) if (holdsCacheControl(items[i])) return i;
  return -1;
}


/**
 * Compressed tool results across requests, least recently used first out. A conversation resends its
 * whole history every turn, so each tool result is compressed once per process, not once per turn.
 * Bounded by {@link CACHE_MAX_ENTRIES} entries and {@link CACHE_MAX_CHARS} characters of original text.
 */
const cache = new Map<string, Compressed | null>();
let cacheChars = 0;
/** At most this many cached tool results. */
export const CACHE_MAX_ENTRIES = 4096;
/** At most this many characters (UTF-16 code units) of cached original text (about 32 MB). */
export const CACHE_MAX_CHARS = 16_000_000;

/** Empties the process-wide cache (tests that must see a fresh process's behaviour). */
export function clearSaverCache(): void {
  cache.clear();
  cacheChars = 0;
}

/** {@link compressToolResult} through the process-wide cache (the result is the same, only faster). */
function compressCached(text: string): Compressed | undefined {
  const hit = cache.get(text);
  if (hit !== undefined) {
    cache.delete(text);
    cache.set(text, hit);
    return hit ?? undefined;
  }
  const c = compressToolResult(text) ?? null;
  if (text.length <= CACHE_MAX_CHARS / 4) {
    cache.set(text, c);
    cacheChars += text.length;
    for (const k of cache.keys()) {
      if (cache.size <= CACHE_MAX_ENTRIES && cacheChars <= CACHE_MAX_CHARS) break;
      cache.delete(k);
      cacheChars -= k.length;
    }
  }
  return c ?? undefined;
}

const STATE = new WeakMap<RequestContext, RequestState>();

/** Groups a client body's tool-result slots by result: total length, error ({@link errorResult} of its first slot). */
function bySlotResult(slots: readonly ToolResultSlot[]): Map<number, { len: number; isError: boolean }> {
  const byResult = new Map<number, { len: number; isError: boolean }>();
  for (const slot of slots) {
    let r = byResult.get(slot.result);
    if (!r) byResult.set(slot.result, (r = { len: 0, isError: errorResult(slot) }));
    r.len += slot.text.length;
  }
  return byResult;
}

function stateOf(ctx: RequestContext): RequestState {
  let s = STATE.get(ctx);
  if (s) return s;
  const slots = codecFor(ctx.clientFormat).toolResults?.(ctx.body);
  // No tool result at all (most requests): nothing to group (no map and iterator per request,
  // docs/performance.md item 257).
  if (slots === undefined || slots.length === 0) return NOTHING_TO_SAVE;
  s = NOTHING_TO_SAVE;
  let long = false;
  for (const r of bySlotResult(slots).values()) if (!r.isError && r.len >= MIN_CHARS) long = true;
  if (long) s = { candidates: true, marked: lastCacheMarkerIndex(ctx.clientFormat, ctx.body, bodyBytes(ctx)) >= 0 };
  // Nothing to save is cheap to find again (on a retry): no map entry per request for it.
  if (s !== NOTHING_TO_SAVE) STATE.set(ctx, s);
  return s;
}

/** The state of a body without a long enough tool result (most requests): shared, never written. */
const NOTHING_TO_SAVE: RequestState = { candidates: false, marked: false };

const decoder = new TextDecoder();

/**
 * Runs the token savers on `translated.body` for `target` (see the module doc). Replaces
 * `translated.body` when a tool result was shortened; records the outcome in `ctx.trace.tokenSaver`.
 * `settings` undefined means off. Never throws: a body it cannot read is sent as it is.
 */
export function saveTokens(ctx: RequestContext, target: Target, translated: Translated, settings: TokenSaverSettings | undefined): void {
  const skip = skipReason(target.provider.kind, clientHeadersOf(ctx), settings);
  if (skip === "disabled") {
    delete ctx.trace.tokenSaver;
    return;
  }
  if (skip) {
    ctx.trace.tokenSaver = { skipped: skip };
    return;
  }
  delete ctx.trace.tokenSaver;
  const state = stateOf(ctx);
  if (!state.candidates) return;
  if (state.marked && MARKERS_REACH_PROVIDER.has(translated.upstreamFormat)) {
    ctx.trace.tokenSaver = { skipped: "cache_marker" };
    return;
  }
  const codec = codecFor(translated.upstreamFormat);
  if (!codec.toolResults) return;

  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(typeof translated.body === "string" ? translated.body : decoder.decode(translated.body));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return;
    body = parsed as Record<string, unknown>;
  } catch {
    return;
  }
  const trace = { results: 0, charsBefore: 0, charsAfter: 0, tokensSaved: 0, rules: {} as Record<string, number> };
  /** Long results looked at and left as they were (unrecognised, or not shortened enough). */
  let unchanged = 0;
  /** The result the slots being read belong to, and whether it is left alone as an error. */
  let result = -1;
  let errored = false;
  for (const slot of codec.toolResults(body)) {
    if (slot.result !== result) {
      result = slot.result;
      errored = errorResult(slot);
    }
    if (errored || slot.text.length < MIN_CHARS) continue;
    const c = compressCached(slot.text);
    if (!c) {
      unchanged++;
      continue;
    }
    trace.results++;
    trace.charsBefore += slot.text.length;
    trace.charsAfter += c.text.length;
    trace.rules[c.rule] = (trace.rules[c.rule] ?? 0) + 1;
    slot.set(c.text);
  }
  if (trace.results === 0) {
    // The savers ran and found nothing to shorten: said so, not left silent.
    if (unchanged > 0) ctx.trace.tokenSaver = { unchanged };
    return;
  }
  trace.tokensSaved = Math.round((trace.charsBefore - trace.charsAfter) / 4);
  translated.body = JSON.stringify(body);
  ctx.trace.tokenSaver = trace satisfies TokenSaverTrace;
}
