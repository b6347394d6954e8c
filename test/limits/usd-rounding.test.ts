/**
 * USD amounts are rounded as the decimal a reader expects, on the command line (formats/usd-words.ts,
 * src/limits/dollars.ts) and on the dashboard (src/dashboard/client/format.ts, which uses the same
 * rounding). Until 2026-12-08 they went through `toFixed` / `toPrecision`, which round the binary
 * float: $0.0305 (0.030499… as a float, the cost of a claude-sonnet-4-5 call of 1000 input and 500
 * output tokens with 2 web searches) read "$0.030" in a column of three decimals, $1.005 (1.00499…)
 * read "$1.00".
 */
import { describe, expect, test } from "bun:test";
import { usdFixed, usdSignificant, usdWords } from "../../formats/usd-words.ts";
import { columnDecimals, dollarsColumn, dollarsPair } from "../../src/limits/dollars.ts";
import { usd, usdColumn } from "../../src/dashboard/client/format.ts";

/** The cost the gateway records for that call: 1000 × $3 + 500 × $15 per million, and 2 × $10 per 1,000 searches. */
const SEARCH_CALL = Number((0.003 + 0.0075 + 0.02).toPrecision(12));

describe("the shared rounding", () => {
  test("usdFixed: halves of the decimal value go up, where toFixed went down", () => {
    expect(SEARCH_CALL).toBe(0.0305);
    expect([usdFixed(0.0305, 3), usdFixed(SEARCH_CALL, 3), usdFixed(0.0015, 3), usdFixed(1.005, 2), usdFixed(0.000125, 5)]).toEqual(["0.031", "0.031", "0.002", "1.01", "0.00013"]);
    // what toFixed gave for the two whose float lies below the half
    expect([(0.0305).toFixed(3), (1.005).toFixed(2)]).toEqual(["0.030", "1.00"]);
    expect([usdFixed(0, 2), usdFixed(-1.005, 2), usdFixed(-0.001, 2), usdFixed(25, 2), usdFixed(0.1 + 0.2, 2), usdFixed(123456.785, 2)]).toEqual(["0.00", "-1.01", "0.00", "25.00", "0.30", "123456.79"]);
  });

  test("usdSignificant: two significant digits of the decimal value", () => {
    expect([usdSignificant(0.0305, 2), usdSignificant(0.0015, 2), usdSignificant(1.005, 3), usdSignificant(0.000125, 2), usdSignificant(0.0995, 2), usdSignificant(-0.0305, 2)]).toEqual([0.031, 0.0015, 1.01, 0.00013, 0.1, -0.031]);
  });
});

describe("the command line", () => {
  test("usdWords (keys list, a budget's 429)", () => {
    expect([0.0305, 0.0015, 1.005, 0.000125, SEARCH_CALL].map(usdWords)).toEqual(["$0.0305", "$0.0015", "$1.01", "$0.00013", "$0.0305"]);
  });

  test("a column (usage, calls list): $0.0305 beside $0.024 reads $0.031", () => {
    expect(columnDecimals([0.0305])).toBe(3);
    expect([0.0305, 0.02406].map(dollarsColumn([0.0305, 0.02406]))).toEqual(["$0.031", "$0.024"]);
    expect([0.0015, 1.005].map(dollarsColumn([0.0015, 1.005]))).toEqual(["$0.0015", "$1.0050"]);
    expect([1.005, 2].map(dollarsColumn([1.005, 2]))).toEqual(["$1.01", "$2.00"]);
    expect([0.000125, 0.5].map(dollarsColumn([0.000125, 0.5]))).toEqual(["$0.00013", "$0.50000"]);
  });

  test("a pair (a budget's use and amount)", () => {
    expect(dollarsPair(1.005, 5)).toEqual(["$1.01", "$5.00"]);
    expect(dollarsPair(0.0305, 0.05)).toEqual(["$0.0305", "$0.0500"]);
  });
});

describe("the dashboard", () => {
  test("usd (a tile, a chart's value)", () => {
    expect([0.0305, 0.0015, 1.005, 0.000125, SEARCH_CALL].map((n) => usd(n))).toEqual(["$0.03", "$0.0015", "$1.01", "$0.00013", "$0.03"]);
    expect(usd(-1.005)).toBe("-$1.01");
  });

  test("a column (the Calls and Usage pages' Cost)", () => {
    expect([SEARCH_CALL, 0.02406].map(usdColumn([SEARCH_CALL, 0.02406]))).toEqual(["$0.031", "$0.024"]);
    expect([1.005, 2].map(usdColumn([1.005, 2]))).toEqual(["$1.01", "$2.00"]);
    expect([0.000125, 0.0015].map(usdColumn([0.000125, 0.0015]))).toEqual(["$0.00013", "$0.00150"]);
  });
});
