/**
 * Regression test: usdFixed read every amount to 10 significant digits before rounding it
 * (formats/usd-words.ts), so an amount whose shown digits need more lost its last ones: $123,456,789.125
 * in cents read "$123456789.10" (want "…13"), and `switchyard usage` / the dashboard's Usage cost column
 * with 6 decimals (a month total of $12,345.678912 above a call of $0.000027) read "$12345.678910".
 * It now reads one digit more than it shows (at least 10, at most 15).
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
