/**
 * Regression test: usdWords (the command line's `keys list` / `usage` amounts, and dollarsColumn's
 * amounts under $0.00000001) left a bare dot when nothing followed it: a spend of 1e-12 USD read "$0."
 * and a negative amount (a negative price override or credit) read "$-5." with its sign after the
 * dollar. Now: "<$0.0000000001" and "-$5.00", as the dashboard writes negatives.
 */
import { expect, test } from "bun:test";
import { usdWords } from "../../formats/usd-words.ts";
import { dollarsColumn } from "../../src/limits/dollars.ts";

test("no amount in words ends with a bare dot", () => {
  const out = { tiny: usdWords(1e-12), tinyColumn: dollarsColumn([1e-12])(1e-12), negative: usdWords(-5) };
  expect({ tiny: out.tiny.endsWith("."), tinyColumn: out.tinyColumn.endsWith("."), negative: out.negative }).toEqual({ tiny: false, tinyColumn: false, negative: "-$5.00" });
});
