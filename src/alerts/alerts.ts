/**
 * Alerts (SPEC 9.7): turns what the gateway sees into `alert` events on the bus, which the webhook
 * (webhook.ts) and `GET /admin/api/events` carry on.
 *
 * | event | raised when | subject |
 * |---|---|---|
 * | `quota_threshold` | a key's budget use, or an account's quota window use, crosses one of `settings.alerts.quota_thresholds` (shares, e.g. 0.8); a key's budget also when it is used up (share 1, `detail.exhausted: true`, configured or not: its requests are refused from then on) | `key:NAME` / `account:ID` |
 * | `account_quarantined` | an `account_state` event with change `quarantine` | `account:ID` |
 * | `account_locked` | an `account_state` event with change `lock` | `account:ID` |
 * | `circuit_open` / `circuit_closed` | an `account_state` event with that change (once per provider, though the registry reports it per account) | `provider:ID` |
 *
 * A budget used up has no event of its own: SPEC 9.7 names the events, and `quota_threshold` is the
 * one for "a key's budget crossed a share" (SPEC 2.3: shares in (0, 1]); the whole budget is share 1.
 *
 * One step past several thresholds at once (a request that spends past 50 %, 80 % and the whole of a
 * small budget; a lowered budget; a quota window first read at 92 %) raises one alert, the highest
 * threshold crossed (the share 1 when the budget is used up), its `detail.passed` listing the lower ones
 * crossed with it (ascending); until 2026-12-07 each was its own alert, three webhook POSTs for one
 * request (tryout5). A step past one threshold raises that one, as before. Instances sharing a store
 * may see one pair's use in different steps, and so raise different alerts for it; the webhook says
 * each share once across them, as an alert or in `passed` (src/alerts/alert-claim.ts, "Passed shares").
 *
 * Each crossing is raised once: a budget's threshold once per budget window and amount, remembered
 * here (a threshold said, as an alert or in `passed`, is not said again in that window: a step reported
 * twice, as a shared store's concurrent first reads of a key did until 2026-12-07, raises nothing the
 * second time; a budget an operator changed is judged against its new amount: a lowered one raises at
 * the change the thresholds the window's use is then past and was not under the old amount, the share 1 too when it is used up,
 * and the others when use grows past them; a raised one raises nothing until use grows past one of
 * its thresholds), a quota window's once per
 * reset period (see {@link Alerts.scanQuotas}: a reset time that moves with every response does not
 * start a new period). Account quota windows are compared on a timer (default every 5 s) against what
 * was raised; windows already past a threshold when first seen after a restart raise nothing (they were
 * raised before). Nothing here runs on the request path except {@link Alerts.budgetChanged}, which is
 * a few comparisons (and nothing when no threshold is crossed).
 */
import type { AccountStateEvent, AlertEvent, EventBus } from "../events/bus.ts";
import { BUDGET_WINDOW_MS, keyNameOfId } from "../../pipeline/index.ts";
import type { BudgetChange, KeyBudget } from "../../pipeline/ports.ts";
import type { QuotaWindow } from "../store/types.ts";
import { remainingFraction } from "../accounts/quota.ts";

/**
 * A key budget an operator changed ({@link Alerts.budgetAmountChanged}): the budget now, its amount
 * before in the same window and unit (absent: the key had no such budget), and its window's use now
 * (tokens or USD) and end (ms since the epoch).
 */
export interface BudgetAmountChange {
  budget: KeyBudget;
  previous?: number;
  used: number;
  resetsAt: number;
}

/** Options of {@link Alerts}. */
export interface AlertsOptions {
  /** `settings.alerts.quota_thresholds` in force, ascending shares in (0, 1]. */
  thresholds: () => readonly number[];
  /** Every live account quota window (for the periodic comparison); omit to watch none. */
  quotaWindows?: () => Iterable<QuotaWindow>;
  /** ms since the epoch. */
  now: () => number;
  /** Period of the quota window comparison, ms. Default 5 000. */
  quotaScanMs?: number;
}

const CHANGE_EVENTS: Record<string, string> = {
  quarantine: "account_quarantined",
  lock: "account_locked",
  circuit_open: "circuit_open",
  circuit_closed: "circuit_closed",
};

