/**
 * save-tokens (SPEC R-6, S-1, S-2): token savers on the body about to be sent, between translate and
 * execute in the attempt loop.
 *
 * Tool-result compression (S-1, on by default): every tool result of the upstream body (found through
 * the provider format's `FormatCodec.toolResults` accessor) of {@link MIN_CHARS} characters or more
 * that a rule recognises is shortened (pipeline/savers/). Error results are left alone: those the
 * provider format marks (`is_error`, Gemini `error`, Chat `Error:`), and those the CLIENT marked
 * `is_error` (found by their text, since some provider formats cannot carry the flag).
 *
 * Skipped (S-2) when the settings turn it off, for a request with `X-Switchyard-Token-Saver: off`, and
 * for Anthropic-format providers with prompt caching (kinds `anthropic`, `claude-code`), whose cache
 * depends on byte-identical history.
 *
 * Never costing more than it saves (S-4): compression is a pure function of the tool result's text
 * (pipeline/savers/), so a result compresses to the same bytes in every later turn wherever it sits and
 * a provider's prefix cache keeps hitting. Tool results at or before the client body's last
 * Anthropic-style `cache_control` marker (whatever the provider) are left exactly as the client wrote
 * them: the client asked for that prefix to be cached. (Claude Code marks its newest message each turn,
 * so its tool results are all protected.) They are found by their text in the upstream body, like the
 * client's error results; a later result with the same text is left alone too.
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
  /** The client body has a non-error tool result of MIN_CHARS or more that no cache marker protects. */
  candidates: boolean;
  /** Texts of tool results the client marked as errors (each part, and the parts joined by `\n`). */
  errored: Set<string>;
  /** Texts of tool results at or before the client's last `cache_control` marker (each part, and joined). */
  cached: Set<string>;
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
 * (on a block, a content part or the item itself), or -1. The client asked the provider to cache the
 * prompt up to and including that block, so everything up to it is left as the client wrote it (S-4).
 * Markers in `system` or `tools` come before every message and protect no tool result.
 */
export function lastCacheMarkerIndex(format: string, body: Record<string, unknown>, raw: Uint8Array): number {
  const key = MESSAGES_KEY[format];
  const items = key ? body[key] : undefined;
  if (!Array.isArray(items) || indexOfBytes(raw, CACHE_CONTROL) === -1) return -1;
  for (let i = items.length - 1; i >= 0; i--) if (holdsCacheControl(items[i])) return i;
  return -1;
}


/** Adds each result's texts (every part, and the non-empty parts joined by `\n`, as a translation may join them). */
function addTexts(into: Set<string>, texts: string[]): void {
  for (const t of texts) into.add(t);
  into.add(texts.filter((t) => t.length > 0).join("\n"));
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

/** Groups a client body's tool-result slots by result: texts, total length, error flag. */
function resultsOf(format: string, body: Record<string, unknown>): Map<number, { len: number; isError: boolean; texts: string[] }> {
  return bySlotResult(codecFor(format as RequestContext["clientFormat"]).toolResults?.(body) ?? []);
}

/** {@link resultsOf} of the slots already found. */
function bySlotResult(slots: readonly ToolResultSlot[]): Map<number, { len: number; isError: boolean; texts: string[] }> {
  const byResult = new Map<number, { len: number; isError: boolean; texts: string[] }>();
  for (const slot of slots) {
    let r = byResult.get(slot.result);
    if (!r) byResult.set(slot.result, (r = { len: 0, isError: slot.isError, texts: [] }));
    r.len += slot.text.length;
    r.texts.push(slot.text);
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
  const all = bySlotResult(slots);
  s = NOTHING_TO_SAVE;
  let long = false;
  for (const r of all.values()) if (!r.isError && r.len >= MIN_CHARS) long = true;
  if (long) {
    s = { candidates: false, errored: new Set(), cached: new Set() };
    // Results up to the last cache marker: the same accessor over the conversation cut after it.
    const last = lastCacheMarkerIndex(ctx.clientFormat, ctx.body, bodyBytes(ctx));
    const key = MESSAGES_KEY[ctx.clientFormat]!;
    const upToMarker = last < 0 ? new Map() : resultsOf(ctx.clientFormat, { ...ctx.body, [key]: (ctx.body[key] as unknown[]).slice(0, last + 1) });
    const cachedCount = Math.max(-1, ...upToMarker.keys()) + 1;
    for (const [n, r] of all) {
      if (r.isError) addTexts(s.errored, r.texts);
      else if (n < cachedCount) addTexts(s.cached, r.texts);
      else if (r.len >= MIN_CHARS) s.candidates = true;
    }
    // Some protected result was long enough to shorten: say why nothing may be.
    if (!s.candidates) s.cached.add(CACHED_ONLY);
  }
  // Nothing to save is cheap to find again (on a retry): no map entry per request for it.
  if (s !== NOTHING_TO_SAVE) STATE.set(ctx, s);
  return s;
}

/**
 * The state of a body without a long enough tool result (most requests): shared, never written (its
 * sets are only read once `candidates` is false and no `CACHED_ONLY` mark was needed).
 */
const NOTHING_TO_SAVE: RequestState = { candidates: false, errored: new Set(), cached: new Set() };

/** Marks a state whose only long results sit before the last cache marker. */
const CACHED_ONLY = "\u0000cached-only";

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
  if (!state.candidates) {
    if (state.cached.has(CACHED_ONLY)) ctx.trace.tokenSaver = { skipped: "cache_marker" };
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
  for (const slot of codec.toolResults(body)) {
    if (slot.isError || slot.text.length < MIN_CHARS || state.errored.has(slot.text) || state.cached.has(slot.text)) continue;
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
