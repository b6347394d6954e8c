/**
 * pick (SPEC R-4, 5.3): choose the account that serves one target.
 *
 * The account pool (src/accounts) knows every account's live state; this stage asks it for the
 * candidates of a (provider, model) pair, honours a target's pinned account, skips accounts already
 * tried in this request, and records why each account was in or out.
 */
import type { Account, DecisionTrace } from "./ports.ts";
import { JoinedText } from "./joined-text.ts";
import type { Target } from "./resolve.ts";

/**
 * Why an account may not serve a model now (SPEC A-1, 6.3). `rate_limit` and `quota` make a request
 * that finds no account a 429; the others a 503.
 */
export type ExclusionCause =
  /** Disabled in config or through the admin API. */
  | "disabled"
  /** Its credential was rejected after a refresh; excluded until replaced. */
  | "quarantined"
  /** The whole account is locked (402, spend cap, rejected API key…). */
  | "lock"
  /** It reports (almost) no quota left for the model, or was locked for exhausted quota. */
  | "quota"
  /** The account/model pairing was removed (the upstream said the model is not available to it). */
  | "removed"
  /** Other accounts of the provider advertise the model; this one does not (SPEC P-6). */
  | "not_advertised"
  /** Cooling down after a 429 rate limit. */
  | "rate_limit"
  /** Cooling down after another failure (5xx, transport error, overloaded). */
  | "cooldown";

/** Why an account may not serve a model now, in data and in words. */
export interface Exclusion {
  cause: ExclusionCause;
  /** The exclusion in words, without its end time: "cooling down (429)", "locked: 402 payment required". */
  reason: string;
  /** ms since the epoch when the exclusion ends, if it does. */
  until?: number;
}

/** An exclusion as traces and the status show it: its reason, then its end time when known. */
export function describeExclusion(e: { reason: string; until?: number }): string {
  return e.until !== undefined ? `${e.reason} until ${new Date(e.until).toISOString()}` : e.reason;
}

/** One account of a provider and whether it may serve the model now. */
export interface AccountCandidate {
  account: Account;
  eligible: boolean;
  /** Why it is excluded, when it is. */
  cause?: ExclusionCause;
  /** The exclusion in words, without its end time (see {@link describeExclusion}). */
  reason?: string;
  /** ms since the epoch when an exclusion ends, if it does. */
  until?: number;
  /** Why an eligible account is where it is (affinity, score, slots…), for the route trace. */
  note?: string;
}

/** What the pipeline needs from the account registry. */
export interface AccountPool {
  /**
   * Every account of `providerId` in preference order for this request (best first), with
   * eligibility for `model`. A `*-compatible` provider with no accounts yields one keyless account.
   */
  candidates(providerId: string, model: string, hints: PickHints): AccountCandidate[];
  /**
   * How many accounts of `providerId` may serve `model` now (none of SPEC A-1's exclusions; busy ones
   * count), only `accountId` when given (a target's pinned account). No ranking, no strategy turn, no
   * affinity key: the attempt loop asks it of targets it has not reached yet (pipeline/attempt-budget.ts).
   * Optional: without it the loop reads {@link candidates}.
   */
  servable?(providerId: string, model: string, accountId?: string): number;
  /**
   * Whether `providerId` has any account, eligible or not (a `*-compatible` provider always has its
   * keyless one). O(1): for the 404 of a model name guessed onto a provider without accounts.
   */
  hasAccounts(providerId: string): boolean;
  /**
   * A request was answered for want of any account of `providerId`: `status` 503 (`no_account`: it was
   * routed there by its `provider/` prefix, an alias or a combo) or 404 (a bare model name guessed onto
   * the provider, SPEC R-2). The registry keeps a count per provider for the Accounts page and
   * `accounts status` (src/accounts/status.ts), which otherwise leave out a built-in provider without
   * accounts (review17 R5). Optional; never throws.
   */
  noAccount?(providerId: string, status: number): void;
  /**
   * Takes one of the account's concurrency slots (SPEC A-4). Waits up to the slot timeout (15 s by
   * default) for one to free; resolves undefined when none did (the loop moves to another account) or
   * the signal aborted. The returned function releases the slot; call it once (a second call is ignored
   * here, but not by {@link acquireNow}'s release: callers treat both alike).
   */
  acquire(account: Account, signal: AbortSignal): Promise<(() => void) | undefined>;
  /**
   * {@link acquire} without a promise when nothing can wait (an account without a concurrency limit):
   * the release, or undefined when `acquire` must be awaited. Optional. The caller calls the release
   * once (it may be one function for every take of the account, src/accounts/slots.ts takeUnlimited).
   */
  acquireNow?(account: Account): (() => void) | undefined;
  /**
   * Binds the request's conversation (`hints.affinityKey`) to the account that just answered it
   * successfully (SPEC A-2). The pool reads the key only when binding matters (several accounts).
   * `now`: the time of the success, ms since the epoch (default: the pool's clock now); the binding
   * lasts from then.
   */
  bind(hints: PickHints, account: Account, now?: number): void;
  /**
   * SPEC 2.4 `X-Switchyard-Cache` for a reply `account` is about to serve (asked before {@link bind}):
   * `hit` when the conversation is bound to that very account, `miss` when it has no live binding or
   * is bound elsewhere (or no account served), `bypass` when affinity is off for the request
   * (round-robin strategy, the combo's `cache_affinity: false`) or there is nothing to fingerprint.
   * `now`: the time to read the binding at, ms since the epoch (default: the pool's clock now).
   */
  cacheState?(hints: PickHints, providerId: string, account?: Account, now?: number): CacheState;
}

