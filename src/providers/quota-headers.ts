/**
 * Quota windows from providers' rate-limit headers (SPEC P-5), read after every upstream reply
 * (success or error) and kept per account (the registry's QuotaBook for routing, the store for
 * `accounts status`, `usage` and restarts).
 *
 * Header families (observed from real replies; the sources are the vendors' own clients):
 * - Claude subscriptions (`anthropic-ratelimit-unified-*`, read by Claude Code): per window `W`
 *   (`5h`, `7d`, and model-family windows such as `7d_opus`, `7d_sonnet`)
 *   `…-W-utilization` (a fraction, 0.26 = 26 % used), `…-W-reset` (Unix seconds), `…-W-status`
 *   (`allowed`, `allowed_warning`, `rejected`); overall `…-status`, `…-reset` and
 *   `…-representative-claim` (`five_hour`, `seven_day`, `seven_day_opus`, …) naming the binding
 *   window. `overage` windows (paid extra usage) are not quota and are skipped.
 * - Anthropic API keys (docs.anthropic.com "Rate limits"): `anthropic-ratelimit-{requests,tokens,
 *   input-tokens,output-tokens}-{limit,remaining,reset}` (reset RFC 3339), per model.
 * - OpenAI (platform docs "Rate limits"): `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`
 *   (reset a Go duration like `6m0s`), per model.
 * - Codex (openai/codex codex-rs, `x-codex-*`): `x-codex-{primary,secondary}-{used-percent,
 *   window-minutes,reset-after-seconds,reset-at}` (percent 0–100; reset-at Unix seconds wins over
 *   reset-after-seconds), plus per-model limit families `x-codex-<family>-…` and
 *   `x-codex-active-limit` naming the limit that governed this request. When the active limit is a
 *   family present in the reply, the default `x-codex-*` numbers are that family's copy: they are
 *   stored for this request's model only, never for the whole account.
 */
import { epochMs, parseGoDuration } from "../../formats/retry-after.ts";
import { ALL_MODELS, type QuotaWindow } from "../store/types.ts";

/** What a reply is about. `now` is ms since the epoch. */
export interface QuotaContext {
  accountId: string;
  /** The upstream model of the call. */
  model: string;
  now: number;
}

/** Maps Claude's `representative-claim` values to the window names of the headers. */
const CLAIM_WINDOW: Record<string, string> = { five_hour: "5h", seven_day: "7d", seven_day_opus: "7d_opus", seven_day_sonnet: "7d_sonnet" };

/** {@link quotaFamilies}: Claude's unified headers (`anthropic-ratelimit-unified-*`). */
const UNIFIED = 1;
/** {@link quotaFamilies}: Anthropic's API-key headers (`anthropic-ratelimit-*`). */
const ANTHROPIC = 2;
/** {@link quotaFamilies}: OpenAI's headers (`x-ratelimit-*`). */
const OPENAI = 4;
/** {@link quotaFamilies}: Codex's headers (`x-codex*`). */
const CODEX = 8;

/**
 * Which of the four header families of quota windows a reply's headers carry (Claude unified, Anthropic
 * API key, OpenAI, Codex), as bits; 0 when none. One pass over the header names (`keys()`: no value
 * string per header, no callback; ~0.4 µs less than `forEach` on a reply of 13 headers). Never throws.
 */
export function quotaFamilies(headers: Headers): number {
  let families = 0;
  for (const name of headers.keys()) {
    if (name.startsWith("anthropic-ratelimit-")) families |= name.startsWith("anthropic-ratelimit-unified-") ? UNIFIED : ANTHROPIC;
    else if (name.startsWith("x-ratelimit-")) families |= OPENAI;
    else if (name.startsWith("x-codex")) families |= CODEX;
  }
  return families;
}

/**
 * Every quota window the headers report, or none. Never throws. Runs on every reply that has any
 * ({@link quotaFamilies}, given by a caller that looked already): a reply pays only for the family its
 * provider sends (the unified and Codex readers match every header name against a pattern; the other
 * two look up their fixed names).
 */
export function readQuotaWindows(headers: Headers, ctx: QuotaContext, families = quotaFamilies(headers)): QuotaWindow[] {
  const out: QuotaWindow[] = [];
  try {
    if (families & UNIFIED) anthropicUnified(headers, ctx, out);
    if (families & ANTHROPIC) anthropicWindows(headers, ctx, out);
    if (families & OPENAI) openaiWindows(headers, ctx, out);
    if (families & CODEX) codexWindows(headers, ctx, out);
  } catch {
    // a malformed header must never fail a request
  }
  return out;
}

