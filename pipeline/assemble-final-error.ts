/**
 * The answer of a request none of whose candidates served it (SPEC 6.1–6.3, 2.4): what the attempt loop
 * (attempt-loop.ts) does once every candidate failed or was skipped, or its budget (attempts, deadline)
 * ran out, or the request ended before its commit point.
 *
 * - The route trace names the candidates the budget left untried (attempt-budget.ts notTriedDecisions).
 * - A client that left gets a 499 (outcome `client_closed`, named after the attempt in flight); a
 *   shutdown's end of grace period the 503 `gateway_stopping` (SPEC D-3).
 * - Which error the client gets: the last failure, except the model a missing sibling stood in for
 *   (R-10), a capacity failure of a skipped target that would have taken a body another target's
 *   translation refused (with its Retry-After), one message naming every unserved target, the
 *   gateway's refusal (outcome `rejected`) when every target refused the body, the refresh back-off or
 *   upstream-auth answer of a credential failure, the near alias or combo of a guessed name.
 * - Operator-only errors (`x-should-retry: false`) only when nothing else failed that may pass later.
 * - `Retry-After` of a final 429 or 5xx (500, 502, 503, 504, 529; {@link carriesRetryAfter}), a last reply
 *   the gateway could not use (a 502 of SPEC 6.3's empty-reply row) included: when the first account
 *   frees up, capped at 6 h (none when no account is cooling down), or
 *   {@link SERVABLE_NOW_RETRY_AFTER_S} when the budget ended the request while a candidate may serve now.
 *   Not a final 4xx other than 429 (the request is at fault: no wait lets it pass).
 * - `x-should-retry: false` for a request too large for a per-minute window on every account that answered,
 *   also when the budget left accounts untried whose windows are known to be too small as well (an
 *   untried account whose window is not known, or is large enough, gets `Retry-After: 1` instead), and
 *   never the upstream's own wait (a window's reset, `x-ratelimit-reset-tokens`: no wait lets it through).
 *
 * Failure path only: nothing here runs for a served request.
 */
import { hubError, type HubError } from "../formats/hub.ts";
import { MAX_COOLDOWN_MS, windowFigures } from "./classify.ts";
import type { AttemptFailure } from "./commit.ts";
import { errorAnswer, NO_RETRY_HEADER, responseHeaders, warningHeader, type RequestContext } from "./context.ts";
import type { CacheState, PickHints } from "./pick.ts";
import type { Account, Credential } from "./ports.ts";
import { nearAliasOrCombo, type Target } from "./resolve.ts";
import { allUnserved, gatewayStoppingError, refreshBackoffError, upstreamAuthError, type Unserved } from "./unserved-errors.ts";
import { translate } from "./translate.ts";
import { accountsFreeAt, notTriedDecisions, SERVABLE_NOW_RETRY_AFTER_S, servableLeft } from "./attempt-budget.ts";
import type { AttemptDeps, AttemptRoute } from "./attempt-deps.ts";

/** One failed attempt, or a target passed over, as the attempt loop keeps it. */
export interface Failed extends AttemptFailure {
  /** The target and account of the failed attempt (none when no attempt was made). */
  target?: Target;
  account?: Account;
  /** The credential the failed call carried, when the executor says (OAuth accounts). */
  sentWith?: Credential;
  /** The target's translation refused the client's body (no call was made for it). */
  refused?: true;
  /** A target passed over for capacity: when it may serve again (ms since the epoch), when known. */
  freeAt?: number;
  /** The attempt got no response headers in its header wait (attempt-budget.ts). */
  headerTimeout?: true;
}

