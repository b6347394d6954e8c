/**
 * Client key limits (SPEC 9.6), checked by the guard before routing: the model allow-list (403) and,
 * through the {@link KeyLimitCounters} port, rates, concurrency and budgets (429 with Retry-After).
 * Refusals are in the client's own format and name the limit and when it resets (SPEC 2.4).
 *
 * A request admitted here holds a concurrency slot (and a reservation of its expected tokens against
 * tpm and budgets, {@link estimateTokensOfBody}, and of their USD against a USD budget,
 * {@link usdPerTokenOf}) until `settle` is called for it, once, when it ends (src/app.ts `finish`),
 * with the tokens and cost it used.
 */
import { hubError, type HubError } from "../formats/hub.ts";
import { bodyBytes, errorAnswer, isCountTokens, NO_RETRY_HEADER, responseHeaders, tryHubOf, type RequestContext } from "./context.ts";
import { estimateInputTokens } from "./predicates.ts";
import { keyId } from "./key-id.ts";
import type { BudgetWindow, KeyBudget, KeyLimitCounters, KeyLimits, LimitRefusal, RequestEstimate } from "./ports.ts";
import { resolveModel, type RoutingTable, type Target } from "./resolve.ts";
import { formatWait } from "../formats/wait-words.ts";
import { usdWords } from "../formats/usd-words.ts";

export { formatWait } from "../formats/wait-words.ts";

/** Length of each budget window, ms. */
export const BUDGET_WINDOW_MS: Record<BudgetWindow, number> = {
  "5h": 5 * 3_600_000,
  "1d": 86_400_000,
  "7d": 7 * 86_400_000,
  "30d": 30 * 86_400_000,
};

/**
 * Whether `model` (the name the client asked for, after G-5's suffix strip) is in the allow-list:
 * an exact model name, alias or combo name, or a `provider/*` pattern matching `provider/anything`.
 * No allow-list allows every model.
 */
export function modelAllowed(limits: KeyLimits | undefined, model: string): boolean {
  const list = limits?.models;
  if (!list) return true;
  for (const entry of list) {
    if (entry === model) return true;
    if (entry.endsWith("/*") && model.startsWith(entry.slice(0, -1)) && model.length > entry.length - 1) return true;
  }
  return false;
}

/**
 * Whether a target the router adds on its own, a capacity adapter's (SPEC R-3), may serve a request of
 * a key whose `models` allow-list is `list` (SPEC 9.6: "a model outside the allow-list → 403"): the
 * adapter's configured name `name` is allowed as a requested name is ({@link modelAllowed}), or the
 * target's `provider/model` is (an exact entry or a `provider/*` pattern), or an alias or combo the list
 * names resolves to that `provider/model` in `table` (a key allowed `vision` may be served what `vision`
 * names). No list allows every target. The allow-list entries are resolved once, at the first target
 * neither of the first two allows.
 */
export function allowListReach(list: readonly string[] | undefined, table: RoutingTable): (name: string, target: Target) => boolean {
  if (!list) return () => true;
  const limits: KeyLimits = { models: [...list] };
  let reached: Set<string> | undefined;
  return (name, target) => {
    const served = `${target.provider.id}/${target.model}`;
    if (modelAllowed(limits, name) || modelAllowed(limits, served)) return true;
    if (!reached) {
      reached = new Set();
      for (const entry of list) {
        if (entry.endsWith("/*")) continue;
        const r = resolveModel(entry, table);
        if (!("kind" in r)) for (const t of r.targets) reached.add(`${t.provider.id}/${t.model}`);
      }
    }
    return reached.has(served);
  };
}

/**
 * The refusal of a model outside a key's allow-list (SPEC 9.6), worded once for the guard's 403 and the
 * admin dry run's: names the key, the model asked for and what its `models` limit allows.
 */
export function modelNotAllowedMessage(keyName: string, model: string, limits: KeyLimits): string {
  return `Client key "${keyName}" may not use the model "${model}"; its models limit allows: ${(limits.models ?? []).join(", ")}.`;
}

