/**
 * Cost of a request in USD (SPEC 9.5): a maintained price table (`@pydantic/genai-prices`, bundled
 * data, no network) with `settings.pricing` overrides, cache reads and writes at their own prices.
 *
 * Token semantics follow the hub (formats/hub.ts `Usage`): `inputTokens` excludes cache reads and
 * writes; `outputTokens` includes reasoning tokens. Prices are USD per million tokens.
 *
 * Subscription accounts (claude-code, codex) are priced at the API price of the same model at its
 * vendor (Anthropic, OpenAI): the "API-price equivalent" of what the subscription served.
 */
import type { ModelInfo, ModelPrice, Provider, calcPrice } from "@pydantic/genai-prices";
import type { ProviderKind } from "../../formats/codec.ts";
import type { Usage } from "../../formats/hub.ts";
import { planCost, ratePlan, type RatePlan } from "./rate-plan.ts";

/**
 * One `settings.pricing` entry: USD per million tokens, and `webSearches` USD per server-side web
 * search (Usage.webSearches; absent: searches cost nothing under the override, as before it was
 * taken). Missing cache prices fall back (see {@link PriceBook}).
 */
export interface PriceOverride {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  webSearches?: number;
}

/** A request's cost. `usd` is absent when the model has no price (`unpriced`). */
export interface Cost {
  /** USD, unrounded. Absent when unpriced. */
  usd?: number;
  /** Where the price came from: `override` (settings.pricing) or `price_table` (the package); absent when unpriced. */
  source?: "override" | "price_table";
  /** True when neither an override nor the price table knows the model: the cost is unknown, not zero. */
  unpriced: boolean;
}

/**
 * The price table's provider id for a provider kind: API kinds and their subscription counterparts map
 * to the same vendor (claude-code → anthropic, codex → openai). The `*-compatible` kinds map to none:
 * their models are looked up by base URL, vendor prefix or id alone ({@link PriceBook.cost}).
 */
export function priceVendor(kind: ProviderKind): string | undefined {
  switch (kind) {
    case "anthropic":
    case "claude-code":
      return "anthropic";
    case "openai":
    case "openai-responses":
    case "codex":
      return "openai";
    case "gemini":
      return "google";
    default:
      return undefined;
  }
}

const PER_TOKEN = 1 / 1_000_000;

/** The table's provider id of OpenRouter, and the memo of its lookups ({@link PriceBook}). */
const OPENROUTER = "openrouter";
/** The memo of `vendor/model` lookups of a `*-compatible` kind, by the whole id ({@link PriceBook.cost}). */
const VENDOR_PREFIXED = "/";
/** The prefix of the memos of a `*-compatible` kind's lookups by its base URL: `@` and the URL ({@link PriceBook.cost}). */
const AT_URL = "@";
/** How many base URLs' memos a {@link PriceBook} keeps (a configuration names few; past it the oldest is forgotten). */
const MAX_URL_MEMOS = 100;

/** Base URLs already told apart by {@link atOpenRouter} (a configuration names few). */
const OPENROUTER_URLS = new Map<string, boolean>();

/** Whether `baseUrl`'s host is OpenRouter's (`openrouter.ai` or one of its subdomains). */
export function atOpenRouter(baseUrl: string): boolean {
  let at = OPENROUTER_URLS.get(baseUrl);
  if (at === undefined) {
    let host = "";
    try {
      host = new URL(baseUrl).hostname.toLowerCase();
    } catch {
      // not a URL: not OpenRouter's
    }
    at = host === "openrouter.ai" || host.endsWith(".openrouter.ai");
    if (OPENROUTER_URLS.size >= 100) OPENROUTER_URLS.clear();
    OPENROUTER_URLS.set(baseUrl, at);
  }
  return at;
}

/** Base URLs already read by {@link urlAsSent} (a configuration names few; past 100 the memo starts over). */
const SENT_URLS = new Map<string, string>();

/**
 * `baseUrl` as the URL parser reads it (WHATWG URL, as config validation and fetch do), so that the
 * price table's host match reads the host requests go to, not the text: the host lower-cased
 * (`https://API.GROQ.COM/openai/v1` is Groq's), its DNS root dot dropped (`api.groq.com.`), a backslash
 * read as "/" (`https://other.example\.googleapis.com/v1` is at `other.example`, not Google's), the
 * default port dropped; path and query as the parser writes them. A URL with user info keeps an "@"
 * before its host, so that {@link matchEndsTheHost} still refuses it; text the parser refuses is
 * returned as it is. Memoized per base URL: read once, not per request.
 */