/** What the attempt loop knows when it ends without a reply; read by {@link assembleFinalError}. */
export interface LoopEnd {
  /** The targets as tried (siblings of a missing model inserted, SPEC R-10). */
  targets: Target[];
  /** The failure of each model that siblings stood in for, by target label: reported instead of a missing sibling's own. */
  missing: Map<string, Failed> | undefined;
  /** Attempts made. */
  attempts: number;
  /** The loop's bounds as it read them at its start (SPEC 6.1 settings.max_attempts, precommit_deadline_ms). */
  maxAttempts: number;
  precommitDeadlineMs: number;
  /** Whether a target or account other than the first was picked (SPEC 2.4 X-Switchyard-Fallback). */
  fallback: boolean;
  /** The failure the client hears of unless a rule below picks another. */
  last: Failed | undefined;
  /** Whether every attempt failed as too large for a per-minute window. */
  onlyTooLarge: boolean;
  /** Targets passed over for capacity before their body was built (circuit open, no account free). */
  skipped: Failed[] | undefined;
  /** Whether a target was passed over because its model is gone at every account. */
  goneSkipped: boolean;
  /** Whether a target's translation built the body. */
  bodyBuilt: boolean;
  /** The earliest time an account of any target frees up (ms since the epoch), as the loop saw it. */
  firstFreeAt: number | undefined;
  /** Each target none of whose accounts could serve, with why. */
  unserved: Unserved[] | undefined;
  /** Targets an account was picked for. */
  reached: Target[] | undefined;
  /** Eligible accounts of the target at `stopTi` not tried. */
  others: number;
  /** The target whose turn the budget (attempts, deadline) ended, when it ended the loop. */
  stopTi: number | undefined;
  /** Whether an account was passed over for want of a concurrency slot in time. */
  slotMissed: boolean;
}

/**
 * The client's answer once the loop in `end` has ended without a reply (see the module's comment), with
 * the request finished (`deps.finish`: the status the client got, the last target and account tried).
 * `hints` are the request's pick hints (cache state, accounts' state after the request).
 */
