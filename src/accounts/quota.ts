/**
 * Quota windows per account (SPEC P-5, A-1): the remaining quota providers report in their rate-limit
 * headers, held in memory for routing. Filled from the store at start and on every periodic re-read,
 * and by {@link QuotaBook.set} as responses report new numbers (the quota reader of issue 6 calls the
 * registry's `setQuota`, which also writes through the store's buffered `setQuota`).
 */
import { ALL_MODELS, QUOTA_MODELS_PER_ACCOUNT, QUOTA_NO_RESET_STALE_MS, type QuotaWindow } from "../store/types.ts";

/** SPEC A-1: an account reporting this fraction (2 %) or less remaining for a model is excluded. */
export const QUOTA_EXCLUDE_FRACTION = 0.02;

/**
 * The remaining fraction (0–1) a window reports: `100 − usedPercent` when the provider reports a
 * percentage, else `remaining / limit`; undefined when neither is known.
 */
export function remainingFraction(w: QuotaWindow): number | undefined {
  if (w.usedPercent !== undefined && Number.isFinite(w.usedPercent)) return clamp01((100 - w.usedPercent) / 100);
  if (w.remaining !== undefined && w.limit !== undefined && w.limit > 0) return clamp01(w.remaining / w.limit);
  return undefined;
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/**
 * A quota window as it leaves the gateway (GET /admin/api/quota and GET /admin/api/accounts `quota`,
 * read by the dashboard, `switchyard usage` and `accounts status --json`): the provider's numbers and
 * `remainingPercent` (0–100, one decimal, when {@link remainingFraction} knows it). Never the store's
 * `keyHash` (a digest of the upstream API key).
 */
export type ShownQuotaWindow = Omit<QuotaWindow, "keyHash"> & {
  /** 0–100, one decimal, when {@link remainingFraction} knows it. */
  remainingPercent?: number;
};

/**
 * The {@link ShownQuotaWindow} of a window, built member by member: a member added to QuotaWindow for
 * the store's own use stays in the store until it is named here (the admin reply schema,
 * src/admin/reply-schemas.ts QuotaWindowReply, refuses members it does not list).
 */
export function shownQuotaWindow(w: QuotaWindow): ShownQuotaWindow {
  const out: ShownQuotaWindow = { accountId: w.accountId, window: w.window, model: w.model };
  if (w.usedPercent !== undefined) out.usedPercent = w.usedPercent;
  if (w.remaining !== undefined) out.remaining = w.remaining;
  if (w.limit !== undefined) out.limit = w.limit;
  if (w.resetAt !== undefined) out.resetAt = w.resetAt;
  if (w.updatedAt !== undefined) out.updatedAt = w.updatedAt;
  const f = remainingFraction(w);
  if (f !== undefined) out.remainingPercent = Math.round(f * 1000) / 10;
  return out;
}

/** The tightest window that applies: its fraction and the window itself. */
export interface QuotaReading {
  fraction: number;
  window: QuotaWindow;
}

/**
 * The most models (other than `*`) whose windows {@link QuotaBook} keeps per account, and the most
 * token limits it keeps per account besides the `*` ones. Per-model windows come from the rate-limit
 * headers of the request's model (src/providers/quota-headers.ts), and an OpenAI-compatible upstream
 * answers for whatever model name the client sent: without a bound each new name added an entry for the
 * process's life and every `set` scanned them all. A real account serves tens of models at most; past the
 * cap the least recently set model is forgotten first (its next response reports it again). The `*`
 * windows (every model of the account) are never dropped for room. The stores keep as many
 * (src/store/account-state.ts QUOTA_MODELS_PER_ACCOUNT, the most recently read), so a re-read keeps them all.
 */
export const MAX_QUOTA_MODELS_PER_ACCOUNT = QUOTA_MODELS_PER_ACCOUNT;

/** How many of an account's least recently set models each `set` looks at to drop windows whose reset has passed. */
const EXPIRED_SWEEP_PER_SET = 2;

/**
 * Quota windows by account, by model, by window name. A lookup for (account, model) reads the model's
 * windows and the `*` ones, O(windows of those two); a `set` is O(1) (plus a sweep of at most
 * {@link EXPIRED_SWEEP_PER_SET} models). At most {@link MAX_QUOTA_MODELS_PER_ACCOUNT} models per account.
 */
export class QuotaBook {
  /** account → model → window name → window; models in least-recently-set-first order. */
  private byAccount = new Map<string, Map<string, Map<string, QuotaWindow>>>();
  /** Per account, the last token limit of each `tokens` / `input-tokens` window (by window and model), read or not since ({@link tokenLimit}); least recently set first. */
  private limits = new Map<string, Map<string, { model: string; limit: number; at: number }>>();

  /**
   * Replaces every window (store re-read); `keep` says no to a window that is not the account's (the
   * registry's: another API key's). Set in the order they were read upstream (`updatedAt`, oldest first;
   * the store's order on a tie), so the models least recently set are still the first dropped for room.
   */
  load(windows: QuotaWindow[], keep?: (w: QuotaWindow) => boolean): void {
    const next = new Map<string, Map<string, Map<string, QuotaWindow>>>();
    const byAge = windows.map((w, i) => ({ w, i })).sort((a, b) => (a.w.updatedAt ?? 0) - (b.w.updatedAt ?? 0) || a.i - b.i);
    for (const { w } of byAge) {
      if (keep !== undefined && !keep(w)) continue;
      put(next, w);
      this.keepLimit(w);
    }
    this.byAccount = next;
  }

  /**
   * Sets one window, replacing the one with the same account, window name and model; drops the windows
   * of the account's least recently set models whose reset is at or before `q.updatedAt`, and, past
   * {@link MAX_QUOTA_MODELS_PER_ACCOUNT} models, the least recently set model's windows.
   */
  set(q: QuotaWindow): void {
    const models = put(this.byAccount, q);
    this.keepLimit(q);
    // The reading's own time (the response's, from the registry's clock) says what has reset; a window set
    // without one sweeps nothing (the cap still bounds the account).
    const now = q.updatedAt;
    if (now === undefined) return;
    let looked = 0;
    for (const [model, byWindow] of models) {
      if (looked++ >= EXPIRED_SWEEP_PER_SET) break;
      for (const [name, w] of byWindow) if (!isLive(w, now)) byWindow.delete(name);
      if (byWindow.size === 0) models.delete(model);
    }
  }

  /** Live windows of an account ({@link isLive}: reset time in the future, or unknown and read within a day). */
  windows(accountId: string, now: number): QuotaWindow[] {
    const out: QuotaWindow[] = [];
    for (const byWindow of this.byAccount.get(accountId)?.values() ?? []) {
      for (const w of byWindow.values()) if (isLive(w, now)) out.push(w);
    }
    return out;
  }

  /**
   * The tightest live window that applies to (account, model): windows for this model and for every
   * model (`*`). Undefined when none reports a fraction.
   */
  tightest(accountId: string, model: string, now: number, perModelOnly = false): QuotaReading | undefined {
    // Read in place, not through `windows` (a new array and a closure per call): this runs for every
    // account a request considers, and most accounts report no window at all (docs/performance.md item 197).
    const models = this.byAccount.get(accountId);
    if (models === undefined) return undefined;
    let best = tightestOf(models.get(model), now, undefined);
    if (!perModelOnly && model !== ALL_MODELS) best = tightestOf(models.get(ALL_MODELS), now, best);
    return best;
  }

  /**
   * The smallest per-minute token limit (tokens) the account's rate-limit headers last reported for
   * `model` or for all its models: the `limit` of its `tokens` window (OpenAI `x-ratelimit-limit-tokens`,
   * Anthropic `anthropic-ratelimit-tokens-limit`) or `input-tokens` window (Anthropic
   * `anthropic-ratelimit-input-tokens-limit`); undefined when none was reported. Kept after the window
   * resets and the store drops its row (a per-minute window often resets within seconds): the limit is
   * the account's tier, which outlives one minute's use; a later reading replaces it. At most
   * {@link MAX_QUOTA_MODELS_PER_ACCOUNT} per account besides the `*` ones (least recently set forgotten).
   */
  tokenLimit(accountId: string, model: string): number | undefined {
    const limits = this.limits.get(accountId);
    if (limits === undefined) return undefined;
    let least: number | undefined;
    for (const window of TOKEN_WINDOWS) {
      for (const m of model === ALL_MODELS ? [model] : [model, ALL_MODELS]) {
        const l = limits.get(limitKey(window, m));
        if (l !== undefined && (least === undefined || l.limit < least)) least = l.limit;
      }
    }
    return least;
  }

  /**
   * Forgets the token limits ({@link tokenLimit}) of each account `keep` says no to: an account removed,
   * whose windows go when the store's rows do (its account deleted, {@link load}); a re-keyed account's
   * windows and limits go at once ({@link forgetAccount}). O(accounts with a limit).
   */
  forgetLimits(keep: (accountId: string) => boolean): void {
    for (const id of this.limits.keys()) if (!keep(id)) this.limits.delete(id);
  }

  /**
   * Forgets every window and token limit of the account (its API key was replaced, another login given to
   * it: a new credential is a new quota; the registry clears the store's rows too). With `upTo` (ms since
   * the epoch), only those read at or before it (`updatedAt`): after a re-read while the store's delete
   * waits, the rows it still has of the old credential go, the new one's read since stay. O(1) without
   * `upTo`, else O(windows of the account).
   */
  forgetAccount(accountId: string, upTo?: number): void {
    if (upTo === undefined) {
      this.byAccount.delete(accountId);
      this.limits.delete(accountId);
      return;
    }
    const models = this.byAccount.get(accountId);
    if (models) {
      for (const [model, byWindow] of models) {
        for (const [name, w] of byWindow) if ((w.updatedAt ?? 0) <= upTo) byWindow.delete(name);
        if (byWindow.size === 0) models.delete(model);
      }
      if (models.size === 0) this.byAccount.delete(accountId);
    }
    const limits = this.limits.get(accountId);
    if (limits) for (const [k, l] of limits) if (l.at <= upTo) limits.delete(k);
    if (limits?.size === 0) this.limits.delete(accountId);
  }

  /** The accounts with a token limit kept ({@link forgetLimits}). */
  limitedAccounts(): IterableIterator<string> {
    return this.limits.keys();
  }

  /** Keeps `w`'s token limit for {@link tokenLimit} unless a newer reading of the same window is kept. */
  private keepLimit(w: QuotaWindow): void {
    if ((w.window !== "tokens" && w.window !== "input-tokens") || w.limit === undefined || !(w.limit > 0)) return;
    let limits = this.limits.get(w.accountId);
    if (limits === undefined) this.limits.set(w.accountId, (limits = new Map()));
    const key = limitKey(w.window, w.model);
    const at = w.updatedAt ?? 0;
    const kept = limits.get(key);
    if (kept !== undefined && at < kept.at) return;
    limits.delete(key); // re-inserted last: least recently set first
    limits.set(key, { model: w.model, limit: w.limit, at });
    let cap = MAX_QUOTA_MODELS_PER_ACCOUNT;
    for (const window of TOKEN_WINDOWS) if (limits.has(limitKey(window, ALL_MODELS))) cap++;
    if (limits.size > cap) {
      for (const [k, l] of limits) {
        if (l.model === ALL_MODELS) continue;
        limits.delete(k);
        break;
      }
    }
  }

  /**
   * SPEC A-1: the exclusion of an account reporting ≤ 2 % remaining for this model (or for all its
   * models), until the window resets; undefined when it has quota or reports none. The reason leaves
   * the end time to `until`.
   */
  exhausted(accountId: string, model: string, now: number): { reason: string; until?: number } | undefined {
    const r = this.tightest(accountId, model, now);
    if (!r || r.fraction > QUOTA_EXCLUDE_FRACTION) return undefined;
    const until = r.window.resetAt;
    return {
      reason: `quota ${Math.round(r.fraction * 1000) / 10} % left in window ${r.window.window}${r.window.model === ALL_MODELS ? "" : ` for ${r.window.model}`}`,
      until,
    };
  }
}

/** The windows whose `limit` {@link QuotaBook.tokenLimit} keeps. */
const TOKEN_WINDOWS = ["tokens", "input-tokens"] as const;

const limitKey = (window: string, model: string) => `${window}\u0000${model}`;

/**
 * Puts `w` into `into` (account → model → window name), its model moved last (most recently set); past
 * {@link MAX_QUOTA_MODELS_PER_ACCOUNT} models other than `*`, the least recently set one is dropped.
 * Returns the account's models.
 */
function put(into: Map<string, Map<string, Map<string, QuotaWindow>>>, w: QuotaWindow): Map<string, Map<string, QuotaWindow>> {
  let models = into.get(w.accountId);
  if (models === undefined) into.set(w.accountId, (models = new Map()));
  const byWindow = models.get(w.model) ?? new Map<string, QuotaWindow>();
  models.delete(w.model);
  models.set(w.model, byWindow);
  byWindow.set(w.window, { ...w });
  const cap = MAX_QUOTA_MODELS_PER_ACCOUNT + (models.has(ALL_MODELS) ? 1 : 0);
  if (models.size > cap) {
    for (const model of models.keys()) {
      if (model === ALL_MODELS) continue;
      models.delete(model);
      break;
    }
  }
  return models;
}

/**
 * Whether a window still says something at `now` (ms since the epoch): its reset time is after `now`,
 * or it has none and was read less than {@link QUOTA_NO_RESET_STALE_MS} (a day) before `now` (or at an
 * unknown time), as the store keeps it (src/store/account-state.ts).
 */
export function isLive(w: QuotaWindow, now: number): boolean {
  if (w.resetAt !== undefined) return w.resetAt > now;
  return w.updatedAt === undefined || w.updatedAt > now - QUOTA_NO_RESET_STALE_MS;
}

/** The tightest live window of `byWindow` with a known fraction, or `best` when none is tighter. */
function tightestOf(byWindow: Map<string, QuotaWindow> | undefined, now: number, best: QuotaReading | undefined): QuotaReading | undefined {
  if (byWindow === undefined) return best;
  for (const w of byWindow.values()) {
    if (!isLive(w, now)) continue; // lapsed: not live (`windows`)
    const f = remainingFraction(w);
    if (f === undefined) continue;
    if (!best || f < best.fraction) best = { fraction: f, window: w };
  }
  return best;
}
