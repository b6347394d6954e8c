/**
 * scripts/bench's lane order per round (docs/performance.md item 97): with one fixed order the Gemini
 * lanes, listed last, were always measured at the end of a round, and a lane's position in a round moved
 * its CPU per request. Over two rounds every row (lane × mode) must sit on average in the middle of a
 * round (early in one round, as late in the other), and a single round (--smoke, --rounds 1) keeps the
 * listed order.
 */
import { expect, test } from "bun:test";
import { balancedSequence, benchLanes, MODES, rotated, roundOrder } from "../../scripts/bench-lanes.ts";

const rows = benchLanes(2).flatMap((l) => (l.modes ?? MODES).map((m) => `${l.name} ${m}`));

test("every lane of scripts/bench sits on average in the middle of a round over two rounds", () => {
  expect(rows.length).toBeGreaterThan(10);
  for (const row of rows) {
    const [a, b] = [0, 1].map((r) => roundOrder(rows, r).indexOf(row));
    expect([row, (a + b) / 2]).toEqual([row, (rows.length - 1) / 2]);
  }
  // The Gemini client lanes (listed last) open the odd rounds.
  expect(roundOrder(rows, 1).slice(0, 2)).toEqual(["gemini→chat stream", "gemini→chat json"]);
});

test("even rounds keep the listed order, odd rounds reverse it, and the rows given are not changed", () => {
  const copy = [...rows];
  expect(roundOrder(rows, 0)).toEqual(copy);
  expect(roundOrder(rows, 2)).toEqual(copy);
  expect(roundOrder(rows, 3)).toEqual([...copy].reverse());
  expect(rows).toEqual(copy);
});

test("bench-ab --latency's request order: each target comes right after every other exactly once per cycle (item 153)", () => {
  for (const n of [2, 3, 4, 5]) {
    const seq = balancedSequence(n);
    expect(seq.length).toBe(n * (n - 1));
    // The cycle's pairs (the last entry is followed by the first, as the requests go on).
    const pairs = seq.map((x, i) => `${x}>${seq[(i + 1) % seq.length]}`);
    const every = Array.from({ length: n }, (_, a) => Array.from({ length: n }, (_, b) => `${a}>${b}`)).flat().filter((p) => p[0] !== p.at(-1));
    expect(pairs.toSorted()).toEqual(every.toSorted());
  }
  // Two targets alternate; three go 0,1,2 then back through 0,2,1.
  expect(balancedSequence(2)).toEqual([0, 1]);
  expect(balancedSequence(3)).toEqual([0, 1, 2, 0, 2, 1]);
});

test("bench-ab --latency's start orders: each server takes each place once over as many rounds as servers", () => {
  expect([0, 1, 2, 3].map((r) => rotated(["a", "b"], r).join(","))).toEqual(["a,b", "b,a", "a,b", "b,a"]);
  const three = [0, 1, 2].map((r) => rotated(["a", "b", "c"], r));
  for (const k of ["a", "b", "c"]) expect(three.map((o) => o.indexOf(k)).toSorted()).toEqual([0, 1, 2]);
});
