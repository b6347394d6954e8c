/**
 * What a finished request costs and spends (SPEC 9.5, 9.6): prices its usage row and settles the
 * client key's limit counters with the tokens and USD it used. Called once per request from the app's
 * `finish`, after the reply ended; no I/O (shared counters settle in the background). A priced
 * request multiplies its tokens by its model's remembered rates ({@link PriceBook}, ~0.15 µs; tiers
 * chosen by the request's usage); the price table's own calculation runs on a model's first request,
 * when a dated price set's interval has passed, and on every request of a model with time-of-day prices.
 * Each priced request also teaches its model's USD per token ({@link RequestAccounting.expectedUsdPerToken}),
 * what a later request to that model holds against a USD budget while it is in flight.
 */
import type { ProviderKind } from "../../formats/codec.ts";
import type { StopReason } from "../../formats/hub.ts";
import { estimateInputOfRequest, estimateOutputTokens, isCountTokens, keyId, type BilledAttempt, type RequestContext } from "../../pipeline/index.ts";
import type { BilledShare, BudgetChange, ClientKey, UsageRecord, UsageShare } from "../../pipeline/ports.ts";
import { PriceBook, type PriceOverride, type PriceTable } from "../pricing/prices.ts";
import { roundUsd } from "./dollars.ts";
import type { KeyLimitCounters } from "../../pipeline/ports.ts";

/** The provider and model that served a request (the base URL: a `*-compatible` kind's price lookup, PriceBook.cost). */
export interface ServedBy {
  provider: { id: string; kind: ProviderKind; baseUrl?: string };
  model: string;
}

/** Dependencies of {@link RequestAccounting}. */
export interface AccountingDeps {
  /** `settings.pricing` of the configuration in force (a new map after a reload). */
  pricing: () => ReadonlyMap<string, PriceOverride>;
  /** The price table ({@link loadPriceTable}); without it only `settings.pricing` prices requests. */
  priceTable?: PriceTable;
  counters: KeyLimitCounters;
  /** Budget changes of a settled request, for `quota_threshold` alerts (SPEC 9.7); `key` is the key's id (pipeline/key-id.ts). */
  onBudgetChange?: (key: string, changes: BudgetChange[], now: number) => void;
  /** Where a warning goes (one JSON line); default: nowhere. */
  log?: (line: string) => void;
}

/** Tokens a request counts against `tpm` and token budgets: all input (cache reads and writes included) plus output. */
export function countedTokens(usage: UsageRecord["usage"]): number {
  return (usage.inputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + (usage.outputTokens ?? 0);
}

/** The sum of two usages, a new object: each count present in either is added; absent in both stays absent. */
export function sumUsage(a: UsageRecord["usage"], b: UsageRecord["usage"]): UsageRecord["usage"] {
  const out: UsageRecord["usage"] = {};
  for (const k of USAGE_COUNTS) {
    const x = a[k];
    const y = b[k];
    if (x !== undefined || y !== undefined) out[k] = (x ?? 0) + (y ?? 0);
  }
  return out;
}

const USAGE_COUNTS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "cacheWrite1hTokens", "reasoningTokens", "webSearches"] as const;

/** Weight of the newest settled request in a model's learned USD per token ({@link RequestAccounting.expectedUsdPerToken}). */
const RATE_WEIGHT = 0.3;

/**
 * How many (key, provider/model) pairs the unpriced-model warning names per process; past them one
 * line says further ones are not named, and {@link RequestAccounting.unnamedUnpriced} counts their
 * requests. Client-chosen model names (a provider that serves any name) would otherwise make a line
 * and a remembered pair per request, as the metrics' model labels are capped (src/http/metrics.ts).
 */
export const MAX_UNPRICED_WARNINGS = 100;

/**
 * The log warning of a key with a USD budget and a model that has no price (RequestAccounting
 * `warnUnpriced`): true of the served model and of a failed attempt's, and of a partly unpriced request.
 */
export const UNPRICED_WARNING =
  "a key with a USD budget used a model that has no price (to serve a request or in a failed attempt): what that model used is not counted against the budget; give the model a price in settings.pricing";