/**
 * The share `used / limit` of a key budget, to 9 decimals. A USD budget's use is a sum of costs in
 * binary floating point: $0.02 + $0.02 of $0.05 is 0.7999999999999999, which is not past a 0.8
 * threshold, so the alert came one request later (at 120 %), or never when the budget then refused.
 */
export function budgetShare(used: number, limit: number): number {
  return Math.round((used / limit) * 1e9) / 1e9;
}

/** Raises alerts on the bus; see the module comment. */
export class Alerts {
  private readonly unsubscribe: () => void;
  private readonly timer?: ReturnType<typeof setInterval>;
  /**
   * Per quota window (`account|window|model`): the highest share whose thresholds were raised in the
   * window's current period, and when that period ends (the reset time read when it began).
   */
  private readonly seen = new Map<string, { raised: number; periodEnd?: number }>();
  /**
   * Per key budget (`id\0window\0unit\0amount`): the thresholds raised here in its window (as an alert
   * or in `passed`), and that window's end (ms since the epoch). Ended windows are dropped when 1 024 are kept.
   */
  private readonly budgetRaised = new Map<string, { resetsAt: number; said: number[] }>();
  /** Open (true) / closed (false) per provider, to report a circuit change once per provider. */
  private readonly circuits = new Map<string, boolean>();
  private readonly startedAt: number;

  constructor(
    private readonly bus: EventBus,
    private readonly opts: AlertsOptions,
  ) {
    this.startedAt = opts.now();
    this.unsubscribe = bus.subscribe((e) => {
      if (e.type === "account_state") this.accountState(e);
    }, ["account_state"]);
    if (opts.quotaWindows) {
      this.timer = setInterval(() => this.scanQuotas(), opts.quotaScanMs ?? 5000);
      this.timer.unref?.();
    }
  }

  private raise(event: string, subject: string, detail: Record<string, unknown>, at = this.opts.now(), periodEnd?: number, subjectId?: string): void {
    this.bus.publish(this.alertOf(event, subject, detail, at, periodEnd, subjectId));
  }

  private alertOf(event: string, subject: string, detail: Record<string, unknown>, at: number, periodEnd?: number, subjectId?: string): AlertEvent {
    // whole milliseconds: a budget's alert carried the settling clock's fraction (1796446018488.1301)
    const alert: AlertEvent = { type: "alert", event, at: Math.round(at), subject, detail };
    if (periodEnd !== undefined) alert.periodEnd = periodEnd;
    if (subjectId !== undefined) alert.subjectId = subjectId;
    return alert;
  }

  private accountState(e: AccountStateEvent): void {
    const event = CHANGE_EVENTS[e.change];
    if (!event) return;
    const detail: Record<string, unknown> = {};
    if (e.reason !== undefined) detail.reason = e.reason;
    if (e.until !== undefined) detail.until = new Date(e.until).toISOString();
    if (e.advice !== undefined) detail.advice = e.advice;
    if (event === "circuit_open" || event === "circuit_closed") {
      const provider = (e as AccountStateEvent & { provider?: string }).provider ?? e.account;
      const open = event === "circuit_open";
      if (this.circuits.get(provider) === open) return;
      this.circuits.set(provider, open);
      this.raise(event, `provider:${provider}`, detail, e.at);
      return;
    }
    if (e.model !== undefined) detail.model = e.model;
    this.raise(event, `account:${e.account}`, detail, e.at);
  }

  /** The thresholds crossed going from share `before` to `after` (before < t ≤ after). */
  private crossed(before: number, after: number): number[] {
    return this.opts.thresholds().filter((t) => before < t && t <= after);
  }

