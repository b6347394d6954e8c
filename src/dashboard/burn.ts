/**
 * Burn rate and projected time to exhaustion of a quota window (SPEC 9.4, Accounts page). Pure: no
 * clock, no I/O; the dashboard calls it with the window as `GET /admin/api/accounts` reports it and
 * the readings it has seen of that window while the page was open.
 *
 * Two ways to estimate the rate, best first:
 * 1. observed: a least-squares slope over the readings of the current window (readings before the
 *    last drop in use belong to an earlier window and are ignored), when they span at least
 *    {@link MIN_OBSERVED_SPAN_MS};
 * 2. window average: the share used so far divided by the time since the window started, when the
 *    window's length is known (from its name: `5h`, `7d`, `7d_opus`, …) together with its reset time.
 * Shares are fractions 0–1; rates are fractions per hour; times are ms since the epoch.
 */

/** One reading of a window: the share used at a time. */
export interface UsageSample {
  /** ms since the epoch of the reply the reading came from. */
  at: number;
  /** Share used, 0–1. */
  used: number;
}

/** What the estimate needs. */
export interface BurnInput {
  now: number;
  /** Share used now, 0–1. */
  used: number;
  /** When the window resets, if known. */
  resetAt?: number;
  /** The window's length in ms, if known (see {@link windowLengthMs}). */
  windowMs?: number;
  /** Readings seen so far, any order. */
  samples?: UsageSample[];
}

/** The verdict for a window. */
export type BurnVerdict =
  /** Nothing left. */
  | "exhausted"
  /** At the current rate the window runs out before it resets (or it has no reset time). */
  | "runs_out"
  /** At the current rate the window lasts until it resets. */
  | "lasts"
  /** The share used is not growing. */
  | "idle"
  /** Too little to go on. */
  | "unknown";

/** The estimate. */
export interface BurnEstimate {
  verdict: BurnVerdict;
  /** Share of the window used per hour (0.1 = 10 %/h). */
  ratePerHour?: number;
  /** When the window runs out at that rate (only for `runs_out`). */
  exhaustAt?: number;
  basis?: "observed" | "window_average";
}

/** Readings must span this long (60 s) before their slope is trusted. */
export const MIN_OBSERVED_SPAN_MS = 60_000;
/** A window must have run this long (5 min) before its average is trusted. */
export const MIN_AVERAGE_ELAPSED_MS = 5 * 60_000;

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };
const NAMED_MS: Record<string, number> = { hourly: 3_600_000, daily: 86_400_000, weekly: 7 * 86_400_000, monthly: 30 * 86_400_000 };

/**
 * The length of a quota window from its name as providers report it: a leading number and unit
 * (`5h`, `7d`, `7d_opus`, `30m`, `1w`) or a word (`daily`, `weekly`, …); undefined otherwise (e.g.
 * `requests`, `tokens`, Codex's `primary`).
 */
export function windowLengthMs(name: string): number | undefined {
  const m = /^(\d+)\s*([mhdw])(?:$|[_\-\s])/i.exec(name);
  if (m) return Number(m[1]) * UNIT_MS[m[2].toLowerCase()];
  return NAMED_MS[name.toLowerCase()];
}

/** The readings of the current window: those after the last drop in use, sorted by time. */
export function currentWindowSamples(samples: UsageSample[], windowStart?: number): UsageSample[] {
  const sorted = samples.filter((s) => Number.isFinite(s.at) && Number.isFinite(s.used) && (windowStart === undefined || s.at >= windowStart)).sort((a, b) => a.at - b.at);
  let start = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i].used < sorted[i - 1].used) start = i;
  return sorted.slice(start);
}

/** Least-squares slope of used over time, in share per ms; undefined for fewer than two distinct times. */
function slope(samples: UsageSample[]): number | undefined {
  const n = samples.length;
  if (n < 2) return undefined;
  const mt = samples.reduce((s, x) => s + x.at, 0) / n;
  const mu = samples.reduce((s, x) => s + x.used, 0) / n;
  let num = 0;
  let den = 0;
  for (const x of samples) {
    num += (x.at - mt) * (x.used - mu);
    den += (x.at - mt) ** 2;
  }
  return den === 0 ? undefined : num / den;
}

/** Estimates the burn rate and when the window runs out (see the module comment). */
export function estimateBurn(input: BurnInput): BurnEstimate {
  const used = Math.min(1, Math.max(0, input.used));
  if (used >= 1) return { verdict: "exhausted" };
  const windowStart = input.resetAt !== undefined && input.windowMs !== undefined ? input.resetAt - input.windowMs : undefined;

  let perMs: number | undefined;
  let basis: BurnEstimate["basis"];
  const current = currentWindowSamples(input.samples ?? [], windowStart);
  if (current.length >= 2 && current[current.length - 1].at - current[0].at >= MIN_OBSERVED_SPAN_MS) {
    perMs = slope(current);
    basis = "observed";
  }
  if (perMs === undefined && windowStart !== undefined) {
    const elapsed = input.now - windowStart;
    if (elapsed >= MIN_AVERAGE_ELAPSED_MS) {
      perMs = used / elapsed;
      basis = "window_average";
    }
  }
  if (perMs === undefined || basis === undefined) return { verdict: "unknown" };
  const ratePerHour = perMs * 3_600_000;
  if (perMs <= 0) return { verdict: "idle", ratePerHour: 0, basis };
  const exhaustAt = input.now + (1 - used) / perMs;
  if (input.resetAt !== undefined && exhaustAt >= input.resetAt) return { verdict: "lasts", ratePerHour, basis };
  return { verdict: "runs_out", ratePerHour, exhaustAt, basis };
}

/**
 * The share used (0–1) a window reports: `usedPercent / 100`, else `1 − remaining / limit`; undefined
 * when neither is known.
 */
export function usedShare(w: { usedPercent?: number; remaining?: number; limit?: number }): number | undefined {
  if (w.usedPercent !== undefined && Number.isFinite(w.usedPercent)) return Math.min(1, Math.max(0, w.usedPercent / 100));
  if (w.remaining !== undefined && w.limit !== undefined && w.limit > 0) return Math.min(1, Math.max(0, 1 - w.remaining / w.limit));
  return undefined;
}