/**
 * How many models' learned rates ({@link RequestAccounting.expectedUsdPerToken}) are kept per provider;
 * a new model past it forgets the least recently learned one (which falls back to its price-table bound).
 */
export const MAX_LEARNED_RATES = 1000;

/** Prices requests and settles key limits; see the module comment. */
export class RequestAccounting {
  private book?: PriceBook;
  private bookFor?: ReadonlyMap<string, PriceOverride>;
  /**
   * USD per counted token ({@link countedTokens}) of each model's priced requests so far, an exponential
   * moving average, by provider id then upstream model; emptied with the price book.
   */
  private rates = new Map<string, Map<string, number>>();
  /** `key\0provider/model` pairs already warned about (a USD budget that cannot count the model). */
  private readonly warnedUnpriced = new Set<string>();
  /**
   * Requests of USD-budget keys served by unpriced models whose pair was not named because
   * {@link MAX_UNPRICED_WARNINGS} pairs already were (a request of an already named pair is not counted).
   */
  unnamedUnpriced = 0;

  constructor(private readonly deps: AccountingDeps) {}

  /** The price book of the pricing in force (rebuilt when a reload replaced it; the learned rates go with the old one). */
  prices(): PriceBook {
    const pricing = this.deps.pricing();
    if (!this.book || this.bookFor !== pricing) {
      this.book = new PriceBook(pricing, this.deps.priceTable);
      this.bookFor = pricing;
      if (this.rates.size > 0) this.rates = new Map();
    }
    return this.book;
  }

  /**
   * USD a counted token of `model` served by `providerId` is expected to cost (SPEC 9.5, 9.6): what its
   * priced requests cost per token so far in this process (their mix of input, cache and output), or,
   * before one settled, the dearer of its input and output price ({@link PriceBook.usdPerTokenAtMost},
   * an upper bound); undefined when the model has no price. What a request in flight to it holds per
   * expected token against a USD budget, at least (src/limits/counters.ts). Two map reads once learned.
   */
  expectedUsdPerToken(providerId: string, kind: ProviderKind, model: string, baseUrl?: string): number | undefined {
    const book = this.prices();
    return this.rates.get(providerId)?.get(model) ?? book.usdPerTokenAtMost(providerId, kind, model, baseUrl);
  }

  /** Adds a settled priced request's USD per counted token to its model's {@link rates}. */
  private learnRate(served: ServedBy, perToken: number): void {
    let byModel = this.rates.get(served.provider.id);
    if (byModel === undefined) this.rates.set(served.provider.id, (byModel = new Map()));
    const was = byModel.get(served.model);
    if (was === undefined) {
      if (byModel.size >= MAX_LEARNED_RATES) byModel.delete(byModel.keys().next().value!);
    } else byModel.delete(served.model); // re-inserted last: the map's order is least recently learned first
    byModel.set(served.model, was === undefined ? perToken : was + RATE_WEIGHT * (perToken - was));
  }

