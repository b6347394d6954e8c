/**
 * Found (report only, low; older than the 2026-12-08 rounding change, which kept it): usdWords strips
 * trailing zeros after writing a sub-$0.001 amount with 10 decimals, and leaves the dot when nothing
 * follows it: an amount under $0.00000000005 reads "$0." and a negative amount (which also takes that
 * branch, every negative being below 0.001) reads "$-5." for -5.
 *
 * What a user notices: `switchyard keys list` / `usage` (src/limits/dollars.ts dollars = usdWords, also
 * dollarsColumn's amounts under $0.00000001) print "$0." for a spend of 1e-12 USD; a negative amount
 * (a negative price override or credit) reads "$-5." (and "$-0.5", sign after the dollar, unlike the
 * dashboard's "-$5.00").
 *
 * Expected: "$0.00" (or "<$0.00000001" as the dashboard writes it) for 1e-12; "-$5.00" for -5.
 * Actual:   "$0." and "$-5.".
 * Likely in formats/usd-words.ts usdWords (its last branch's .replace(/0+$/, "")).
 */
import { expect, test } from "bun:test";
import { usdWords } from "../../formats/usd-words.ts";
import { dollarsColumn } from "../../src/limits/dollars.ts";

test("no amount in words ends with a bare dot", () => {
  const out = { tiny: usdWords(1e-12), tinyColumn: dollarsColumn([1e-12])(1e-12), negative: usdWords(-5) };
  expect({ tiny: out.tiny.endsWith("."), tinyColumn: out.tinyColumn.endsWith("."), negative: out.negative }).toEqual({ tiny: false, tinyColumn: false, negative: "-$5.00" });
});
