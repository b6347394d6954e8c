/**
 * The attempt loop's budget rules (SPEC 6.1: at most `max_attempts` attempts and a pre-commit deadline;
 * 6.2: same-account retries; 6.3: the header timeout), kept so that the candidates after the current
 * one (the target's other eligible accounts, the later targets of a combo) are still tried:
 *
 * - Header wait: an attempt waits for the response headers at most the provider's `header_timeout_ms`
 *   (60 000 by default), and, while another candidate remains, at most half of the time left before
 *   the pre-commit deadline (default 60 000 ms): with the defaults a first target that hangs is given
 *   up after 30 s and the next one has the other 30 s (a second hang 15 s, and so on). The last
 *   candidate gets the full header timeout.
 * - A header timeout is not retried on the same account while another candidate remains (it moves on
 *   at once; the account cools down 30 s as after spent retries, SPEC 6.3).
 * - A same-account retry (502/503/504, connection errors, SPEC 6.2) is made only when the attempts
 *   left after it still cover one attempt for each untried candidate; otherwise the loop moves on, and
 *   the failed attempt's trace effect says why.
 * - When the attempts or the deadline run out with candidates left, the route trace says of each that
 *   it was not tried and why ({@link notTriedDecisions}).
 * - Retry-After of a final 429/503 (SPEC 2.4, end of 6.3) is read from the state the request's
 *   accounts are in after it ({@link accountsFreeAt}), capped at 6 h; when the budget ended the request
 *   while a candidate it left untried may serve now, it is {@link SERVABLE_NOW_RETRY_AFTER_S} s
 *   ({@link servableLeft}).
 */
import { KIND_TRAITS } from "../formats/codec.ts";
import { MAX_COOLDOWN_MS } from "./classify.ts";
import type { AccountPool, PickHints } from "./pick.ts";
import type { DecisionTrace, ProviderInfo } from "./ports.ts";
import type { Target } from "./resolve.ts";

/**
 * Default wait for a non-streamed reply, ms: 10 minutes, the OpenAI and Anthropic SDKs' own default
 * request timeout, so a client waiting on a long non-streamed reply hears the reply, not the gateway.
 */
export const DEFAULT_WHOLE_REPLY_TIMEOUT_MS = 600_000;

/**
 * The wait of an attempt whose upstream call does not stream, ms: the provider's `wholeReplyTimeoutMs`,
 * else the larger of {@link DEFAULT_WHOLE_REPLY_TIMEOUT_MS} and its `headerTimeoutMs`. Not cut for the
 * candidates after it ({@link headerWaitMs}): a non-streamed reply's headers arrive with the whole
 * reply, so an upstream still writing a long reply cannot be told from one that hangs, and cutting it
 * would give up a reply the client is waiting for (a GUI app's non-streamed request of 70 s got a 504
 * at 60 s). A call that never answers is given up after this wait; past the pre-commit deadline no
 * other candidate is tried (SPEC 6.1).
 */
export function wholeReplyWaitMs(provider: { headerTimeoutMs: number; wholeReplyTimeoutMs?: number }): number {
  return provider.wholeReplyTimeoutMs ?? Math.max(DEFAULT_WHOLE_REPLY_TIMEOUT_MS, provider.headerTimeoutMs);
}

/** What the budget rules read of the attempt loop's dependencies. */
export interface BudgetDeps {
  pool: AccountPool;
  health: { circuitOpen(providerId: string): boolean };
}

/** Accounts of `target` that may serve now (its pinned account only, when it names one). */
function servableOf(target: Target, deps: BudgetDeps, hints: PickHints): number {
  const pool = deps.pool;
  if (pool.servable) return pool.servable(target.provider.id, target.model, target.accountId);
  let n = 0;
  for (const c of pool.candidates(target.provider.id, target.model, hints)) if (c.eligible && (!target.accountId || c.account.id === target.accountId)) n++;
  return n;
}

/**
 * How many candidates the request has not tried yet after the current attempt: `others` (the current
 * target's eligible accounts not tried, from its pick) plus the accounts that may serve now of each
 * later target whose provider's circuit is closed. Counting stops at `limit` (a caller needs to know
 * only whether the count reaches it). Read on the failure path and for a header wait that would be cut.
 */