  /**
   * Sets `rec.costUsd` / `rec.unpriced` from `rec.usage` and what served the request (nothing served:
   * no cost), then settles the key's counters when the guard admitted the request under its limits.
   *
   * A reply that reached the client (`rec.ttfbMs` set) while the provider reported no usage at all
   * (`rec.estimated`: a Chat stream cut before its final usage chunk by the client or the upstream, a
   * provider that never sends usage) still cost its input: `rec.usage.inputTokens` is set to the
   * request body's estimate ({@link estimateInputOfRequest}), so the row (marked estimated), its cost,
   * tpm and budgets count it instead of a silent zero; and its output the estimate of what reached the
   * client: `reply.outputChars` (the characters of text, reasoning and tool arguments the reply driver
   * saw, pipeline/output-estimate.ts; read only here) by the same /4 rule ({@link estimateOutputTokens}).
   *
   * A reply cut after its usage began but before its provider's finish (the client left or the
   * upstream broke, `reply.stopReason` null: an Anthropic stream cut before its `message_delta` has
   * reported only `message_start`'s `output_tokens`, usually 1) counts as output the larger of what the
   * provider had reported and the same estimate of what reached the client, and is then marked
   * estimated when the estimate is used. A reply that ended normally, or after its finish, keeps the
   * provider's figures (the estimate is not even read: a passthrough decodes what it kept to count it).
   */
  finish(ctx: RequestContext, rec: UsageRecord, served: ServedBy | undefined, now: number, reply?: { readonly outputChars: number; readonly stopReason?: StopReason | null }): void {
    if (rec.estimated && served && rec.ttfbMs !== undefined && rec.usage.inputTokens === undefined && rec.usage.outputTokens === undefined && !isCountTokens(ctx.endpoint)) {
      const output = estimateOutputTokens(reply?.outputChars ?? 0);
      rec.usage = output > 0 ? { ...rec.usage, inputTokens: estimateInputOfRequest(ctx), outputTokens: output } : { ...rec.usage, inputTokens: estimateInputOfRequest(ctx) };
    } else if (!rec.estimated && rec.outcome !== "ok" && reply?.stopReason === null && served && rec.ttfbMs !== undefined && !isCountTokens(ctx.endpoint)) {
      const output = estimateOutputTokens(reply.outputChars);
      if (output > (rec.usage.outputTokens ?? 0)) {
        rec.usage = { ...rec.usage, outputTokens: output };
        rec.estimated = true;
      }
    }
    let tokens = countedTokens(rec.usage);
    if (served && tokens > 0) {
      const cost = this.prices().cost(served.provider.id, served.provider.kind, served.model, rec.usage, served.provider.baseUrl);
      if (cost.usd !== undefined) rec.costUsd = roundUsd(cost.usd);
      if (cost.unpriced) {
        rec.unpriced = true;
        this.warnIfBudget(ctx, served);
      } else if (cost.usd !== undefined && cost.usd > 0 && Number.isFinite(cost.usd)) this.learnRate(served, cost.usd / tokens);
    }
    if (ctx.billed !== undefined && !isCountTokens(ctx.endpoint)) tokens += this.addBilled(ctx, rec, ctx.billed);
    if (ctx.limitsAdmitted && ctx.key?.limits) {
      ctx.limitsAdmitted = false;
      this.settleLimits(ctx, ctx.key, ctx.key.limits, rec, tokens, now);
    }
  }

  /**
   * Adds the usage of the request's failed attempts that their providers reported (`ctx.billed`: a
   * whole reply the gateway could not pass on, a stream that broke before its first content; SPEC 9.5,
   * O-1: the provider bills them) to `rec`: their tokens to its usage, and each one's cost, priced by
   * its own provider and model, to its cost (one rounding of the sum); an attempt of an unpriced
   * model marks the row `unpriced`. The served reply's usage (already in `rec`) is another attempt's,
   * so nothing is counted twice. Each attempt's share is kept in `rec.split` under its own provider,
   * model and account (the served reply's apart), so that usage by provider, model and account, money
   * spent against subscriptions' use, and the token metrics count it where it was spent. Returns the
   * counted tokens added ({@link countedTokens}). The learned USD per token stays the served replies'.
   */
  private addBilled(ctx: RequestContext, rec: UsageRecord, billed: readonly BilledAttempt[]): number {
    let added = 0;
    let usd: number | undefined;
    let shares: BilledShare[] | undefined;
    const served: UsageShare = { usage: rec.usage };
    if (rec.costUsd !== undefined) served.costUsd = rec.costUsd;
    if (rec.unpriced) served.unpriced = true;
    for (const b of billed) {
      const tokens = countedTokens(b.usage);
      if (tokens === 0) continue;
      added += tokens;
      rec.usage = sumUsage(rec.usage, b.usage);
      const share: BilledShare = { providerId: b.target.provider.id, model: b.target.model, usage: b.usage };
      if (b.accountId !== undefined) share.accountId = b.accountId;
      const cost = this.prices().cost(b.target.provider.id, b.target.provider.kind, b.target.model, b.usage, b.target.provider.baseUrl);
      if (cost.usd !== undefined && Number.isFinite(cost.usd)) {
        // each share's cost as stored (12 significant digits); the row's is their sum, rounded once more
        share.costUsd = roundUsd(cost.usd);
        usd = (usd ?? 0) + share.costUsd;
      }
      if (cost.unpriced) {
        share.unpriced = true;
        rec.unpriced = true;
        this.warnIfBudget(ctx, b.target);
      }
      (shares ??= []).push(share);
    }
    // rec.costUsd is the served reply's cost (to 12 significant digits): the rest added, then rounded once more.
    if (usd !== undefined) rec.costUsd = roundUsd((rec.costUsd ?? 0) + usd);
    if (shares) rec.split = { served, billed: shares };
    return added;
  }

