/**
 * Which alerts are "the same alert" across instances sharing one store (SPEC D-2: several instances
 * "behave as one gateway"; SPEC 9.7: each alert POSTed to the webhook). Each instance raises alerts
 * from what it sees, and some of what it sees is shared: an account's quota window read by one instance
 * reaches every other through the database, a quarantine written by one is loaded by all, a key
 * budget's use is counted across them. So two instances can raise one crossing each. Before the webhook
 * POSTs an alert, the instance claims its identity in the store (`SharedStore.claimOnce(name, until)`,
 * as a lease for the time of its tries: {@link AlertClaimer}): the instance whose claim is taken delivers
 * it, the others do not while the claim holds, and take it over when the lease lapses (its holder died).
 * Each instance still shows the alert on its own `/admin/api/events` and dashboard.
 *
 * | event | identity (besides event and subject) | the claim holds until |
 * |---|---|---|
 * | `quota_threshold`, key budget | the key's id (`AlertEvent.subjectId`, when it is not the name: a key created with a revoked key's name is another key), budget window, unit, the budget's amount (`detail.limit`), threshold, the window's end (the database keeps each window's start, opened at the first use, so every instance names the same end) | an hour after the window's end |
 * | `quota_threshold`, account quota window | window, model, threshold | the end of the period it was raised in (`AlertEvent.periodEnd`: the reset time read when the claiming instance began the period); a day after the alert for a window without a reset time |
 * | `account_quarantined` | the reason | a day after the alert, or the account's next login or import ({@link endAlertEpisode}) |
 * | `account_locked` | the lock's end, the reason | an hour after the alert, or the account's unlock, login or import |
 * | `circuit_open` / `circuit_closed` | (none) | a minute after the alert |
 *
 * A key budget's amount is part of its alerts' identity: a threshold of a budget an operator changed
 * (`PATCH /admin/api/keys/{name}`, `switchyard keys set`) is judged against the new amount, and its
 * crossing is a new alert. Until 2026-12-06 the claim named the window and threshold only, so 80 % of a
 * raised budget, crossed in the window where 80 % of the old one had been, reached every instance's
 * alert list and no webhook. A window's use only grows, so each threshold of each amount is crossed at
 * most once per window: the amount in the name delivers no alert twice.
 *
 * A claim is no clock bucket: it holds from the first claim to its end, so one crossing raised by two
 * instances a moment apart is delivered once wherever that moment falls, and the same threshold in a
 * new period (a new budget window, an account quota window after its reset) is delivered again. An
 * account quota window whose reset time is fixed for the period (Claude's unified windows, Codex's
 * `reset-at`) has the same period on every instance; one whose reset time moves with every response
 * (OpenAI's `x-ratelimit-reset-*`, Anthropic's token buckets) has each instance's own, begun at its
 * own scan: the claim lasts the period of the instance that claimed first, and an instance that sees
 * the crossing only after that period ended (its scan or the database's news came late) delivers it
 * once more, which then holds for its own period.
 *
 * Passed shares. One step past several shares raises one `quota_threshold` alert, the highest, the
 * lower ones in `detail.passed`; instances that learn a pair's use in different steps raise different
 * alerts for it (one 0.5, then 0.9; another 0.9 with 0.5 passed). So an instance about to deliver an
 * alert also claims each passed share ({@link passedClaims}: the claim that share's own alert would
 * have), leased and settled with the alert's own: a share another instance already said (its claim
 * settled, as an alert or as someone's passed) is left out of the POSTed `passed`, and an alert whose
 * own share was said in another's `passed` is not delivered (its claim is held, as for a delivered
 * alert). A passed share another instance is still delivering (its lease holds) is left out too, and
 * kept as an alert of its own, claimed again when that lease ends: if its holder died before its POST
 * succeeded, this instance POSTs it alone (the alert's detail with that share as its `threshold`, no
 * `passed`). So each share reaches the webhook once, wherever it was folded; until 2026-12-07 (later)
 * the passed shares were not claimed, and a share one instance posted as an alert another posted in
 * its alert's `passed` (test/e2e/multi-instance-alerts.test.ts allowed it). The alerts each instance
 * shows (its `/admin/api/events`, `GET /admin/api/alerts`, the dashboard's Recent alerts) are the ones
 * it raised, with `passed` as it saw the step: they are per instance, the webhook's are the gateway's.
 */
import type { AlertEvent } from "../events/bus.ts";
import type { ClaimAnswer, SharedStore } from "../store/shared.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A claim in the shared store: its name, and until when it holds (ms since the epoch). */
export interface AlertClaim {
  name: string;
  until: number;
}

