/**
 * pick (SPEC R-4, 5.3): choose the account that serves one target.
 *
 * The account pool (src/accounts) knows every account's live state; this stage asks it for the
 * candidates of a (provider, model) pair, honours a target's pinned account, skips accounts already
 * tried in this request, and records why each account was in or out.
 */
import type { Account, DecisionTrace } from "./ports.ts";
import type { Target } from "./resolve.ts";

/** One account of a provider and whether it may serve the model now. */
export interface AccountCandidate {
  account: Account;
  eligible: boolean;
  /** Why it is excluded (cooling down for this model, locked, disabled, …). */
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
   * Takes one of the account's concurrency slots (SPEC A-4). Waits up to the slot timeout (15 s by
   * default) for one to free; resolves undefined when none did (the loop moves to another account) or
   * the signal aborted. The returned function releases the slot; calling it twice is harmless.
   */
  acquire(account: Account, signal: AbortSignal): Promise<(() => void) | undefined>;
  /**
   * Binds the request's conversation (`hints.affinityKey`) to the account that just answered it
   * successfully (SPEC A-2). The pool reads the key only when binding matters (several accounts).
   */
  bind(hints: PickHints, account: Account): void;
}

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
}

/** The outcome of a pick. */
export interface Picked {
  account?: Account;
  decisions: DecisionTrace[];
  /** The earliest time (ms since the epoch) an excluded account becomes free, for Retry-After. */
  firstFreeAt?: number;
  /** Whether any account was excluded for cooling down (SPEC 6.3 final Retry-After). */
  cooling: boolean;
  /** The chosen account is the first the pool listed for this target (else the request fell back). */
  firstChoice: boolean;
}

/**
 * Picks the first eligible account for `target` that has not been tried yet in this request.
 * A target that names an account only ever uses that account.
 */
export function pickAccount(pool: AccountPool, target: Target, tried: ReadonlySet<string>, hints: PickHints): Picked {
  const decisions: DecisionTrace[] = [];
  let firstFreeAt: number | undefined;
  let cooling = false;
  let chosen: Account | undefined;
  let considered = 0;
  let firstChoice = false;
  for (const c of pool.candidates(target.provider.id, target.model, hints)) {
    const subject = `${target.label} @ ${c.account.id}`;
    if (target.accountId && c.account.id !== target.accountId) continue;
    considered++;
    if (tried.has(c.account.id)) {
      decisions.push({ subject, verdict: "out", reason: "already tried in this request" });
      continue;
    }
    if (!c.eligible) {
      decisions.push({ subject, verdict: "out", reason: c.reason ?? "not eligible" });
      if (c.until !== undefined) {
        cooling = true;
        if (firstFreeAt === undefined || c.until < firstFreeAt) firstFreeAt = c.until;
      }
      continue;
    }
    if (!chosen) {
      chosen = c.account;
      firstChoice = considered === 1;
      decisions.push({ subject, verdict: "in", reason: c.note ? `first eligible account; ${c.note}` : "first eligible account" });
    }
  }
  if (target.accountId && !chosen && !decisions.some((d) => d.subject.endsWith(`@ ${target.accountId}`))) {
    decisions.push({ subject: `${target.label} @ ${target.accountId}`, verdict: "out", reason: "pinned account does not exist" });
  }
  return { account: chosen, decisions, firstFreeAt, cooling, firstChoice };
}