/** The values of `X-Switchyard-Cache` (SPEC 2.4). */
export type CacheState = "hit" | "miss" | "bypass";

/** Per-request facts the pool may use to order accounts (affinity, strategy). */
export interface PickHints {
  /**
   * Conversation fingerprint or explicit session id (SPEC A-2). May be a lazily computed getter: read
   * it only when it matters (a provider with several accounts).
   */
  readonly affinityKey?: string;
  /** false when the combo turned cache affinity off. */
  affinity?: boolean;
  /** A dry run (SPEC 2.2 `route`): order as for a real request but advance no strategy counter. */
  dryRun?: boolean;
  /**
   * `make(providerId, affinityKey)` (the pool's binding key of this conversation at that provider), kept
   * for the request: the pool reads it up to three times per request (the pick, the commit's
   * `X-Switchyard-Cache` read twice, the binding after it), one string instead of three
   * (docs/performance.md item 292). Undefined without an affinity key. Absent: the pool makes it each time.
   */
  keyAt?(providerId: string, make: (providerId: string, affinityKey: string) => string): string | undefined;
}

/** What a pick decided about one account of the target. */
export interface AccountVerdict {
  accountId: string;
  /** "in" for the chosen account; "out" for an excluded one. Other eligible accounts get no verdict. */
  verdict: "in" | "out";
  /** Why it is out: an exclusion, or a pinned account that does not exist. */
  cause?: ExclusionCause | "missing";
  /** ms since the epoch when the exclusion ends, if it does. */
  until?: number;
  /** Out: the exclusion in words (without its end time). In: why it is where it is (affinity, score…). */
  note?: string;
  /** In: how many accounts of the target this request tried before it (absent for its first pick). */
  triedBefore?: number;
}

/** The outcome of a pick. */
export interface Picked {
  account?: Account;
  /** The chosen account and every excluded one, in the pool's order; accounts already tried are left out. */
  verdicts: AccountVerdict[];
  /** The earliest time (ms since the epoch) an excluded account becomes free, for Retry-After (SPEC 6.3). */
  firstFreeAt?: number;
  /** The chosen account is the first the pool listed for this target (else the request fell back). */
  firstChoice: boolean;
  /** Eligible accounts of the target besides the chosen one not tried yet in this request (SPEC 6.1's budget is kept for them). */
  others: number;
}

/**
 * Picks the first eligible account for `target` that has not been tried yet in this request.
 * A target that names an account only ever uses that account. Accounts already tried get no verdict:
 * their decision was recorded when they were chosen.
 */
export function pickAccount(pool: AccountPool, target: Target, tried: ReadonlySet<string>, hints: PickHints): Picked {
  const verdicts: AccountVerdict[] = [];
  let firstFreeAt: number | undefined;
  let chosen: Account | undefined;
  let considered = 0;
  let firstChoice = false;
  let pinnedSeen = false;
  let others = 0;
  for (const c of pool.candidates(target.provider.id, target.model, hints)) {
    if (target.accountId && c.account.id !== target.accountId) continue;
    considered++;
    pinnedSeen = true;
    if (tried.has(c.account.id)) continue;
    if (!c.eligible) {
      verdicts.push({ accountId: c.account.id, verdict: "out", cause: c.cause, until: c.until, note: c.reason ?? "not eligible" });
      if (c.until !== undefined && (firstFreeAt === undefined || c.until < firstFreeAt)) firstFreeAt = c.until;
      continue;
    }
    if (!chosen) {
      chosen = c.account;
      firstChoice = considered === 1;
      verdicts.push(tried.size > 0 ? { accountId: c.account.id, verdict: "in", note: c.note, triedBefore: tried.size } : { accountId: c.account.id, verdict: "in", note: c.note });
    } else others++;
  }
  if (target.accountId && !pinnedSeen) {
    verdicts.push({ accountId: target.accountId, verdict: "out", cause: "missing", note: "pinned account does not exist" });
  }
  return { account: chosen, verdicts, firstFreeAt, firstChoice, others };
}

/** Decision subjects (`label @ account`) and the chosen account's reasons, one string each (./joined-text.ts). */
const SUBJECTS = new JoinedText(" @ ");
const CHOSEN = new JoinedText("; ");

/** A pick verdict as a route-trace decision (`target @ account`). */
export function verdictDecision(target: Target, v: AccountVerdict): DecisionTrace {
  const subject = SUBJECTS.of(target.label, v.accountId);
  if (v.verdict === "in") {
    // The pick after a failed attempt is not the first eligible account (a trace read so for the second one).
    const which = v.triedBefore ? `next eligible account (${v.triedBefore} tried before it)` : "first eligible account";
    return { subject, verdict: "in", reason: v.note ? CHOSEN.of(which, v.note) : which };
  }
  return { subject, verdict: "out", reason: describeExclusion({ reason: v.note ?? "not eligible", until: v.until }) };
}
