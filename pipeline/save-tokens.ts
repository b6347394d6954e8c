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
 * Cost: a request whose client body has no tool result of {@link MIN_CHARS} characters or more costs
 * one walk over the client body's messages (cached per request) and nothing else: the upstream body is
 * neither parsed nor re-serialised, native passthrough bytes stay the client's. The upstream body is
 * re-serialised only when a result actually changed. Compression is pure, so the same history
 * compresses to the same bytes every turn; results are cached across requests (bounded LRU), so a
 * resent history costs a lookup per tool result, not a compression.
 *
 * The outcome of each run is written to `ctx.trace.tokenSaver` (the last attempt's wins: it describes
 * the body that was actually served).
 */
import { KIND_TRAITS } from "../formats/codec.ts";
import type { ProviderKind } from "../formats/codec.ts";
import { codecFor } from "../formats/index.ts";
import type { RequestContext } from "./context.ts";
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
export function saverHeaderOff(headers: Headers): boolean {
  const v = headers.get(TOKEN_SAVER_HEADER);
  return v !== null && ["off", "false", "0", "no"].includes(v.trim().toLowerCase());
}

/** Why the savers do not run for this attempt, or undefined when they do (SPEC S-2). */
export function skipReason(
  kind: ProviderKind,
  headers: Headers,
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
  /** Texts of tool results the client marked as errors (each part, and the parts joined by `\n`). */
  errored: Set<string>;
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

function stateOf(ctx: RequestContext): RequestState {
  let s = STATE.get(ctx);
  if (s) return s;
  s = { candidates: false, errored: new Set() };
  const slots = codecFor(ctx.clientFormat).toolResults?.(ctx.body) ?? [];
  const byResult = new Map<number, { len: number; isError: boolean; texts: string[] }>();
  for (const slot of slots) {
    let r = byResult.get(slot.result);
    if (!r) byResult.set(slot.result, (r = { len: 0, isError: slot.isError, texts: [] }));
    r.len += slot.text.length;
    r.texts.push(slot.text);
  }
  for (const r of byResult.values()) {
    if (r.isError) {
      for (const t of r.texts) s.errored.add(t);
      s.errored.add(r.texts.filter((t) => t.length > 0).join("\n"));
    } else if (r.len >= MIN_CHARS) s.candidates = true;
  }
  STATE.set(ctx, s);
  return s;
}

const decoder = new TextDecoder();

/**
 * Runs the token savers on `translated.body` for `target` (see the module doc). Replaces
 * `translated.body` when a tool result was shortened; records the outcome in `ctx.trace.tokenSaver`.
 * `settings` undefined means off. Never throws: a body it cannot read is sent as it is.
 */
export function saveTokens(ctx: RequestContext, target: Target, translated: Translated, settings: TokenSaverSettings | undefined): void {
  const skip = skipReason(target.provider.kind, ctx.request.headers, settings);
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
  for (const slot of codec.toolResults(body)) {
    if (slot.isError || slot.text.length < MIN_CHARS || state.errored.has(slot.text)) continue;
    const c = compressCached(slot.text);
    if (!c) continue;
    trace.results++;
    trace.charsBefore += slot.text.length;
    trace.charsAfter += c.text.length;
    trace.rules[c.rule] = (trace.rules[c.rule] ?? 0) + 1;
    slot.set(c.text);
  }
  if (trace.results === 0) return;
  trace.tokensSaved = Math.round((trace.charsBefore - trace.charsAfter) / 4);
  translated.body = JSON.stringify(body);
  ctx.trace.tokenSaver = trace satisfies TokenSaverTrace;
}
