/**
 * The difference A − B of two measurements taken in paired rounds (scripts/lib/budget-measure.ts
 * `pairedRounds`, for scripts/bench-budget.ts; docs/performance.md item 173): each round ran A and B
 * one right after the other, so the difference is taken within each round and the median over the
 * rounds is the figure. Other work on the machine, or a drift of the JIT, that lands on one round
 * lands on both of its sides alike, and a round it hit unevenly is dropped by the median; the
 * difference of the two sides' medians (how the budget's rows were taken before) keeps it whenever the
 * hit rounds are not the same ones on both sides.
 */

/** One timed run: its bracket id, µs per call (GC pauses included), calls made (as budget-measure's `Run`). */
export interface TimedRun {
  id: string;
  us: number;
  n: number;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

/**
 * µs per call of A − B: the median over the rounds of (A's run − B's run of the same round), each run
 * without the GC pauses logged inside its bracket (`gcUs`: µs by bracket id, {@link gcPausesByBracket}
 * of scripts/lib/gc-log.ts). `a[i]` and `b[i]` are round i's runs. Throws when either side is empty or
 * the two sides have a different number of rounds.
 */
export function pairedDifference(a: readonly TimedRun[], b: readonly TimedRun[], gcUs: ReadonlyMap<string, number> = new Map()): number {
  if (a.length === 0 || a.length !== b.length) throw new Error(`paired runs need the same rounds on both sides (got ${a.length} and ${b.length})`);
  const noGc = (r: TimedRun) => r.us - (gcUs.get(r.id) ?? 0) / r.n;
  return median(a.map((r, i) => noGc(r) - noGc(b[i]!)));
}
