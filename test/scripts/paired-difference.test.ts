/**
 * scripts/lib/paired-difference.ts: the budget's rows that are one difference of two measurements (the
 * attempt loop, the gateway wrapper, the app's hooks) read A − B within each paired round, median over
 * the rounds (docs/performance.md item 173), so a burst of other work that slows some rounds does not
 * show up as cost of the row.
 */
import { expect, test } from "bun:test";
import { pairedDifference, type TimedRun } from "../../scripts/lib/paired-difference.ts";

const runs = (side: string, us: number[]): TimedRun[] => us.map((u, i) => ({ id: `${side}~${i}`, us: u, n: 100 }));

test("a slow stretch that hits both sides of a round is not read as a difference", () => {
  // A costs 2 µs more than B; rounds 1–3 ran while other work slowed both of their sides, by different
  // amounts. The difference of the two sides' medians (the old reading) says 20 µs.
  const a = runs("a", [42, 90, 80, 70, 42]);
  const b = runs("b", [40, 50, 60, 88, 40]);
  const median = (xs: TimedRun[]) => xs.map((r) => r.us).sort((x, y) => x - y)[2]!;
  expect(median(a) - median(b)).toBe(20);
  expect(pairedDifference(a, b)).toBe(2);
});

test("the GC pauses logged inside each run's bracket are taken out of that run", () => {
  // Round 1's A met a 300 µs collection over its 100 calls: 3 µs per call that is GC, not the row.
  const gc = new Map([["a~1", 300]]);
  expect(pairedDifference(runs("a", [12, 15, 12]), runs("b", [10, 10, 10]), gc)).toBe(2);
  expect(pairedDifference(runs("a", [12, 15, 15]), runs("b", [10, 10, 10]), gc)).toBe(2);
  expect(pairedDifference(runs("a", [12, 15, 15]), runs("b", [10, 10, 10]))).toBe(5);
});

test("sides with different rounds, or none, are refused", () => {
  expect(() => pairedDifference(runs("a", [1, 2]), runs("b", [1]))).toThrow("same rounds");
  expect(() => pairedDifference([], [])).toThrow("same rounds");
});