export function assembleFinalError(ctx: RequestContext, end: LoopEnd, route: AttemptRoute, deps: AttemptDeps, hints: PickHints): Response {
  const { targets, missing, attempts, maxAttempts, precommitDeadlineMs, onlyTooLarge, skipped, goneSkipped, bodyBuilt, unserved, reached, others, stopTi, slotMissed } = end;
  let { last, fallback, firstFreeAt } = end;
  if (stopTi !== undefined && !ctx.signal.aborted && deps.graceOver?.over !== true) {
    // The route trace says which candidates the budget left untried, and why (attempt-budget.ts).
    const why = attempts >= maxAttempts ? "attempts" : "deadline";
    ctx.trace.decisions.push(...notTriedDecisions(targets, stopTi, others, why, { maxAttempts, precommitDeadlineMs }));
  }

  if (ctx.signal.aborted) {
    // Named after the last attempt that reached an account (the one in flight when the client left): its
    // usage row counts under that model and account, as `calls inspect` shows it (it said "(none)" and "–").
    const reached = last?.account !== undefined ? last : undefined;
    deps.finish(ctx, { outcome: "client_closed", status: 499, attempts, fallback, target: reached?.target, account: reached?.account });
    return new Response(null, { status: 499 });
  }
  if (deps.graceOver?.over) {
    // SPEC D-3: the grace period ended while this request waited on its upstream (the call was aborted).
    return finalError(ctx, gatewayStoppingError(), deps, { attempts, fallback, target: last?.target, account: last?.account, cache: deps.pool.cacheState?.(hints, last?.target?.provider.id ?? "") });
  }
  if (last?.target?.siblingOf && last.classification.row === "model_unavailable") {
    // Every sibling was missing too: the client hears about the model it asked for.
    last = missing?.get(`${last.target.provider.id}/${last.target.siblingOf}`) ?? last;
  }
  if (attempts === 0 && last?.refused) {
    // The body was refused by a target's translation and no call was made. A 400 says "do not send
    // this body again" (formats/REFERENCE.md: not retried), which is false when a target passed over
    // for capacity (its circuit open, no account free) would have taken it: then the answer is that
    // capacity failure, with its Retry-After, as when every target was unavailable (SPEC 2.4, 6.3).
    // Translation is pure: a skipped target's is tried here, without a call, to know.
    fallback = false; // nothing was served or called
    // A target built the body but got no concurrency slot in time: it is in no list (`skipped` holds the
    // targets passed over before their body was built), so the answer is the first of those that would
    // take the body, else no target's: the gateway's 503 "No target could serve this request.", as a
    // request whose only target gets no slot in time is answered (never a skipped target's 429 whose
    // Retry-After sends the client back for a 400).
    const takers = skipped ? takersOf(ctx, skipped, route.portability) : undefined;
    const taker = takers?.[0];
    if (bodyBuilt) last = taker;
    else last = taker ?? last;
    // Retry-After is when the first of the targets that would take the body frees up, not one that
    // would refuse it; with none, when a skipped target frees up says nothing about the slot a target
    // that took the body waits for.
    if (takers) firstFreeAt = earliestFreeAt(takers);
    else if (bodyBuilt) firstFreeAt = undefined;
  }
  let err = last?.error ?? hubError("api_error", "No target could serve this request.", { status: 503 });
  if (unserved && unserved.length > 1 && last && namesError(unserved, last.error)) err = allUnserved(unserved);
  // only an operator can end it (x-should-retry: false) when nothing else failed: no call made, no target
  // unserved otherwise nor passed over for its open circuit (it closes by itself: Retry-After says when)
  // or a full account (a slot frees by itself)
  const retryMayServe = (f: { error: HubError }) => !f.error.operatorOnly;
  if (err.operatorOnly && (attempts > 0 || slotMissed || unserved?.some(retryMayServe) || skipped?.some(retryMayServe))) err = { ...err, operatorOnly: undefined };
  // The client's body, refused by the translation before any call: the gateway's refusal (outcome
  // rejected, no model served), as the guard's are, not an error of a model never called. Only when
  // every target refused it, or was passed over for capacity and would have refused it too (above).
  if (attempts === 0 && !goneSkipped && last?.refused && err === last.error) return finalError(ctx, err, deps, { attempts, fallback: false, rejected: true });
  if (last?.classification.row === "credential" && last.target) {
    // A refresh that failed for a while (the token endpoint's 5xx) is not a credential needing an
    // operator: say so, with when it is tried again (newuser12b H6: it said the keys "need attention").
    const backoff = last.account ? deps.health.refreshBackoff?.(last.account) : undefined;
    err = backoff ? refreshBackoffError(last.target, backoff) : upstreamAuthError(last.target, err);
    if (backoff && (firstFreeAt === undefined || backoff.until < firstFreeAt)) firstFreeAt = backoff.until;
  }
  if (route.guessed && deps.routing && last?.classification.row === "model_unavailable") {
    // A typo of an alias guessed to a provider that has accounts: the upstream's "no such model" alone
    // does not say what was meant (newuser13's tryout, J10; without accounts the guard-side 404 says it).
    const near = nearAliasOrCombo(ctx.requestedModel, deps.routing());
    if (near) err = { ...err, message: `${err.message} (\`${ctx.requestedModel}\` is not an alias or combo of this gateway; did you mean "${near}"?)` };
  }
  // Every attempt failed as too large for a per-minute window, and that answer is the client's.
  const tooLarge = onlyTooLarge && last?.classification.row === "too_large_for_window" && err === last.error;
  let waitDropped = false;
  if (carriesRetryAfter(err.status) || !last) {
    // SPEC 2.4, 6.3: when the first account is free, from the cooldowns and locks the request's accounts
    // are under after it (not an upstream's raw Retry-After), capped at 6 h like a cooldown; Anthropic's
    // 529 (overloaded, passed on as it came) is a 503 of that provider's. Every final 5xx, not only a
    // 503: a last 500, 502 or 504 (a 5xx cools its account 30 s; a last reply the gateway could not use,
    // a 200 answered with an HTML page or an empty stream, the empty-reply row's 502, cools none) says
    // when an account of the request is free again, an earlier target's 429's reset say (SPEC 6.3: "if
    // accounts were skipped for cooling down, a Retry-After header says when the first is free").
    const now = deps.clock.now();
    const free = reached ? accountsFreeAt(reached, deps, hints, now) : undefined;
    if (free !== undefined && (firstFreeAt === undefined || free < firstFreeAt)) firstFreeAt = free;
    // The budget ended the request while a candidate may serve now (an account left untried): a retry is served at once.
    // A request too large for the window of every account that answered is served at once only by an
    // untried account with a larger window (or one not known).
    if (stopTi !== undefined && (tooLarge ? untriedMayTakeTooLarge(ctx, targets, stopTi, last!, deps, hints) : servableLeft(targets, stopTi, deps, hints))) err = { ...err, retryAfterSeconds: SERVABLE_NOW_RETRY_AFTER_S };
    else if (firstFreeAt !== undefined) err = { ...err, retryAfterSeconds: Math.max(1, Math.ceil((Math.min(firstFreeAt, now + MAX_COOLDOWN_MS) - now) / 1000)) };
    // The upstream's own wait (OpenAI's x-ratelimit-reset-tokens / -requests on the 429, formats/openai-common
    // errors.ts openAiRetryAfter) says when its window resets, which no request larger than the window waits
    // for: a too-large answer goes without it (and keeps its x-should-retry: false, below).
    else if (tooLarge) waitDropped = err.retryAfterSeconds !== undefined;
    else if (err.retryAfterSeconds !== undefined) err = { ...err, retryAfterSeconds: Math.min(err.retryAfterSeconds, MAX_COOLDOWN_MS / 1000) };
  }
  // A request larger than a per-minute window on every account that answered (sdk16 S1) cannot pass
  // by being sent again: tell the SDKs not to retry (below), unless an account cooling down may serve
  // it later (then Retry-After says when) or an attempt failed otherwise (a 5xx or a timeout on an
  // earlier target may pass a second later: review17 R4).
  const noRetry = tooLarge && err === last?.error;
  if (waitDropped) err = { ...err, retryAfterSeconds: undefined };
  // Refused: each provider skipped for want of any account counts it once (review18 R2: not per skip).
  if (deps.pool.noAccount && unserved) {
    const counted = new Set<string>();
    for (const u of unserved) {
      const id = u.target.provider.id;
      if (u.error.code !== "no_account" || counted.has(id) || deps.pool.hasAccounts(id)) continue;
      counted.add(id);
      deps.pool.noAccount(id, err.status ?? 503);
    }
  }
  // Attribute the failure to the last target and account tried (usage by provider, calls list).
  return finalError(ctx, err, deps, { attempts, fallback, noRetry, target: last?.target, account: last?.account, cache: deps.pool.cacheState?.(hints, last?.target?.provider.id ?? "") });
}


