/**
 * Found (report only, low): usdFixed reads an amount to 10 significant digits before rounding it
 * (formats/usd-words.ts READ_DIGITS), so an amount whose shown digits need more than 10 loses its last
 * ones: they read "0". toFixed (before 2026-12-08) wrote them right.
 *
 * What a user notices: `switchyard usage` and the dashboard's Usage page cost column write every amount
 * with the decimals the column's smallest amount needs (columnDecimals, up to 8): a key's month total of
 * $12,345.678912 above a call of $0.000027 reads "$12345.678910" (the last two digits wrong); a total of
 * $123,456,789.125 reads "$123456789.10" in cents (want "$123456789.13").
 *
 * Expected: "123456789.13", "$12345.678912" (both columns).
 * Actual:   "123456789.10", "$12345.678910".
 * Likely in formats/usd-words.ts shifted() (n.toExponential(READ_DIGITS - 1)): the digits read should
 * cover at least the integer digits plus the decimals asked for.
 */
import { expect, test } from "bun:test";
import { usdFixed } from "../../formats/usd-words.ts";
import { usdColumn } from "../../src/dashboard/client/format.ts";
import { dollarsColumn } from "../../src/limits/dollars.ts";

test("an amount needing more than 10 significant digits keeps its digits", () => {
  const column = [0.000027, 12345.678912];
  expect({
    cents: usdFixed(123456789.125, 2),
    cli: dollarsColumn(column)(12345.678912),
    dashboard: usdColumn(column)(12345.678912),
  }).toEqual({ cents: "123456789.13", cli: "$12345.678912", dashboard: "$12345.678912" });
});
