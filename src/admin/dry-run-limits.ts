/**
 * The dry run's look at a client key's counted limits (SPEC 9.6): whether the guard would refuse the
 * key's next request with 429 now — a budget used up until its window resets, rpm or tpm reached this
 * minute, every concurrency slot taken — read from the counters' own reports of use (`budgetUse`,
 * `minuteUse`, `inFlight`; the admin API's key use), so a dry run counts no request and reserves
 * nothing. The refusal is worded by the guard's own function (pipeline/key-limits.ts `refusalError`):
 * the dry run says the words the client would get.
 *
 * What it cannot see: a refusal that depends on the request's own expected spend (the rest of a budget
 * or of tpm held by requests in flight), which the guard decides only as the request arrives.
 */
import type { BudgetUse, KeyLimits, LimitRefusal, MinuteUse } from "../../pipeline/ports.ts";

/** A key's use now, as the admin API's `keyUse` reads it from the counters. */
export interface KeyUseNow {
  budgets: BudgetUse[];
  inFlight: number;
  minute?: MinuteUse;
}

/**
 * The refusal the guard's counters would give a request of a key with `limits` and `use` at `now` (ms
 * since the epoch), the one with the longest wait as `admit` picks it; undefined when none applies.
 * A budget is refused when its open window's use has reached its amount (wait: until the window ends);
 * rpm and tpm when this minute's use has reached the limit (wait: `freesInMs`, else 1 s); concurrency
 * when the requests in flight fill it (wait: 1 s, as the guard says).
 */
export function standingRefusal(limits: KeyLimits, use: KeyUseNow, now: number): LimitRefusal | undefined {
  let refusal: LimitRefusal | undefined;
  const refuse = (r: LimitRefusal) => {
    if (!refusal || r.retryAfterMs > refusal.retryAfterMs) refusal = r;
  };
  for (const b of use.budgets) {
    const max = b.budget.usd ?? b.budget.tokens;
    if (max === undefined || b.resetsAt === undefined || b.resetsAt <= now || b.used < max) continue;
    refuse({ limit: "budget", budget: b.budget, used: b.used, max, retryAfterMs: b.resetsAt - now, resetsAt: b.resetsAt });
  }
  const rpm = use.minute?.requests;
  if (limits.rpm !== undefined && rpm && rpm.used >= limits.rpm) refuse({ limit: "rpm", used: limits.rpm, max: limits.rpm, retryAfterMs: rpm.freesInMs ?? 1000 });
  const tpm = use.minute?.tokens;
  if (limits.tpm !== undefined && tpm && tpm.used >= limits.tpm) refuse({ limit: "tpm", used: tpm.used, max: limits.tpm, retryAfterMs: tpm.freesInMs ?? 1000 });
  if (limits.concurrency !== undefined && use.inFlight >= limits.concurrency) refuse({ limit: "concurrency", used: use.inFlight, max: limits.concurrency, retryAfterMs: 1000 });
  return refusal;
}