/**
 * Whether a final error of HTTP `status` carries `Retry-After` (when an account of the request is free
 * again, see {@link assembleFinalError}): a 429 and every 5xx (500, 502, 503, 504, Anthropic's 529),
 * which a later try of the same body may pass. Not another 4xx: the request itself is at fault (a
 * rejected body, a model not found, a refused credential) and no wait makes it pass.
 */
export function carriesRetryAfter(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * {@link assembleFinalError}'s helpers as module functions, not callbacks holding its variables (as in the
 * attempt loop, whose callbacks made every request allocate their scope at its start: docs/performance.md
 * item 261). Whether a target none of whose accounts could serve failed with `error`:
 */
function namesError(unserved: readonly Unserved[], error: HubError): boolean {
  for (const u of unserved) if (u.error === error) return true;
  return false;
}

/**
 * The targets passed over for capacity (`skipped`, in the order tried) whose translation builds the
 * request's body, i.e. that would have taken it had they been free; undefined when each would refuse it
 * too (each such target gets a trace decision saying so). No call is made.
 */
function takersOf(ctx: RequestContext, skipped: readonly Failed[], portability: AttemptRoute["portability"]): Failed[] | undefined {
  let takers: Failed[] | undefined;
  for (const s of skipped) {
    const built = translate(ctx, s.target!, portability);
    if (!("kind" in built)) (takers ??= []).push(s);
    else ctx.trace.decisions.push({ subject: s.target!.label, verdict: "out", reason: `not called; its translation would refuse the body too: ${built.message}` });
  }
  return takers;
}

