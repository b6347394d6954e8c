/** Formatting for the dashboard: durations, times, counts, money. */
import { formatMs, formatWait } from "../../../formats/wait-words.ts";
import { columnDecimals, usdFixed, usdSignificant } from "../../limits/dollars.ts";

/**
 * "2h 14m", "3m 05s", "42s" for a positive span of ms; "now" at or below zero: the dashboard's ticking
 * countdowns and "… ago", which change every second on the page. Messages written once (a refusal, an
 * import's answer) say a duration with `formatWait` (formats/wait-words.ts) instead, as the 429s do.
 */
export function span(ms: number): string {
  if (!(ms > 0)) return "now";
  const s = Math.ceil(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m ${String(sec).padStart(2, "0")}s`;
  return `${sec}s`;
}

/**
 * A key budget window's reset as the Keys page writes it, "resets in 24h 0m": in the words of the
 * client's 429 for that budget ("the window resets in 24h 0m", pipeline/key-limits.ts), which round
 * up (formats/wait-words.ts), so the two agree at the same moment; "resets now" once it has passed.
 */
export function budgetResets(resetsAt: number, now: number): string {
  return resetsAt - now > 0 ? `resets in ${formatWait(resetsAt - now)}` : "resets now";
}

/**
 * What one bar or point of a chart counts, from the usage API's `bucket` ("1m", "1h", "1d"): "per
 * minute", "per hour", "per day" (a chart's title says it, so its latest value is not read as the
 * period's total).
 */
export function perBucket(bucket: string): string {
  if (bucket === "1m") return "per minute";
  if (bucket === "1h") return "per hour";
  if (bucket === "1d") return "per day";
  return `per ${bucket}`;
}

/** Local hour and minute as the pages write a time: "08:52 AM" (en-US), "08:52" (en-GB), the reader's locale and time zone. */
function hourMinute(d: Date): string {
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

/** The local date as the pages write it: "Dec 3", "Dec 3, 2025" when not in `now`'s year. */
function shortDate(d: Date, now: Date): string {
  return d.toLocaleDateString([], d.getFullYear() === now.getFullYear() ? { month: "short", day: "numeric" } : { year: "numeric", month: "short", day: "numeric" });
}

/** Local clock time (HH:MM, with the date when not today). */
export function clock(ms: number): string {
  const d = new Date(ms);
  const today = new Date();
  const hm = hourMinute(d);
  if (d.toDateString() === today.toDateString()) return hm;
  return `${d.toLocaleDateString([], { month: "short", day: "numeric" })} ${hm}`;
}

/**
 * The time of a chart's point whose bucket is `bucketMs` wide, as its legend writes it: a day's bucket
 * its date alone ("Dec 3", today's too: its "12:00 AM" read as a moment), else {@link clock}. The time
 * axis writes its ticks in the same words ({@link timeTicks}).
 */
export function chartTime(ms: number, bucketMs: number | undefined, now = new Date()): string {
  if (bucketMs !== undefined && bucketMs >= 86_400_000) return shortDate(new Date(ms), now);
  return clock(ms);
}

/**
 * Labels of a chart's time-axis ticks `splits` (seconds since the epoch, as uPlot gives them), `incr`
 * seconds apart, in the words of the chart's legend and the rest of the pages ({@link chartTime}; they
 * were uPlot's own, "8:25am" under a legend reading "08:25 AM"): the local time ("08:25 AM"; with
 * seconds when ticks are under a minute apart) and under it, on a second line, the date ("Dec 4")
 * where the day differs from the tick before's, the first tick's counting when it is not today (a
 * time alone reads as today's, as in the legend); ticks a day or more apart the date alone.
 */
export function timeTicks(splits: readonly number[], incr: number, now = new Date()): string[] {
  let day = now.toDateString();
  return splits.map((s) => {
    if (s === null || s === undefined || !Number.isFinite(s)) return "";
    const d = new Date(s * 1000);
    if (incr >= 86_400) return shortDate(d, now);
    const time = incr < 60 ? clockSeconds(s * 1000) : hourMinute(d);
    const changed = d.toDateString() !== day;
    day = d.toDateString();
    return changed ? `${time}\n${d.toLocaleDateString([], { month: "short", day: "numeric" })}` : time;
  });
}

/**
 * The local date of `ms` ("Dec 3"; "Dec 3, 2025" in another year) when it is not today's, else
 * undefined: a list of times shows it where a time alone would read as today's.
 */
export function dateIfNotToday(ms: number, now = Date.now()): string | undefined {
  const d = new Date(ms);
  const today = new Date(now);
  if (d.toDateString() === today.toDateString()) return undefined;
  return shortDate(d, today);
}

/** Local time with seconds. */
export function clockSeconds(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** "3 min ago". */
export function ago(ms: number, now = Date.now()): string {
  const d = now - ms;
  if (d < 5000) return "just now";
  return `${span(d)} ago`;
}

/**
 * 1234 → "1,234"; 12345 → "12.3k"; 1234567 → "1.23M"; a round figure without its zeros: 100000 →
 * "100k", 2000000 → "2M", as the charts' axes and legends write them (a key's budget of 100,000
 * tokens read "100.0k tokens").
 */
export function count(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return "–";
  // the unit after rounding: 999,960 is "1M", not "1000k" (review17 R8)
  if (Math.abs(n) >= 1e6 || Math.abs(+(n / 1e3).toFixed(1)) >= 1000) return `${+(n / 1e6).toFixed(2)}M`;
  if (Math.abs(n) >= 1e4) return `${+(n / 1e3).toFixed(1)}k`;
  return Math.round(n).toLocaleString("en-US");
}

/**
 * USD: cents from $0.01 up ("$1.25"); below a cent two significant digits ("$0.0012", "$0.000038"), so
 * a call of a few thousandths of a cent never reads as "$0.0000"; under $0.00000001 "<$0.00000001".
 */
export function usd(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return "–";
  if (n === 0) return "$0";
  const sign = n < 0 ? "-" : "";
  const a = usdSignificant(Math.abs(n), 2);
  if (a >= 0.01) return `${sign}$${usdFixed(Math.abs(n), 2)}`;
  if (a < 1e-8) return `${sign}<$0.00000001`;
  return `${sign}$${usdFixed(a, 8).replace(/0+$/, "")}`;
}

/**
 * A formatter for one column of USD amounts (`values`, the column's amounts): every amount with the
 * same number of decimals, as many as its smallest non-zero amount needs for two significant digits
 * (at least 2 — cents —, at most 8), so a column does not mix "$1.25" with "$0.0012" (newuser12b's
 * tryout, H8): "$1.2500" above "$0.0012". A column whose smallest amount is between a cent and a dime
 * keeps its second digit too: $0.025 reads "$0.025", not usd()'s "$0.03" (two such calls read "$0.06"
 * beside a total of $0.05). Zero reads "$0", as {@link usd} writes it; a column of dimes and more reads
 * as usd() does. The decimals are src/limits/dollars.ts columnDecimals, which `switchyard usage` uses too.
 */
export function usdColumn(values: ReadonlyArray<number | undefined | null>): (n: number | undefined | null) => string {
  // the rule the command line's columns use too (src/limits/dollars.ts dollarsColumn)
  const decimals = columnDecimals(values);
  return (n) => {
    if (n === undefined || n === null || !Number.isFinite(n)) return "–";
    if (n === 0) return "$0";
    if (Math.abs(n) < 1e-8) return usd(n);
    return `${n < 0 ? "-" : ""}$${usdFixed(Math.abs(n), decimals)}`;
  };
}

/** A share 0–1 as "42 %". */
export function pct(share: number | undefined): string {
  if (share === undefined || !Number.isFinite(share)) return "–";
  return `${Math.round(share * 1000) / 10} %`;
}

/** Milliseconds as "812 ms" / "1.4 s" (formats/wait-words.ts formatMs: the CLI's trace lines say durations with it too). */
export const ms = formatMs;

/** A reason without the ISO end time the API appends to it (the page shows a countdown instead). */
export function withoutIsoTime(reason: string | undefined): string {
  return (reason ?? "").replace(/ until \d{4}-\d\d-\d\dT[\d:.]+Z/, "");
}

/**
 * Labels of a chart's value-axis ticks `vals`, `incr` apart: as many decimals as the step needs, so
 * ticks 0.0002 apart read 0, 0.0002, 0.0004 instead of 0, 0, 0; 1,000 and up as "1.5k" / "2M".
 */
export function axisTicks(vals: number[], incr: number): string[] {
  // the digits the step itself has (0.00025 → 5); a whole step keeps one (uPlot may split 0–5 by 0.5)
  let decimals = 1;
  if (incr > 0 && incr < 1) for (decimals = 0; decimals < 10 && Math.abs(incr * 10 ** decimals - Math.round(incr * 10 ** decimals)) > 1e-6; decimals++);
  return vals.map((v) => {
    if (v === null || v === undefined || !Number.isFinite(v)) return "";
    if (Math.abs(v) >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
    if (Math.abs(v) >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
    return `${+v.toFixed(decimals)}`;
  });
}

/**
 * This browser's UTC offset now, whole minutes east of UTC (-480 in California in winter, 330 in
 * India): what the usage API's `tz_offset` takes, so a chart's day (or hour) buckets are the
 * reader's days, from local midnight, and not UTC's.
 */
export function tzOffsetMinutes(now = new Date()): number {
  return -now.getTimezoneOffset() || 0;
}