  /**
   * A key's request was settled (src/limits/accounting.ts): raises `quota_threshold` for the highest budget
   * share crossed ({@link budgetShare}), the share 1 when the budget is used up, configured or
   * not (once per window like them); the lower shares crossed in the same step are its `passed`. `key` is the key's id (pipeline/key-id.ts): the subject is
   * `key:NAME`, and a key created with a revoked key's name carries its id as `subjectId`. Detail: `window`, `unit` (`tokens` | `usd`), `limit`, `used`
   * (as the counters sum it: 12 significant digits, $0.054, not 0.05399999999999999), `threshold`, `resets_at` (to the second);
   * `exhausted: true` on the share 1's (the key's requests are refused until `resets_at`); `passed`
   * (ascending shares) when the step crossed lower thresholds too, absent otherwise.
   */
  budgetChanged(key: string, changes: readonly BudgetChange[], now: number): void {
    for (const c of changes) {
      const limit = c.budget.usd ?? c.budget.tokens!;
      this.raiseBudget(key, c.budget, budgetShare(c.before, limit), budgetShare(c.after, limit), c.after, c.resetsAt, now);
    }
  }

  /**
   * An operator changed a key's budgets (`PATCH /admin/api/keys/{name}`, `switchyard keys set`, the
   * dashboard's Edit limits, or a config reload for a key of the file: src/alerts/budget-change-alerts.ts):
   * raises `quota_threshold` for the highest threshold the window's use is past under the new amount and was
   * not under the previous one (the others as its `passed`) (`previous`: absent for a budget the key did not have), and the share 1
   * when the new amount is used up, as {@link budgetChanged} does when use grows. A lowered budget so
   * raises the thresholds it is now past, once: use growing later starts past them; a raised one raises
   * nothing. A threshold already raised in this window for the new amount is not raised again (a budget
   * raised and lowered back to the same amount in one window raises nothing at the second change). Same subject and detail as {@link budgetChanged} (`used`: the window's use at the change).
   */
  budgetAmountChanged(key: string, changes: readonly BudgetAmountChange[], now: number): void {
    for (const c of changes) {
      const before = c.previous === undefined ? 0 : budgetShare(c.used, c.previous);
      this.raiseBudget(key, c.budget, before, budgetShare(c.used, c.budget.usd ?? c.budget.tokens!), c.used, c.resetsAt, now);
    }
  }

  /**
   * The alerts {@link budgetAmountChanged} does not raise for `changes` because the window's use was
   * past their thresholds under the previous amount too (they were raised as the previous amount's),
   * made as they would be raised for the new amount, the share 1 among them when both are used up; none
   * for a budget without a previous amount. On a shared store these are claimed as delivered
   * (src/alerts/budget-change-alerts.ts), so that another instance that learns the window's use only
   * after the change, and sees it cross them under the new amount, does not deliver them.
   */
  budgetAlertsPassedBefore(key: string, changes: readonly BudgetAmountChange[], now: number): AlertEvent[] {
    const out: AlertEvent[] = [];
    for (const c of changes) {
      if (c.previous === undefined) continue;
      const both = Math.min(budgetShare(c.used, c.previous), budgetShare(c.used, c.budget.usd ?? c.budget.tokens!));
      const shares = this.opts.thresholds().filter((t) => t <= both);
      if (both >= 1 && !shares.includes(1)) shares.push(1);
      for (const t of shares) out.push(this.budgetAlert(key, c.budget, t, c.used, c.resetsAt, now));
    }
    return out;
  }

  /**
   * Raises the highest budget threshold crossed going from share `before` to `after` (the share 1 when
   * it is reached), with the lower ones crossed in the same step as its `passed`; see {@link budgetChanged}.
   */
  private raiseBudget(key: string, budget: KeyBudget, before: number, after: number, used: number, resetsAt: number, now: number): void {
    let shares = this.crossed(before, after);
    if (before < 1 && after >= 1 && !shares.includes(1)) shares.push(1);
    if (shares.length === 0) return;
    // Once per window and amount, whatever the steps say: the same step reported twice raises nothing more.
    const amount = budget.usd ?? budget.tokens!;
    const id = `${key}\0${budget.window}\0${budget.usd !== undefined ? "usd" : "tokens"}\0${amount}`;
    const was = this.budgetRaised.get(id);
    // the same window: its end as read here moves by milliseconds between looks (src/limits/counters.ts)
    const same = was !== undefined && Math.abs(was.resetsAt - resetsAt) < BUDGET_WINDOW_MS[budget.window] / 2;
    if (same) shares = shares.filter((x) => !was.said.includes(x));
    if (shares.length === 0) return;
    if (this.budgetRaised.size >= 1024) for (const [k, v] of this.budgetRaised) if (v.resetsAt < now) this.budgetRaised.delete(k);
    this.budgetRaised.set(id, { resetsAt, said: same ? [...was.said, ...shares] : [...shares] });
    const t = shares.pop()!;
    this.bus.publish(this.budgetAlert(key, budget, t, used, resetsAt, now, shares));
  }

