/**
 * A client key's recent spend per request on this instance (SPEC 9.6, D-2), for the shared counters'
 * hold of a request in flight (src/limits/shared-counters.ts): exponential moving averages of the
 * tokens of settled requests and of their USD per token, kept in memory (each instance learns its own;
 * a restart starts from the requests' bodies alone).
 */
import type { KeyLimits, RequestEstimate } from "../../pipeline/ports.ts";
import { modelRate } from "./counters.ts";

interface KeyMean {
  /** Exponential moving average of the tokens of settled requests. */
  tokens: number;
  /** Exponential moving average of USD per token of settled priced requests; 0 before the first. */
  usdPerToken: number;
}

/** Weight of the newest settled request in a key's means. */
export const MEAN_WEIGHT = 0.3;

/** The keys' recent spend per request. */
export class KeyMeans {
  private readonly means = new Map<string, KeyMean>();

  /** Takes a settled request's spend (`tokens` > 0; `usd` 0 for an unpriced one). */
  learn(key: string, tokens: number, usd: number): void {
    const m = this.means.get(key);
    const perToken = usd > 0 ? usd / tokens : undefined;
    if (!m) this.means.set(key, { tokens, usdPerToken: perToken ?? 0 });
    else {
      m.tokens += MEAN_WEIGHT * (tokens - m.tokens);
      if (perToken !== undefined) m.usdPerToken = m.usdPerToken === 0 ? perToken : m.usdPerToken + MEAN_WEIGHT * (perToken - m.usdPerToken);
    }
  }

  /**
   * What a request of `key` is expected to spend, held against tpm and budgets while it is in flight:
   * the larger of its own input estimate (body bytes / 4) and the key's recent mean tokens per request
   * on this instance; for USD budgets those tokens at the key's recent USD per token or at what a
   * token of the request's model is expected to cost (`RequestEstimate.usdPerToken`), whichever is
   * dearer (nothing for an unpriced model).
   */
  expected(key: string, limits: KeyLimits, estimate?: RequestEstimate): { tokens: number; usd: number } {
    const budgets = limits.budgets ?? [];
    if (limits.tpm === undefined && budgets.length === 0) return { tokens: 0, usd: 0 };
    const own = estimate && Number.isFinite(estimate.tokens) && estimate.tokens > 0 ? estimate.tokens : 0;
    const m = this.means.get(key);
    const tokens = Math.max(own, m?.tokens ?? 0);
    // At least what a token of the request's model is expected to cost: a burst to a model dearer than
    // the key's recent mean holds that model's price.
    return { tokens, usd: tokens * Math.max(m?.usdPerToken ?? 0, modelRate(estimate)) };
  }
}