/**
 * Tokens a request body of `bytes` UTF-8 bytes is expected to carry as input: bytes / 4, rounded up
 * (the usual characters-per-token rule of thumb; JSON punctuation and field names make it generous).
 * Used before a request is served (its reservation against tpm and budgets) and for a served reply
 * whose provider reported no usage (src/limits/accounting.ts).
 */
export function estimateTokensOfBody(bytes: number): number {
  return Math.ceil(bytes / 4);
}

/**
 * The input tokens of a served request whose provider reported no usage (src/limits/accounting.ts):
 * estimated from its parsed body as the local token count does ({@link estimateInputTokens}: text
 * characters / 4 plus a flat amount per image or other media, so a base64 image is not counted by its
 * size), else from its size ({@link estimateTokensOfBody}) when the body cannot be parsed.
 */
export function estimateInputOfRequest(ctx: RequestContext): number {
  const hub = tryHubOf(ctx);
  return hub ? estimateInputTokens(hub) : estimateTokensOfBody(ctx.releasedBytes ?? bodyBytes(ctx).byteLength);
}

/** Whether any counted limit (everything but the allow-list) is set. */
export function hasCountedLimits(limits: KeyLimits | undefined): limits is KeyLimits {
  return !!limits && (limits.rpm !== undefined || limits.tpm !== undefined || limits.concurrency !== undefined || (limits.budgets?.length ?? 0) > 0);
}

/**
 * `1,234,567` for token counts, `$25.00` for USD (`$0.0123` under $1, two significant digits under
 * $0.001: `$0.00012`, never `$0.0000` for a spend; until 2026-12-07 four decimals down to $0.0001, so a
 * budget of $0.0001 read "($0.0001 used)" for $0.00012 spent). USD as formats/usd-words.ts writes it, the
 * rule `keys list`, `usage` and the dashboard share (src/limits/dollars.ts).
 */
export function formatBudgetAmount(budget: KeyBudget, value: number): string {
  if (budget.usd === undefined) return `${Math.round(value).toLocaleString("en-US")} tokens`;
  return usdWords(value);
}

/**
 * The error for a refused request (SPEC 2.4): the model allow-list → 403 `permission`; everything
 * else → 429 `rate_limit` with `retryAfterSeconds`, and for a budget used up `usageLimitResetsAt`
 * (code `key_budget_exceeded`). The message names the key, the limit and when it resets (an ISO-8601
 * UTC time).
 */
