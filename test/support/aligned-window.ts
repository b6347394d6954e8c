/**
 * Fixed windows aligned to multiples of their length since the epoch (UTC): the shared key counters'
 * minutes (rpm, tpm) on PostgreSQL (SPEC 9.6 with D-2, src/limits/shared-counters.ts: `floor(now /
 * length) * length` on the database's clock, here the same machine's), and its budget windows until
 * schema 22 (since then they open at the first use, as on the embedded store). A 1d window ends at
 * midnight UTC, a minute at each minute. A test that counts in one such window and then asserts what it
 * holds (a refusal, a use, an alert, the window's end) fails when the window turns under it: the count
 * starts again from 0 in the next one. These helpers keep such a test inside one window.
 */

/** One aligned window: its start and end, ms since the epoch (the end is the next window's start). */
export interface AlignedWindow {
  start: number;
  end: number;
}

/** The window of `lengthMs` (60_000 for a minute, 86_400_000 for 1d) holding the instant `at` (ms since the epoch). */
export function alignedWindow(lengthMs: number, at: number = Date.now()): AlignedWindow {
  const start = Math.floor(at / lengthMs) * lengthMs;
  return { start, end: start + lengthMs };
}

/**
 * Waits, when the window of `lengthMs` running now ends within `roomMs`, until the next window has begun
 * (plus 50 ms); resolves at once otherwise. Call it just before a body that takes less than `roomMs`
 * (give it a margin of several times what the body takes on a loaded machine): the body then runs inside
 * the returned window. A test calling it needs a timeout of its own run time plus `roomMs`.
 * @returns the window the body runs in.
 */
export async function roomInWindow(lengthMs: number, roomMs: number): Promise<AlignedWindow> {
  const now = Date.now();
  const { end } = alignedWindow(lengthMs, now);
  if (end - now > roomMs) return alignedWindow(lengthMs, now);
  await Bun.sleep(end - now + 50);
  return alignedWindow(lengthMs);
}

/** A window's end as a 429's reason names it: ISO 8601 without milliseconds (`2026-12-06T00:00:00Z`). */
export const windowEndText = (w: AlignedWindow): string => new Date(w.end).toISOString().replace(/\.\d{3}Z$/, "Z");