/**
 * Whether a candidate the budget left untried may take a request too large for a per-minute window at
 * every account that answered (`failed`: the last such answer, SPEC 6.3's too_large_for_window row),
 * its budget having ended at `targets[ti]`: an account that may serve now, of `targets[ti]` or of a
 * later target whose provider's circuit is closed (a target's pinned account only), not tried for that
 * target (the route trace's attempts), whose per-minute token window is not known to be too small
 * ({@link AttemptDeps.health} `tokenWindowLimit`, read from its rate-limit headers). The request's size
 * is the answer's "Requested M" (a window of M or more may take it); without it, the request is larger
 * than the answer's "Limit N", else than the failed account's own known window (only a larger one may
 * take it). An account whose window is not known may take it, and so does any when nothing says the
 * request's size.
 */
function untriedMayTakeTooLarge(ctx: RequestContext, targets: readonly Target[], ti: number, failed: Failed, deps: AttemptDeps, hints: PickHints): boolean {
  const figures = windowFigures(failed.error.message);
  const over = figures.limit ?? (failed.account && failed.target ? deps.health.tokenWindowLimit?.(failed.account, failed.target.model) : undefined);
  // Which accounts are eligible, not their order: no round-robin turn for a provider the request never reached.
  const look: PickHints = { ...hints, dryRun: true };
  for (let i = ti; i < targets.length; i++) {
    const t = targets[i]!;
    if (deps.health.circuitOpen(t.provider.id)) continue;
    for (const c of deps.pool.candidates(t.provider.id, t.model, look)) {
      if (!c.eligible || (t.accountId && c.account.id !== t.accountId) || triedFor(ctx, t.label, c.account.id)) continue;
      const limit = deps.health.tokenWindowLimit?.(c.account, t.model);
      if (limit === undefined || (figures.requested !== undefined ? limit >= figures.requested : over === undefined || limit > over)) return true;
    }
  }
  return false;
}

/** Whether the request made an attempt of the target labelled `label` with account `accountId` (its route trace). */
function triedFor(ctx: RequestContext, label: string, accountId: string): boolean {
  for (const a of ctx.trace.attempts) if (a.target === label && a.accountId === accountId) return true;
  return false;
}

/** The earliest `freeAt` (epoch ms) of `failed`, undefined when none says when it frees up. */
function earliestFreeAt(failed: readonly Failed[]): number | undefined {
  let at: number | undefined;
  for (const f of failed) if (f.freeAt !== undefined && (at === undefined || f.freeAt < at)) at = f.freeAt;
  return at;
}


/**
 * The error Response of a request no account served (`err` in the client's format, SPEC 2.4 headers,
 * `x-should-retry: false` with `noRetry`), recorded through `deps.finish` with the status the client got
 * (outcome `rejected` for the gateway's refusal of the body, else `error`).
 */
export function finalError(
  ctx: RequestContext,
  err: HubError,
  deps: AttemptDeps,
  f: { attempts: number; fallback: boolean; noRetry?: boolean; target?: Target; account?: Account; cache?: CacheState; rejected?: true },
): Response {
  const headers = responseHeaders(ctx);
  if (f.fallback) headers.set("x-switchyard-fallback", "1");
  if (f.noRetry) headers.set(NO_RETRY_HEADER, "false");
  // SPEC 2.4: no account served this reply, so affinity cannot have hit.
  if (f.cache) headers.set("x-switchyard-cache", f.cache);
  const warning = warningHeader(ctx.warnings);
  if (warning) headers.set("x-switchyard-warning", warning);
  const res = errorAnswer(ctx, err, headers);
  // recorded as the client got it (errorAnswer's trace: Anthropic's 529 a 503, a Gemini client's FAILED_PRECONDITION a 400)
  deps.finish(ctx, { outcome: f.rejected ? "rejected" : "error", status: ctx.trace.error?.status ?? err.status, attempts: f.attempts, fallback: f.fallback, target: f.target, account: f.account });
  return res;
}