  /**
   * A key budget's `quota_threshold` alert of threshold `t` (`passed`: the lower thresholds crossed in
   * the same step, raised with it, ascending); see {@link budgetChanged} for its subject and detail.
   */
  private budgetAlert(key: string, budget: KeyBudget, t: number, used: number, resetsAt: number, now: number, passed: readonly number[] = []): AlertEvent {
    const name = keyNameOfId(key);
    const detail: Record<string, unknown> = {
      kind: "key_budget",
      window: budget.window,
      unit: budget.usd !== undefined ? "usd" : "tokens",
      limit: budget.usd ?? budget.tokens!,
      used,
      threshold: t,
      // to the second, as the client's 429 says it: the window's end is re-read on the wall clock
      // at each look (src/limits/counters.ts), so its milliseconds differ between two alerts
      resets_at: new Date(Math.floor(resetsAt / 1000) * 1000).toISOString(),
    };
    if (t === 1) detail.exhausted = true;
    if (passed.length > 0) detail.passed = [...passed];
    return this.alertOf("quota_threshold", `key:${name}`, detail, now, undefined, key === name ? undefined : `key:${key}`);
  }

  /**
   * Compares every account quota window with what was last seen and raises `quota_threshold` for the
   * highest share crossed since. Detail: `window`, `model`, `used_share`, `threshold`, `passed` (the lower
   * shares crossed since, ascending, when any), `resets_at` (when known).
   *
   * A threshold is raised once per period of a window. The period is the one in force when the window
   * was first seen (or last began a period): it ends at that reading's reset time. Providers whose
   * reset time moves with every response (OpenAI's `x-ratelimit-reset-*` durations, Anthropic's token
   * buckets, Codex's `reset-after-seconds`) therefore raise a threshold at most once per window
   * length while the account stays busy, not at every scan; a share that dips under a threshold and
   * climbs back within the period raises nothing again. A window without a reset time has one period.
   * The alert carries the period's end (`AlertEvent.periodEnd`): instances sharing a store deliver
   * the threshold once until then (src/alerts/alert-claim.ts).
   */
  scanQuotas(): void {
    const windows = this.opts.quotaWindows?.();
    if (!windows) return;
    const now = this.opts.now();
    for (const w of windows) {
      const f = remainingFraction(w);
      if (f === undefined) continue;
      const share = 1 - f;
      const id = `${w.accountId}|${w.window}|${w.model}`;
      const last = this.seen.get(id);
      let raised: number;
      let periodEnd: number | undefined;
      if (last && (last.periodEnd === undefined || now < last.periodEnd)) {
        raised = last.raised;
        periodEnd = last.periodEnd;
      } else {
        // A new window, or its period has ended. One stored before this start was raised back then.
        raised = !last && (w.updatedAt ?? 0) < this.startedAt ? share : 0;
        periodEnd = w.resetAt;
      }
      this.seen.set(id, { raised: Math.max(raised, share), periodEnd });
      // one alert per scan step: the highest threshold crossed, the lower ones crossed with it as `passed`
      const shares = this.crossed(raised, share);
      const t = shares.pop();
      if (t === undefined) continue;
      const detail: Record<string, unknown> = { kind: "account_quota", window: w.window, model: w.model, used_share: Math.round(share * 1000) / 1000, threshold: t };
      if (shares.length > 0) detail.passed = shares;
      if (w.resetAt !== undefined) detail.resets_at = new Date(w.resetAt).toISOString();
      this.raise("quota_threshold", `account:${w.accountId}`, detail, now, periodEnd);
    }
  }

  /** Stops listening. */
  close(): void {
    this.unsubscribe();
    if (this.timer) clearInterval(this.timer);
  }
}
