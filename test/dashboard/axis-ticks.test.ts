/**
 * The value-axis labels of the dashboard's charts and its dollar amounts (src/dashboard/client/format.ts
 * axisTicks, usd): the cost charts' ticks are fractions of a cent apart, and each tick must read
 * differently from its neighbours; a cost above zero never reads as zero.
 */
import { expect, test } from "bun:test";
import { axisTicks, count, usd } from "../../src/dashboard/client/format.ts";

test("ticks a fraction of a cent apart keep the digits that tell them apart", () => {
  expect(axisTicks([0, 0.0002, 0.0004, 0.0006, 0.0008, 0.001], 0.0002)).toEqual(["0", "0.0002", "0.0004", "0.0006", "0.0008", "0.001"]);
  expect(axisTicks([0, 0.00025, 0.0005], 0.00025)).toEqual(["0", "0.00025", "0.0005"]);
  expect(axisTicks([0, 0.5, 1, 1.5], 0.5)).toEqual(["0", "0.5", "1", "1.5"]);
});

test("counts: whole numbers, thousands and millions shortened", () => {
  expect(axisTicks([0, 2, 4, 6], 2)).toEqual(["0", "2", "4", "6"]);
  expect(axisTicks([0, 1500, 3000], 1500)).toEqual(["0", "1.5k", "3k"]);
  expect(axisTicks([0, 2_000_000], 2_000_000)).toEqual(["0", "2M"]);
});

test("count: a figure just under a million reads 1M, not 1000k (review17 R8); round figures without zeros", () => {
  expect([count(999_949), count(999_960), count(999_999), count(1_000_000), count(100_000), count(12_345), count(1_234)]).toEqual(["999.9k", "1M", "1M", "1M", "100k", "12.3k", "1,234"]);
});

test("dollars: cents from $0.01, two significant digits below a cent, never $0.0000 for a cost above zero", () => {
  expect([usd(0), usd(1.234), usd(0.01), usd(0.0096), usd(0.0012), usd(0.000129), usd(0.000043), usd(3.8e-7), usd(0.00999), usd(5e-9), usd(undefined)]).toEqual([
    "$0",
    "$1.23",
    "$0.01",
    "$0.0096",
    "$0.0012",
    "$0.00013",
    "$0.000043",
    "$0.00000038",
    "$0.01",
    "<$0.00000001",
    "–",
  ]);
});