export function refusalError(keyName: string, refusal: LimitRefusal, now: number): HubError {
  const resetAt = new Date(refusal.resetsAt ?? now + refusal.retryAfterMs).toISOString().replace(/\.\d{3}Z$/, "Z");
  const wait = `${formatWait(refusal.retryAfterMs)} (at ${resetAt})`;
  // Inside parentheses the time is set off by a comma: "(in about 1 s, at …Z)", not "(in about 1 s (at …Z))".
  const whenOneFinishes = `retry when one finishes (in about ${formatWait(refusal.retryAfterMs)}, at ${resetAt})`;
  const inFlight = (n: number) => `${n} ${n === 1 ? "request" : "requests"} in flight`;
  // "1 token per minute", not "1 tokens" (as the rpm's "1 request per minute").
  const tpm = (n: number) => `${n.toLocaleString("en-US")} ${n === 1 ? "token" : "tokens"} per minute`;
  let message: string;
  switch (refusal.limit) {
    case "rpm":
      message = `Client key "${keyName}" is over its limit of ${refusal.max} ${refusal.max === 1 ? "request" : "requests"} per minute (rpm); retry in ${wait}.`;
      break;
    case "tpm":
      message = refusal.heldElsewhere
        ? `Client key "${keyName}" has the rest of its ${tpm(refusal.max)} (tpm; ${Math.round(refusal.used).toLocaleString("en-US")} used) held by requests in flight on other instances; retry in about ${wait}.`
        : refusal.inFlight !== undefined
          ? `Client key "${keyName}" has ${inFlight(refusal.inFlight)} that may use the rest of its ${tpm(refusal.max)} (tpm; ${Math.round(refusal.used).toLocaleString("en-US")} used); ${whenOneFinishes}.`
          : `Client key "${keyName}" used ${Math.round(refusal.used).toLocaleString("en-US")} of its ${tpm(refusal.max)} (tpm); retry in ${wait}.`;
      break;
    case "concurrency":
      message = refusal.slotsElsewhere
        ? `Client key "${keyName}" already has ${inFlight(refusal.used)} across instances (${refusal.slotsElsewhere.here} on this one), its concurrency limit of ${refusal.max}; ${whenOneFinishes}. A slot held by an instance that stopped answering is freed within ${formatWait(refusal.slotsElsewhere.freedWithinMs)}.`
        : `Client key "${keyName}" already has ${inFlight(refusal.used)}, its concurrency limit of ${refusal.max}; ${whenOneFinishes}.`;
      break;
    case "budget": {
      const b = refusal.budget!;
      message = refusal.heldElsewhere
        ? `Client key "${keyName}" has the rest of its ${b.window} budget of ${formatBudgetAmount(b, refusal.max)} (${formatBudgetAmount(b, refusal.used)} used) held by requests in flight on other instances; retry in about ${wait}.`
        : refusal.inFlight !== undefined
          ? `Client key "${keyName}" has ${inFlight(refusal.inFlight)} that may use the rest of its ${b.window} budget of ${formatBudgetAmount(b, refusal.max)} (${formatBudgetAmount(b, refusal.used)} used); ${whenOneFinishes}.`
          : `Client key "${keyName}" has used its ${b.window} budget of ${formatBudgetAmount(b, refusal.max)} (${formatBudgetAmount(b, refusal.used)} used); the window resets in ${wait}.`;
      break;
    }
  }
  // A refusal that lasts until requests in flight end is a rate limit, not a spent budget.
  const spent = refusal.limit === "budget" && refusal.inFlight === undefined && !refusal.heldElsewhere;
  const err = hubError("rate_limit", message, {
    code: spent ? "key_budget_exceeded" : "key_rate_limit_exceeded",
    retryAfterSeconds: Math.max(1, Math.ceil(refusal.retryAfterMs / 1000)),
  });
  // A used-up budget is a usage limit reached (Codex reports it as such, formats/openai-responses/errors.ts).
  if (spent) err.usageLimitResetsAt = refusal.resetsAt ?? now + refusal.retryAfterMs;
  return err;
}

/**
 * The longest Retry-After, seconds, of a key-limit 429 that an SDK may still retry by itself. The
 * official SDKs retry a 429 twice by default unless the reply says `x-should-retry: false`
 * (openai-node and anthropic-sdk-typescript `shouldRetry`), and wait as their `retryRequest` decides:
 * openai-node waits the Retry-After only when it is at most 60 s, otherwise 0.5–8 s of its own backoff
 * (so a longer wait is retried at once and refused again: each refusal reached the gateway three times);
 * anthropic-sdk-typescript waits any Retry-After up to 2^31−1 ms (so a day's wait hangs the call for a
 * day before the retry, try20 D1). Up to 60 s both wait out exactly the Retry-After, after which an rpm,
 * tpm or concurrency refusal is likely to pass: those stay retryable.
 */
export const SDK_RETRY_WAIT_MAX_S = 60;

/**
 * Whether a key-limit refusal should tell the SDKs not to retry it ({@link NO_RETRY_HEADER}): a used-up
 * budget (code `key_budget_exceeded`: no retry helps before its window resets), and any refusal whose
 * Retry-After is over {@link SDK_RETRY_WAIT_MAX_S}. The Retry-After stays, for clients that read it
 * (Claude Code, Gemini CLI) and for the user.
 */
export function refusalNotRetryable(err: HubError): boolean {
  return err.code === "key_budget_exceeded" || (err.retryAfterSeconds ?? 0) > SDK_RETRY_WAIT_MAX_S;
}