export function urlAsSent(baseUrl: string): string {
  let sent = SENT_URLS.get(baseUrl);
  if (sent === undefined) {
    try {
      const u = new URL(baseUrl);
      const host = u.hostname.endsWith(".") ? u.hostname.slice(0, -1) : u.hostname;
      sent = `${u.protocol}//${u.username || u.password ? "@" : ""}${host}${u.port ? `:${u.port}` : ""}${u.pathname}${u.search}`;
    } catch {
      sent = baseUrl;
    }
    if (SENT_URLS.size >= 100) SENT_URLS.clear();
    SENT_URLS.set(baseUrl, sent);
  }
  return sent;
}

/**
 * Whether the price table's match of a provider by base URL (`matched`: the text its `api_pattern`
 * matched at the start of `baseUrl`) ends at the end of the URL's host or past it, or in a pattern
 * that leaves the host's last label open (`https://api\.moonshot\.`, ending in a dot): then exactly
 * one more label (letters, digits, hyphens) must end the host, so `https://api.moonshot.ai` and
 * `.cn` match and `https://api.moonshot.evil.com` does not (until 2026-12-08 any rest of the host
 * did). The package matches a prefix, so `https://api.groq.com.example.net` would be Groq's without
 * this. A base URL with user info (`https://api.groq.com:x@other.host`, whose host is `other.host`)
 * never matches.
 */
export function matchEndsTheHost(baseUrl: string, matched: string): boolean {
  const { hostEnd } = hostOf(baseUrl);
  if (hostEnd < 0) return false;
  if (matched.endsWith(".") && matched.length <= hostEnd) return /^[a-z0-9-]+$/i.test(baseUrl.slice(matched.length, hostEnd));
  return matched.length >= hostEnd;
}

