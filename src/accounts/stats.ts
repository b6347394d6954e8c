/**
 * Recent health of each account for the `scored` strategy (SPEC A-3): a time-decayed success rate
 * and a latency EWMA. In memory only (a restart starts every account fresh). O(1) per update/read.
 */

import type { Classification } from "../../pipeline/index.ts";

/**
 * SPEC 6.3's rows of a rate limit or an overload (429, 529, in-band overloaded), a quota lock (a 429 or 403
 * saying the quota is used up or the account blocked) and a 402: a cooldown or lock keeps the account out while
 * it holds, so they are left out of the scored success rate ({@link AccountStats.rateLimited}; SPEC A-3 scores remaining quota apart).
 */
export const RATE_LIMIT_ROWS: ReadonlySet<Classification["row"]> = new Set(["rate_limit_with_reset", "rate_limit_per_minute", "rate_limit_backoff", "quota_exhausted", "payment_required"]);

/** Success and failure counts lose half their weight every 5 minutes ("recent" success rate). */
export const SUCCESS_HALF_LIFE_MS = 5 * 60_000;
/** Weight of the newest latency sample in the EWMA. */
export const LATENCY_ALPHA = 0.3;
/** Virtual successes every account starts with, so a fresh account rates 1 and one failure 0.5. */
export const SUCCESS_PRIOR = 1;

interface Entry {
  ok: number;
  failed: number;
  /** Rate-limited attempts ({@link AccountStats.rateLimited}), decayed as `failed`: shown, not scored. */
  limited: number;
  at: number;
  /** Successes and failures recorded since the instance started, not decayed (what `shown` counts). */
  okCount: number;
  failedCount: number;
  latencyMs?: number;
}

/** Per-account success rate (decayed) and latency EWMA. */
export class AccountStats {
  private readonly m = new Map<string, Entry>();

  private decayed(id: string, now: number): Entry {
    let e = this.m.get(id);
    if (!e) {
      e = { ok: 0, failed: 0, limited: 0, at: now, okCount: 0, failedCount: 0 };
      this.m.set(id, e);
      return e;
    }
    const dt = now - e.at;
    if (dt > 0) {
      const f = Math.pow(0.5, dt / SUCCESS_HALF_LIFE_MS);
      e.ok *= f;
      e.failed *= f;
      e.limited *= f;
      e.at = now;
    }
    return e;
  }

  /** Records a committed reply and its latency to the first byte (ms). */
  success(id: string, latencyMs: number, now: number): void {
    const e = this.decayed(id, now);
    e.ok += 1;
    e.okCount += 1;
    if (Number.isFinite(latencyMs) && latencyMs >= 0) {
      e.latencyMs = e.latencyMs === undefined ? latencyMs : LATENCY_ALPHA * latencyMs + (1 - LATENCY_ALPHA) * e.latencyMs;
    }
  }

  /** Records a failed attempt that was the account's fault (not the request's). */
  failure(id: string, now: number): void {
    const e = this.decayed(id, now);
    e.failed += 1;
    e.failedCount += 1;
  }

  /**
   * Records an attempt the upstream answered with a rate limit, an overload, a used-up quota or a 402 (a
   * 429, a 529: SPEC 6.3's cooldown and quota-lock rows, {@link RATE_LIMIT_ROWS}): a failed attempt as a user reads it ({@link shown}), but not in {@link successRate},
   * which the `scored` strategy reads (SPEC A-3): the cooldown or lock keeps the account out while the limit
   * holds, and a failure's weight (half-life 5 minutes) would keep new conversations on a lower-priority
   * account for minutes after it ended.
   */
  rateLimited(id: string, now: number): void {
    const e = this.decayed(id, now);
    e.limited += 1;
    e.failedCount += 1;
  }

  /**
   * The account's success as a user reads it (accounts status, the dashboard): `rate`, 0–1, the share
   * of the recorded attempts that succeeded, each weighing half as much every {@link SUCCESS_HALF_LIFE_MS}
   * (recent ones weigh most), without the scoring's virtual success ({@link SUCCESS_PRIOR}): an account
   * with no success reads 0, and the share does not change while the account is idle (every weight
   * halves alike). `succeeded` and `failed` count those attempts since the instance started, not
   * weighted. Undefined when none was recorded.
   */
  shown(id: string): { rate: number; succeeded: number; failed: number } | undefined {
    const e = this.m.get(id);
    if (!e || e.okCount + e.failedCount === 0) return undefined;
    const sum = e.ok + e.failed + e.limited;
    // Weights that underflowed to 0 after a long idle time leave the counts' own share.
    const rate = sum > 0 ? e.ok / sum : e.okCount / (e.okCount + e.failedCount);
    return { rate, succeeded: e.okCount, failed: e.failedCount };
  }

  /**
   * (successes + prior) / (successes + failures + prior), over decayed counts: 1 for a fresh account.
   * Rate-limited attempts ({@link rateLimited}) are left out.
   */
  successRate(id: string, now: number): number {
    const e = this.m.get(id);
    if (!e) return 1;
    const f = Math.pow(0.5, Math.max(0, now - e.at) / SUCCESS_HALF_LIFE_MS);
    const ok = e.ok * f;
    const failed = e.failed * f;
    return (ok + SUCCESS_PRIOR) / (ok + failed + SUCCESS_PRIOR);
  }

  /** Whether any success or failure of the account was recorded (on this instance, since it started). */
  seen(id: string): boolean {
    return this.m.has(id);
  }

  /** Forgets everything (admin reset, tests). */
  clear(): void {
    this.m.clear();
  }

  /** Latency EWMA in ms, undefined before the first success. */
  latency(id: string): number | undefined {
    return this.m.get(id)?.latencyMs;
  }
}