export function untriedCandidates(targets: readonly Target[], ti: number, others: number, deps: BudgetDeps, hints: PickHints, limit: number): number {
  let n = others;
  for (let i = ti + 1; i < targets.length && n < limit; i++) {
    const t = targets[i]!;
    if (deps.health.circuitOpen(t.provider.id)) continue;
    n += servableOf(t, deps, hints);
  }
  return Math.min(n, limit);
}

/**
 * The header wait of one attempt, ms: the provider's `headerTimeoutMs` (SPEC 6.3), cut to half of the
 * time left before `deadline` (ms since the epoch; at least 1 ms) when that is shorter and
 * `anotherRemains` (a candidate after this one could still be tried).
 */
export function headerWaitMs(headerTimeoutMs: number, deadline: number, now: number, anotherRemains: boolean): number {
  const half = Math.floor((deadline - now) / 2);
  return headerTimeoutMs <= half || !anotherRemains ? headerTimeoutMs : Math.max(1, half);
}

/**
 * {@link headerWaitMs} of an attempt of `targets[ti]` at `now`, asking {@link untriedCandidates} only when
 * the cut would shorten the wait (a module function, not a callback: no closure per request,
 * docs/performance.md item 261).
 */
export function attemptHeaderWait(headerTimeoutMs: number, deadline: number, now: number, targets: readonly Target[], ti: number, others: number, deps: BudgetDeps, hints: PickHints): number {
  if (headerTimeoutMs <= Math.floor((deadline - now) / 2)) return headerTimeoutMs;
  return headerWaitMs(headerTimeoutMs, deadline, now, untriedCandidates(targets, ti, others, deps, hints, 1) > 0);
}

/**
 * Whether the pre-commit deadline leaves room for a fallback with these settings: a first attempt that
 * hangs is given up (its header wait, {@link headerWaitMs}) with time still left for a second. True
 * for the defaults (60 000 ms header timeout, 60 000 ms deadline: given up after 30 000 ms).
 */
export function leavesRoomForFallback(headerTimeoutMs: number, precommitDeadlineMs: number): boolean {
  return headerWaitMs(headerTimeoutMs, precommitDeadlineMs, 0, true) < precommitDeadlineMs;
}

/**
 * Whether a same-account retry may be made (SPEC 6.2) without taking an attempt an untried candidate
 * needs (SPEC 6.1 `max_attempts`): the attempts left after the retry (`maxAttempts - attempts - 1`)
 * cover `untried`.
 */
export function retryFitsBudget(maxAttempts: number, attempts: number, untried: number): boolean {
  return maxAttempts - attempts - 1 >= untried;
}

/**
 * The route-trace decisions for the candidates a request never reached because its budget ran out:
 * the current target `targets[ti]` when `others` of its eligible accounts were not tried, and every
 * later target. `why` is "attempts" (`max_attempts` spent) or "deadline" (the pre-commit deadline passed).
 */
export function notTriedDecisions(targets: readonly Target[], ti: number, others: number, why: "attempts" | "deadline", max: { maxAttempts: number; precommitDeadlineMs: number }): DecisionTrace[] {
  const reason =
    why === "attempts"
      ? `not tried: the request's ${max.maxAttempts} attempt${max.maxAttempts === 1 ? "" : "s"} (settings.max_attempts) ${max.maxAttempts === 1 ? "was" : "were"} spent`
      : `not tried: the pre-commit deadline (${max.precommitDeadlineMs} ms, settings.precommit_deadline_ms) had passed`;
  const out: DecisionTrace[] = [];
  if (others > 0 && targets[ti]) out.push({ subject: targets[ti]!.label, verdict: "out", reason: `${others} other eligible account${others === 1 ? "" : "s"} ${reason}` });
  for (let i = ti + 1; i < targets.length; i++) out.push({ subject: targets[i]!.label, verdict: "out", reason });
  return out;
}

/**
 * Retry-After (seconds) of a final 429/503 when the budget (attempts, deadline) ended the request while
 * a candidate it did not try may serve now: a retry would be served at once, so the client is told to
 * come back at once rather than at the end of the earliest cooldown of the accounts it tried.
 */
export const SERVABLE_NOW_RETRY_AFTER_S = 1;