/** The claim that makes `e` delivered once across instances; see the module comment. */
export function alertClaim(e: AlertEvent): AlertClaim {
  const d = e.detail;
  const part = (v: unknown) => (v === undefined || v === null ? "" : String(v));
  // A key created with a revoked key's name is another key (its id, AlertEvent.subjectId).
  const base = `alert:${e.event}:${e.subjectId ?? e.subject}`;
  switch (e.event) {
    case "quota_threshold":
      if (d.kind === "key_budget") {
        const end = typeof d.resets_at === "string" ? Date.parse(d.resets_at) : NaN;
        return { name: `${base}:budget:${part(d.window)}:${part(d.unit)}:${part(d.limit)}:${part(d.threshold)}:${part(d.resets_at)}`, until: Number.isFinite(end) ? end + HOUR : e.at + DAY };
      }
      return { name: `${base}:quota:${part(d.window)}:${part(d.model)}:${part(d.threshold)}`, until: e.periodEnd ?? e.at + DAY };
    case "account_quarantined":
      return { name: `${base}:${part(d.reason)}`, until: e.at + DAY };
    case "account_locked":
      return { name: `${base}:${part(d.until)}:${part(d.reason)}`, until: e.at + HOUR };
    default:
      return { name: base, until: e.at + MINUTE };
  }
}

/** A share in a `quota_threshold` alert's `detail.passed` and its claim ({@link passedClaims}). */
export interface PassedClaim {
  /** The share (e.g. 0.5), as in `detail.passed`. */
  share: number;
  claim: AlertClaim;
}

/**
 * The claims of the shares in `e.detail.passed` (a `quota_threshold` alert that passed lower shares in
 * the same step), each named and ending as {@link alertClaim} names the alert of that share alone, so
 * that a share is said once across instances whether it reaches the webhook as an alert of its own or
 * in another alert's `passed` (see "Passed shares" in the module comment). Empty for other alerts.
 */
export function passedClaims(e: AlertEvent): PassedClaim[] {
  const passed = e.detail.passed;
  if (e.event !== "quota_threshold" || !Array.isArray(passed)) return [];
  return passed.filter((s): s is number => typeof s === "number").map((share) => ({ share, claim: alertClaim({ ...e, detail: { ...e.detail, threshold: share } }) }));
}

/**
 * The prefix of the claims of an account's `account_locked` or `account_quarantined` alerts (their
 * names in {@link alertClaim}). Those claims hold an hour and a day: without an end of the episode, an
 * account locked again after an operator's unlock, or a new credential quarantined again after a new
 * import, raised an alert every instance showed and no webhook delivered (newuser15 N11). The operator's
 * action ends them ({@link endAlertEpisode}).
 */
export function accountAlertPrefix(event: "account_locked" | "account_quarantined", accountId: string): string {
  return `alert:${event}:account:${accountId}:`;
}

/**
 * Ends the claims of an account's alerts of `events` in `store` when this instance ended the state
 * (the registry's `episodeEnded`: an unlock by hand, a new login or import, the account removed, its key
 * changed in the file), so the next one is delivered. Called before the lock is cleared, so that no
 * later lock or quarantine is claimed first; a store that cannot answer leaves the claims to their end
 * (never fails the operator's action).
 */
export async function endAlertEpisode(store: Pick<SharedStore, "releaseClaims">, accountId: string, events: ReadonlyArray<"account_locked" | "account_quarantined">): Promise<void> {
  for (const event of events) {
    try {
      await store.releaseClaims(accountAlertPrefix(event, accountId));
    } catch {
      // the claims end at their time (an hour, a day)
    }
  }
}

/**
 * How the webhook claims alerts across instances (`WebhookOptions.claim`): before its first try an
 * instance leases the alert's claim for the time of its tries; once it has delivered the alert, or run
 * out of tries, it settles the lease into the alert's claim ({@link alertClaim}'s `until`). An instance
 * that stops before (killed) leaves the lease to lapse, and an instance refused while the lease held
 * ("trying") keeps the alert and claims it again, with `retake`, when the lease ends (or sooner, every
 * few seconds, `WebhookOptions.retakeEveryMs`; an instance that stops cleanly gives its lease up with
 * `release`, so the next ask takes it): it delivers the
 * alert if the lease lapsed, and leaves it if the lease was settled ("done"). So an alert is delivered
 * at least once while any instance that raised it runs (until 2026-12-05, later: at most once).
 */
export interface AlertClaimer {
  /** Leases `c` for `leaseMs`; `retake` after a refusal by a lease. Rejects when the store cannot answer. */
  take(c: AlertClaim, leaseMs: number, retake: boolean): Promise<ClaimAnswer>;
  /** Settles this instance's lease of `c` into the claim until `c.until`. Rejects when the store cannot answer. */
  settle(c: AlertClaim): Promise<void>;
  /**
   * Gives this instance's lease of `c` up, unsettled (the webhook stops before the alert was delivered),
   * so an instance the lease refused delivers it at its next ask. Optional (without it the lease lapses
   * at its end). Rejects when the store cannot answer.
   */
  release?(c: AlertClaim): Promise<void>;
}

/**
 * The webhook's `claim` for instances sharing `store` (`WebhookOptions.claim`; see {@link AlertClaimer}):
 * `SharedStore.claimOnce` with a lease, `SharedStore.settleClaim`, and `SharedStore.lapseClaim` to give a lease up.
 */
export function claimAlertsIn(store: Pick<SharedStore, "claimOnce" | "settleClaim" | "lapseClaim">): AlertClaimer {
  return {
    take: async (c, leaseMs, retake) => store.claimOnce(c.name, c.until, { ms: leaseMs, retake }),
    settle: async (c) => store.settleClaim(c.name, c.until),
    release: async (c) => store.lapseClaim(c.name),
  };
}