  /** {@link warnUnpriced} for a key with a USD budget. */
  private warnIfBudget(ctx: RequestContext, served: ServedBy): void {
    if (ctx.key?.limits?.budgets?.some((b) => b.usd !== undefined)) this.warnUnpriced(ctx.key.name, served);
  }

  /**
   * A counted request's use of its key's limits (SPEC 9.6), settled. A method of its own, so that the
   * callback it makes (which holds the key and the time) does not make `finish` allocate their scope for
   * every request, with a key or not (JavaScriptCore makes a function's captured variables at its entry:
   * docs/performance.md item 255).
   */
  private settleLimits(ctx: RequestContext, clientKey: ClientKey, limits: NonNullable<ClientKey["limits"]>, rec: UsageRecord, tokens: number, now: number): void {
    // The key's id, not its name: a key created with a revoked key's name counts afresh.
    const key = keyId(clientKey);
    // An unpriced request adds nothing to a USD budget's spend but one to its window's unpriced count
    // (what GET /admin/api/keys lists, with no usage query: review19 R5); only its priced attempts'
    // cost, when some of its attempts were priced (addBilled).
    const spent = rec.unpriced ? { tokens, usd: rec.costUsd ?? 0, unpriced: true } : { tokens, usd: rec.costUsd ?? 0 };
    const changes = this.deps.counters.settle(key, limits, spent, now, ctx.limitsTicket);
    const report = (c: BudgetChange[]) => {
      if (c.length > 0) this.deps.onBudgetChange?.(key, c, now);
    };
    // The shared counters settle in the background: the reply has already ended.
    if (changes instanceof Promise) void changes.then(report, () => {});
    else report(changes);
  }

  /**
   * A key with a USD budget used a model that has no price, to serve a request or in a failed attempt
   * the provider billed (addBilled): what that model used costs an unknown amount, which no USD budget
   * can count (SPEC 9.5 `unpriced`; a partly unpriced request's priced part is counted). Says so once
   * per key and model (until session 47 it said the key's requests were not counted, untrue for a
   * partly unpriced request and for a failed attempt's model, which served nothing), with
   * the fix (a `settings.pricing` entry), instead of letting the budget read $0 in silence. Names at
   * most {@link MAX_UNPRICED_WARNINGS} pairs per process, then says once that further ones are not named.
   */
  private warnUnpriced(keyName: string, served: ServedBy): void {
    const model = `${served.provider.id}/${served.model}`;
    const id = `${keyName}\u0000${model}`;
    if (this.warnedUnpriced.has(id)) return;
    if (this.warnedUnpriced.size >= MAX_UNPRICED_WARNINGS) {
      if (this.unnamedUnpriced++ === 0) {
        this.deps.log?.(
          JSON.stringify({
            level: "warn",
            time: Date.now(),
            msg: `more keys with a USD budget used models that have no price; past ${MAX_UNPRICED_WARNINGS} (key, model) pairs they are not named in the log; the Keys page and GET /admin/api/keys count each budget's unpriced requests`,
            key: keyName,
            model,
          }),
        );
      }
      return;
    }
    this.warnedUnpriced.add(id);
    this.deps.log?.(
      JSON.stringify({
        level: "warn",
        time: Date.now(),
        msg: UNPRICED_WARNING,
        key: keyName,
        model,
      }),
    );
  }
}
