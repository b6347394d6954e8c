/**
 * How long until something, in words, for a refusal's message (pipeline/key-limits.ts) and for the
 * dashboard's Keys page (src/dashboard/client/format.ts `budgetResets`): one rule, so a client's 429
 * and the page say the same at the same moment; and, rounded the other way, how long ago an imported
 * login expired (src/admin/subscription-routes.ts, src/cli/import.ts); and a measured duration in
 * milliseconds ({@link formatMs}: the dashboard's latencies, the route trace's refresh lines in
 * pipeline/trace-words.ts). Pure (beside retry-after.ts, which reads a wait); part of the browser bundle.
 */

/**
 * "40 s", "5 min", "2h 5m", "3d 4h" for `ms` milliseconds. Every unit is rounded up, never down, as
 * the `Retry-After` header beside a refusal is (whole seconds, rounded up): with 23 h 59 min 40 s left
 * it says "24h 0m", never a time before the real one. Under 2 minutes in seconds, under 2 hours in
 * minutes, under 2 days in hours and minutes, else days and hours. At or below zero, "1 s".
 */
export function formatWait(ms: number): string {
  return inWords(ms, Math.ceil);
}

/**
 * How long ago something happened, in the words of `formatWait` but every unit rounded down, so a
 * time is never said to lie further back than it does ("expired 60 min ago" 60 min 0.5 s after, where
 * `formatWait` would say 61). At or below one second, "1 s".
 */
export function formatElapsed(ms: number): string {
  return inWords(ms, Math.floor);
}

function inWords(ms: number, round: (x: number) => number): string {
  const s = Math.max(1, round(ms / 1000));
  if (s < 120) return `${s} s`;
  const m = round(s / 60);
  if (m < 120) return `${m} min`;
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  return d >= 2 ? `${d}d ${h % 24}h` : `${h}h ${m % 60}m`;
}

/**
 * A measured duration of `n` milliseconds: "812 ms" under a second, else seconds with one decimal
 * ("1.4 s"); "–" when there is none (undefined, null, not finite). The dashboard's latencies and
 * waits (src/dashboard/client/format.ts `ms`) and the route trace's refresh lines.
 */
export function formatMs(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return "–";
  return n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`;
}