/**
 * Whether, after a request that its budget ended while it was at `targets[ti]`, one of its candidates may
 * serve now: an account of `targets[ti]` eligible now (its pinned one, when it names one; the accounts it
 * tried are cooling or locked after their failures unless these had no account effect), or an account
 * that may serve now of a later target whose provider's circuit is closed. Read once, on the final error
 * of such a request, from the state after its failures.
 */
export function servableLeft(targets: readonly Target[], ti: number, deps: BudgetDeps, hints: PickHints): boolean {
  const t = targets[ti];
  if (t && !deps.health.circuitOpen(t.provider.id) && servableOf(t, deps, hints) > 0) return true;
  return untriedCandidates(targets, ti, 0, deps, hints, 1) > 0;
}

/**
 * When the first of the accounts of `reached` (the targets the request picked an account for) may
 * serve again after the request, ms since the epoch: the earliest end of the cooldowns and locks they
 * are under (the classification's effects were written before this is read, SPEC 6.3), each capped at
 * 6 h from `now` (SPEC 6.3's cooldown bound). Undefined when none of them is excluded with an end.
 * Eligible accounts are not counted.
 */
export function accountsFreeAt(reached: readonly Target[], deps: BudgetDeps, hints: PickHints, now: number): number | undefined {
  let at: number | undefined;
  for (const t of reached) {
    for (const c of deps.pool.candidates(t.provider.id, t.model, hints)) {
      if (c.eligible || c.until === undefined || (t.accountId && c.account.id !== t.accountId)) continue;
      const until = Math.min(c.until, now + MAX_COOLDOWN_MS);
      if (at === undefined || until < at) at = until;
    }
  }
  return at;
}

/** One attempt of a dry run's order (pipeline/order.ts `RoutePlan.attempts`), as {@link markBudgetReach} marks it. */
export interface PlannedAttempt {
  target: string;
  accountId: string;
  /** Why a request never makes this attempt: it lies beyond `settings.max_attempts`. */
  notReached?: string;
  /** When a request would not make this attempt: an attempt before it whose call never answers takes the rest of the pre-commit deadline. */
  notReachedIf?: string;
}

/**
 * Marks which of a dry run's `attempts` (in order; `providers[i]` the provider of `attempts[i]`) the
 * fallback budget reaches (SPEC 6.1), by the rules above:
 *
 * - `notReached` on each attempt past `maxAttempts`. Same-account retries never take one of the first
 *   `maxAttempts` ({@link retryFitsBudget}), and while another candidate remains a streamed call's header
 *   wait is cut to half the deadline left ({@link headerWaitMs}), so each of those is reached when every
 *   attempt before it fails, at once or by hanging.
 * - `notReachedIf` on each of those after the first attempt whose upstream call does not stream
 *   (`clientStream` false and a provider kind that does not force a stream: translate.ts) and whose
 *   wait ({@link wholeReplyWaitMs}) is not shorter than `precommitDeadlineMs`: when that call never
 *   answers, the deadline passes while it waits and no later candidate is tried.
 */
export function markBudgetReach(attempts: PlannedAttempt[], providers: readonly ProviderInfo[], opts: { maxAttempts?: number; precommitDeadlineMs?: number; clientStream: boolean }): void {
  const max = opts.maxAttempts;
  if (max !== undefined) for (const a of attempts.slice(max)) a.notReached = `not reached: a request makes at most ${max} attempt${max === 1 ? "" : "s"} (settings.max_attempts)`;
  const deadline = opts.precommitDeadlineMs;
  if (deadline === undefined || opts.clientStream) return;
  const reached = max === undefined ? attempts.length : Math.min(max, attempts.length);
  for (let i = 0; i < reached - 1; i++) {
    const p = providers[i]!;
    const wait = wholeReplyWaitMs(p);
    if (KIND_TRAITS[p.kind].forcesStream || wait < deadline) continue;
    const hang = `${attempts[i]!.target} @ ${attempts[i]!.accountId}`;
    for (const a of attempts.slice(i + 1, reached)) {
      a.notReachedIf = `not reached if ${hang} never answers: a non-streamed call waits reply_timeout_ms (${wait} ms), not less than the pre-commit deadline (${deadline} ms, settings.precommit_deadline_ms)`;
    }
    return;
  }
}