function num(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** The model a model-family window (`7d_opus`) applies to: this call's model when its name has the family, else none. */
function familyModel(window: string, model: string): string | undefined {
  const i = window.indexOf("_");
  if (i < 0) return ALL_MODELS;
  const family = window.slice(i + 1).toLowerCase();
  return model.toLowerCase().includes(family) ? model : undefined;
}

function anthropicUnified(h: Headers, ctx: QuotaContext, out: QuotaWindow[]): void {
  const prefix = "anthropic-ratelimit-unified-";
  const names = new Set<string>();
  h.forEach((_, name) => {
    const m = /^anthropic-ratelimit-unified-(.+)-(utilization|reset|status)$/.exec(name);
    if (m && m[1] !== "overage" && !m[1].startsWith("overage")) names.add(m[1]);
  });
  const seen = new Set<string>();
  for (const w of names) {
    const model = familyModel(w, ctx.model);
    if (!model) continue;
    const util = num(h.get(`${prefix}${w}-utilization`));
    const status = h.get(`${prefix}${w}-status`);
    if (util === undefined && status !== "rejected") continue;
    const q: QuotaWindow = { accountId: ctx.accountId, window: w, model, usedPercent: util !== undefined ? util * 100 : 100, updatedAt: ctx.now };
    if (status === "rejected") q.usedPercent = Math.max(100, q.usedPercent ?? 100);
    const reset = epochMs(h.get(`${prefix}${w}-reset`));
    if (reset !== undefined) q.resetAt = reset;
    out.push(q);
    seen.add(w);
  }
  // A rejection naming its window without per-window numbers still marks that window exhausted.
  if (h.get(`${prefix}status`) === "rejected") {
    const claim = h.get(`${prefix}representative-claim`) ?? "";
    const w = CLAIM_WINDOW[claim] ?? claim;
    const model = w ? familyModel(w, ctx.model) : undefined;
    if (w && model && !seen.has(w)) {
      const q: QuotaWindow = { accountId: ctx.accountId, window: w, model, usedPercent: 100, updatedAt: ctx.now };
      const reset = epochMs(h.get(`${prefix}reset`));
      if (reset !== undefined) q.resetAt = reset;
      out.push(q);
    }
  }
}

/** Anthropic API-key windows and their header names (`anthropic-ratelimit-<window>-{limit,remaining,reset}`), made once. */
const ANTHROPIC_WINDOWS = ["requests", "tokens", "input-tokens", "output-tokens"].map((window) => ({
  window,
  limit: `anthropic-ratelimit-${window}-limit`,
  remaining: `anthropic-ratelimit-${window}-remaining`,
  reset: `anthropic-ratelimit-${window}-reset`,
}));

function anthropicWindows(h: Headers, ctx: QuotaContext, out: QuotaWindow[]): void {
  for (const r of ANTHROPIC_WINDOWS) {
    const limit = num(h.get(r.limit));
    const remaining = num(h.get(r.remaining));
    if (remaining === undefined) continue;
    const q: QuotaWindow = { accountId: ctx.accountId, window: r.window, model: ctx.model, remaining, updatedAt: ctx.now };
    if (limit !== undefined) q.limit = limit;
    const reset = epochMs(h.get(r.reset));
    if (reset !== undefined) q.resetAt = reset;
    out.push(q);
  }
}

/** OpenAI windows and their header names (`x-ratelimit-{limit,remaining,reset}-<window>`), made once. */
const OPENAI_WINDOWS = ["requests", "tokens"].map((window) => ({
  window,
  limit: `x-ratelimit-limit-${window}`,
  remaining: `x-ratelimit-remaining-${window}`,
  reset: `x-ratelimit-reset-${window}`,
}));

function openaiWindows(h: Headers, ctx: QuotaContext, out: QuotaWindow[]): void {
  for (const r of OPENAI_WINDOWS) {
    const remaining = num(h.get(r.remaining));
    if (remaining === undefined) continue;
    const q: QuotaWindow = { accountId: ctx.accountId, window: r.window, model: ctx.model, remaining, updatedAt: ctx.now };
    const limit = num(h.get(r.limit));
    if (limit !== undefined) q.limit = limit;
    const reset = h.get(r.reset);
    const ms = reset ? parseGoDuration(reset) : undefined;
    if (ms !== undefined) q.resetAt = ctx.now + ms;
    out.push(q);
  }
}

interface CodexRaw {
  usedPercent?: number;
  windowMinutes?: number;
  /** ms since the epoch, from `reset-at` */
  resetAt?: number;
  /** seconds, from `reset-after-seconds` */
  resetAfter?: number;
}

function codexWindows(h: Headers, ctx: QuotaContext, out: QuotaWindow[]): void {
  /** family ("" = the default `x-codex-*` carrier) → primary/secondary readings */
  const families = new Map<string, Record<string, CodexRaw>>();
  h.forEach((value, name) => {
    const m = /^x-codex(?:[-_](.+?))?-(primary|secondary)-(used-percent|window-minutes|reset-after-seconds|reset-at)$/.exec(name);
    if (!m) return;
    const family = (m[1] ?? "").toLowerCase().replace(/_/g, "-");
    const rec = families.get(family) ?? {};
    const w = (rec[m[2]] ??= {});
    if (m[3] === "used-percent") w.usedPercent = num(value);
    else if (m[3] === "window-minutes") w.windowMinutes = num(value);
    else if (m[3] === "reset-at") w.resetAt = epochMs(value);
    else w.resetAfter = num(value);
    families.set(family, rec);
  });
  if (families.size === 0) return;
  const active = (h.get("x-codex-active-limit") ?? "").toLowerCase().replace(/^codex[-_]?/, "").replace(/_/g, "-");
  const activeFamily = active && families.has(active) ? active : undefined;
  const emit = (family: string, model: string) => {
    const rec = families.get(family)!;
    for (const slot of ["primary", "secondary"]) {
      const w = rec[slot];
      if (!w || w.usedPercent === undefined) continue;
      if (w.windowMinutes === 0 && w.usedPercent === 0) continue; // "no such window"
      const q: QuotaWindow = { accountId: ctx.accountId, window: family ? `${family}-${slot}` : slot, model, usedPercent: w.usedPercent, updatedAt: ctx.now };
      // reset-at (absolute) wins over the older reset-after-seconds countdown.
      const reset = w.resetAt ?? (w.resetAfter !== undefined ? ctx.now + w.resetAfter * 1000 : undefined);
      if (reset !== undefined) q.resetAt = reset;
      out.push(q);
    }
  };
  if (activeFamily) emit(activeFamily, ctx.model);
  else if (families.has("")) emit("", ALL_MODELS);
}