/** How {@link checkKeyLimits} prices a token of the requested model: a target's price, and the routing table. */
export interface TokenPricing {
  /**
   * USD a token of a target is expected to cost (its model's learned cost per token, or before one of
   * its requests settled the dearer of its input and output price), undefined when unpriced.
   */
  price: (target: Target) => number | undefined;
  routing: () => RoutingTable;
}

/**
 * USD a token of a request naming `model` is expected to cost (SPEC 9.5): the dearest of its targets'
 * prices (a `provider/model`, or every target of an alias or combo, whichever the order would choose),
 * each as {@link TokenPricing.price} gives it; undefined when the name resolves to nothing priced.
 * A few map lookups and a price lookup per target; asked only for a key with a USD budget.
 */
export function usdPerTokenOf(model: string, pricing: TokenPricing): number | undefined {
  const r = resolveModel(model, pricing.routing());
  if ("kind" in r) return undefined;
  let most: number | undefined;
  for (const t of r.targets) {
    const p = pricing.price(t);
    if (p !== undefined && Number.isFinite(p) && p > 0 && (most === undefined || p > most)) most = p;
  }
  return most;
}

/**
 * The guard's limit check (SPEC 9.6) for a request that presented a key: the allow-list, then the
 * counters (not for a token count, which calls no model). Sets `ctx.limitsAdmitted` when the counters counted the request (it must then be settled).
 * What the request is expected to spend goes with it: its body's tokens ({@link estimateTokensOfBody})
 * and, for a key with a USD budget, what a token of its model is expected to cost ({@link usdPerTokenOf},
 * with `pricing`; the counters hold at least that). Returns the refusal Response (with
 * `x-should-retry: false` when {@link refusalNotRetryable}), or undefined when the request may go on.
 */
export async function checkKeyLimits(ctx: RequestContext, counters: KeyLimitCounters | undefined, now: number, pricing?: TokenPricing): Promise<Response | undefined> {
  const key = ctx.key;
  const limits = key?.limits;
  if (!key || !limits) return undefined;
  if (!modelAllowed(limits, ctx.requestedModel)) {
    const err = hubError("permission", modelNotAllowedMessage(key.name, ctx.requestedModel, limits), { code: "model_not_allowed", param: "model" });
    ctx.trace.decisions.push({ subject: "guard", verdict: "out", reason: `key ${key.name}: model not in its allow-list` });
    return errorAnswer(ctx, err);
  }
  // A token count (`count_tokens`, `:countTokens`) calls no model and costs nothing (Anthropic limits it
  // apart from messages): it is neither counted by nor refused for the key's rpm, tpm, budgets or
  // concurrency; the key and its allow-list above still apply.
  if (!counters || !hasCountedLimits(limits) || isCountTokens(ctx.endpoint)) return undefined;
  const estimate: RequestEstimate = { tokens: estimateTokensOfBody(bodyBytes(ctx).byteLength) };
  if (pricing && limits.budgets?.some((b) => b.usd !== undefined)) {
    const usdPerToken = usdPerTokenOf(ctx.requestedModel, pricing);
    if (usdPerToken !== undefined) estimate.usdPerToken = usdPerToken;
  }
  const verdict = await counters.admit(keyId(key), limits, now, estimate);
  if (verdict.ok) {
    ctx.limitsAdmitted = true;
    if (verdict.ticket !== undefined) ctx.limitsTicket = verdict.ticket;
    return undefined;
  }
  const err = refusalError(key.name, verdict.refusal, now);
  ctx.trace.decisions.push({ subject: "guard", verdict: "out", reason: `key ${key.name}: ${verdict.refusal.limit === "budget" ? `${verdict.refusal.budget!.window} budget` : verdict.refusal.limit} limit` });
  const headers = responseHeaders(ctx);
  if (refusalNotRetryable(err)) headers.set(NO_RETRY_HEADER, "false");
  return errorAnswer(ctx, err, headers);
}