/** Where `baseUrl`'s authority (host and port) and its host end; `hostEnd` -1 when it has user info (`user@`). */
function hostOf(baseUrl: string): { authorityEnd: number; hostEnd: number } {
  const start = baseUrl.indexOf("//");
  const from = start >= 0 ? start + 2 : 0;
  const rest = baseUrl.slice(from);
  const authority = rest.slice(0, rest.search(/[/?#]|$/));
  const authorityEnd = from + authority.length;
  if (authority.includes("@")) return { authorityEnd, hostEnd: -1 };
  // the host ends before the port
  const port = /:\d*$/.exec(authority);
  return { authorityEnd, hostEnd: authorityEnd - (port ? port[0].length : 0) };
}

/**
 * Whether the price table's provider of `api_pattern` `pattern` is the one at `baseUrl` by its host:
 * the pattern matched at the URL's start with every dot after the host hidden, so that a wildcard in
 * the pattern's host (Google's `https://(.*\.)?googleapis\.com`) cannot find the name in the path
 * (`https://other.example/.googleapis.com/v1` was Google's until 2026-12-08), ending as
 * {@link matchEndsTheHost} says. No pattern of the package needs a dot after the host.
 */
export function patternSelectsHost(baseUrl: string, pattern: string): boolean {
  const { authorityEnd } = hostOf(baseUrl);
  const hidden = baseUrl.slice(0, authorityEnd) + baseUrl.slice(authorityEnd).replaceAll(".", "\u0001");
  let matched: string | undefined;
  try {
    matched = new RegExp(`^(?:${pattern})`).exec(hidden)?.[0];
  } catch {
    return false;
  }
  return matched !== undefined && matchEndsTheHost(baseUrl, matched);
}

/** The price table's lookup (`calcPrice` of @pydantic/genai-prices, bundled data). */
export type PriceTable = typeof calcPrice;

/**
 * Loads the price table (~0.8 MB of JavaScript) now, not at import, so CLI commands that never price a
 * request do not pay for it.
 */
export async function loadPriceTable(): Promise<PriceTable> {
  return (await import("@pydantic/genai-prices")).calcPrice;
}

/**
 * The price table, loaded when the first cost is computed (issue 17: a gateway that has priced nothing
 * does not hold the table: ~3.4 MB of the compiled binary's RSS, docs/performance.md item 32). The gateway prices a request after its reply has ended
 * (src/limits/accounting.ts), synchronously, so the package is loaded with `require` (Bun loads an ES
 * module synchronously that way; the compiled binary has it bundled). Same `calcPrice`, same results as
 * {@link loadPriceTable}'s.
 */
export function priceTableOnFirstUse(
  load: () => PriceTable = () => (require("@pydantic/genai-prices") as typeof import("@pydantic/genai-prices")).calcPrice,
  report: (error: unknown) => void = (error) =>
    console.error(JSON.stringify({ level: "error", msg: "price table could not be loaded: requests are recorded unpriced", error: error instanceof Error ? error.message : String(error) })),
): PriceTable {
  let calc: PriceTable | undefined;
  /** The load's failure, kept: a broken install is tried and reported once, not on every request. */
  let failure: { error: unknown } | undefined;
  return (usage, model, options) => {
    if (!calc) {
      if (failure) throw failure.error;
      try {
        calc = load();
      } catch (e) {
        // The caller (PriceBook) records the request unpriced; say why once, not silently on every model.
        failure = { error: e };
        report(e);
        throw e;
      }
    }
    return calc(usage, model, options);
  };
}

/** Cost under an override: each token class at its own price, and each web search at `webSearches`. */
export function overrideCost(price: PriceOverride, usage: Usage): number {
  const searches = price.webSearches && usage.webSearches ? usage.webSearches * price.webSearches : 0;
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  return (
    (input * price.input + output * price.output + cacheRead * (price.cacheRead ?? price.input) + cacheWrite * (price.cacheWrite ?? price.input)) *
      PER_TOKEN +
    searches
  );
}

/**
 * The price keys of the token classes a {@link PriceBook} reports (`input_tokens`, `output_tokens`,
 * `cache_read_tokens`, `cache_write_tokens`, `cache_write_1h_tokens`), of the per-request price (`requests`, always counted
 * once) and of web searches (`web_searches`, per search: Usage.webSearches, since 2026-12-07). Every other price of the table (audio, image, …) applies
 * to a usage class we never report and is not an ancestor of one we do, so `calcPrice` prices it at
 * zero; its cost is in the library's per-call checks of each pair of priced classes.
 */
const REPORTED_PRICE_KEYS = new Set(["input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok", "requests_kcount", "web_searches_kcount"]);

/** `model` with only its {@link REPORTED_PRICE_KEYS} prices, in each of its dated price sets (a copy; `model` is not changed). */
export function priceOfReportedTokens(model: ModelInfo): ModelInfo {
  const keep = (p: ModelPrice): ModelPrice => Object.fromEntries(Object.entries(p).filter(([key]) => REPORTED_PRICE_KEYS.has(key)));
  return { ...model, prices: Array.isArray(model.prices) ? model.prices.map((c) => ({ ...c, prices: keep(c.prices) })) : keep(model.prices) };
}

/** The result of every unpriced lookup: one frozen object, not one per request. */
const UNPRICED: Cost = Object.freeze({ unpriced: true });

/** What a {@link PriceBook} remembers of one (vendor, model). */
interface Remembered {
  /** Neither the table nor its fallbacks price the model: it stays unpriced. */
  unknown: boolean;
  /** The table's provider narrowed to the model the table matched. */
  match?: Provider;
  /** The matched model's resolved rates (absent when they cannot be resolved). */
  plan?: RatePlan;
}

/**
 * Prices requests. Lookup order for a request served by `provider/model`:
 * 1. `settings.pricing["provider/model"]`, then `settings.pricing["model"]`, then
 *    `settings.pricing["provider/*"]`, every model of the provider (an override; a missing
 *    `cache_read` or `cache_write` price is the override's `input` price: a provider that does not
 *    discount cached tokens bills them as input);
 * 2. the price table, under the provider kind's vendor ({@link priceVendor}); a `*-compatible` kind's
 *    model under the table's provider whose API URL its base URL is (OpenRouter, Together, Groq,
 *    Fireworks, …), under its `vendor/` prefix's vendor, else by model id alone ({@link cost});
 * 3. otherwise unpriced.
 *
 * The table is bundled and does not change at run time, so what a lookup finds is remembered per
 * (vendor, model): a model with no price stays unpriced, and a priced model's match (the table's
 * provider with only the matched model in it, that model with only the prices of the token classes we
 * report: {@link REPORTED_PRICE_KEYS}) is kept, with its rates resolved ({@link RatePlan}: the price set
 * in force and its prices, rate-plan.ts). A later request is priced from the rates alone: its tokens
 * times the prices, tiers chosen by its input tokens, with the package's arithmetic in the package's
 * order, so the USD is `calcPrice`'s to the last bit (test/pricing/rate-plan.test.ts compares every
 * model of the table across random token mixes). In process, `calcPrice` on the remembered match
 * took 4–14 µs per request (medians, claude-sonnet-4-5, gpt-5, gemini-2.5-pro), the rates ~0.15 µs
 * (docs/performance.md item 96). When the rates cannot answer (a
 * dated price set whose interval has passed, a usage value the package would refuse, a model with
 * time-of-day prices) `calcPrice` is asked on the remembered match, as before, and the rates are
 * resolved again. The book belongs to one `settings.pricing` (src/limits/accounting.ts makes a new one
 * when a reload replaces it), and overrides are looked up before anything remembered.
 * Without a `table` ({@link loadPriceTable}) only the overrides price anything.
 */
export class PriceBook {
  /**
   * How many models' lookups are remembered per vendor: client-chosen model names (a provider that
   * serves any name) would otherwise grow the memo by one entry per name for the life of the book. A new
   * model past it forgets the longest-remembered one, which is looked up again if it comes back.
   */
  static readonly MAX_REMEMBERED_MODELS = 2000;


  /**
   * What lookups found, by vendor (`""` for none, `"/"` for a vendor-prefixed id of a `*-compatible`
   * kind, by its whole id) and then model: nested maps, so that a request's
   * lookup hashes its own strings rather than a key concatenated per request (docs/performance.md
   * item 120).
   */
  private readonly memo = new Map<string, Map<string, Remembered>>();

  /** `now`: the clock that picks a dated price set (ms since the epoch; tests move it). */
  constructor(
    private readonly overrides: ReadonlyMap<string, PriceOverride> = new Map(),
    private readonly table?: PriceTable,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The cost of `usage` for `model` served by the provider `providerId` of kind `kind` at `baseUrl` (its
   * configured base URL; only a `*-compatible` kind's is read). Never throws. An unpriced model's result
   * is one shared frozen object ({@link UNPRICED}).
   *
   * A `*-compatible` kind has no vendor of its own ({@link priceVendor}): its model is looked up in the
   * table's OpenRouter entry when the base URL is OpenRouter's (`openrouter.ai` or a subdomain, whose ids
   * are `vendor/model` and whose prices are its own), else under the table's provider the base URL
   * selects (the package's own match: each provider's `api_pattern` against the URL's start, as
   * `calcPrice`'s `providerApiUrl` does, and ending at the host's end: {@link patternSelectsHost}), so
   * `openai/gpt-oss-120b` at `https://api.groq.com/openai/v1` is Groq's price, not OpenAI's (until
   * 2026-12-07 only OpenRouter's URL selected its host's prices), then, for a `vendor/model` id (OpenRouter's naming,
   * `anthropic/claude-sonnet-4.5`), as `model` under `vendor` when the table knows that vendor, then by
   * the whole id alone (as every such model was until 2026-12-07, which left prefixed ids unpriced).
   */
  cost(providerId: string, kind: ProviderKind, model: string, usage: Usage, baseUrl?: string): Cost {
    // The override keys are made only when there are overrides to look up (none by default).
    if (this.overrides.size > 0) {
      const override = this.overrides.get(`${providerId}/${model}`) ?? this.overrides.get(model) ?? this.overrides.get(`${providerId}/*`);
      if (override) return { usd: overrideCost(override, usage), source: "override", unpriced: false };
    }
    if (!this.table) return UNPRICED;
    const vendor = priceVendor(kind);
    if (vendor !== undefined) return this.tableCost(vendor, vendor, model, model, usage);
    if (baseUrl !== undefined) {
      const cost = atOpenRouter(baseUrl)
        ? this.tableCost(OPENROUTER, OPENROUTER, model, model, usage)
        : this.tableCost(AT_URL + baseUrl, { url: baseUrl }, model, model, usage);
      if (!cost.unpriced) return cost;
    }
    const slash = model.indexOf("/");
    if (slash > 0 && slash < model.length - 1) {
      // Remembered under the whole id (one map for every prefix: client-chosen prefixes cannot add maps).
      const cost = this.tableCost(VENDOR_PREFIXED, model.slice(0, slash), model.slice(slash + 1), model, usage);
      if (!cost.unpriced) return cost;
    }
    return this.tableCost("", undefined, model, model, usage);
  }

  /**
   * The table's cost of `usage` for `id` under the table's provider `providerId` (undefined: by the id
   * alone; `{ url }`: the provider the table matches by that base URL as sent, {@link urlAsSent} and
   * {@link patternSelectsHost}, read only when the memo has no price for `key` yet),
   * remembered in the memo `memoKey` under `key`.
   */
  private tableCost(memoKey: string, providerId: string | { url: string } | undefined, id: string, key: string, usage: Usage): Cost {
    let byModel = this.memo.get(memoKey);
    let known = byModel?.get(key);
    if (known?.unknown) return UNPRICED;
    const cacheRead = usage.cacheReadTokens ?? 0;
    const cacheWrite = usage.cacheWriteTokens ?? 0;
    // The table counts cache reads and writes as part of the input (they are partitions of it).
    const input = (usage.inputTokens ?? 0) + cacheRead + cacheWrite;
    const output = usage.outputTokens ?? 0;
    // Of the writes, the one-hour ones: the table prices them at their own (higher) price.
    const write1h = usage.cacheWrite1hTokens ? Math.min(usage.cacheWrite1hTokens, cacheWrite) : 0;
    const plan = known?.plan;
    if (plan) {
      const usd = planCost(plan, input, output, cacheRead, cacheWrite, write1h, this.now, usage.webSearches ?? 0);
      if (usd !== undefined) return { usd, source: "price_table", unpriced: false };
    }
    const now = this.now();
    let match = known?.match;
    let result: ReturnType<PriceTable> = null;
    try {
      result = this.table!(
        {
          input_tokens: input,
          output_tokens: output,
          cache_read_tokens: cacheRead,
          cache_write_tokens: cacheWrite,
          ...(usage.cacheWrite1hTokens ? { cache_write_1h_tokens: write1h } : {}),
          ...(usage.webSearches ? { web_searches: usage.webSearches } : {}),
        },
        id,
        match
          ? { provider: match, timestamp: new Date(now) }
          : typeof providerId === "object"
            ? { providerApiUrl: urlAsSent(providerId.url), timestamp: new Date(now) }
            : providerId
              ? { providerId, timestamp: new Date(now) }
              : { timestamp: new Date(now) },
      );
      if (result && !match && typeof providerId === "object" && !patternSelectsHost(urlAsSent(providerId.url), result.provider.api_pattern)) result = null;
    } catch {
      result = null;
    }
    if (byModel === undefined) {
      if (memoKey.startsWith(AT_URL)) {
        const urls = [...this.memo.keys()].filter((k) => k.startsWith(AT_URL));
        if (urls.length >= MAX_URL_MEMOS) this.memo.delete(urls[0]!);
      }
      this.memo.set(memoKey, (byModel = new Map()));
    }
    if (known === undefined) {
      if (byModel.size >= PriceBook.MAX_REMEMBERED_MODELS) byModel.delete(byModel.keys().next().value!);
      byModel.set(key, (known = { unknown: false }));
    }
    if (!result) {
      known.unknown = true;
      known.match = undefined;
      known.plan = undefined;
      return UNPRICED;
    }
    // A model found through the provider's fallback providers keeps the provider it was found under.
    if (!match) {
      match = { ...result.provider, models: [priceOfReportedTokens(result.model)], fallback_model_providers: undefined };
      known.match = match;
    }
    known.plan = ratePlan(match.models[0]!, now);
    return { usd: result.total_price, source: "price_table", unpriced: false };
  }

  /**
   * USD per token at most for `model` served by `providerId`: the dearer of its input and output price
   * (a million tokens of each, priced as {@link cost} prices them: a tiered model at the tier a million
   * input tokens reach), or undefined when the model has no price. What a USD budget holds per expected
   * token of a request in flight (src/limits/counters.ts). Never throws.
   */
  usdPerTokenAtMost(providerId: string, kind: ProviderKind, model: string, baseUrl?: string): number | undefined {
    const input = this.cost(providerId, kind, model, { inputTokens: 1_000_000 }, baseUrl);
    if (input.unpriced || input.usd === undefined) return undefined;
    const output = this.cost(providerId, kind, model, { outputTokens: 1_000_000 }, baseUrl);
    return Math.max(input.usd, output.usd ?? 0) * PER_TOKEN;
  }
}
