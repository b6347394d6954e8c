/**
 * A USD amount in words for people: one rule for the command line (`keys list`, `usage`, through
 * src/limits/dollars.ts), the dashboard (the same module, part of the browser bundle) and a budget's
 * 429 (pipeline/key-limits.ts formatBudgetAmount), so the three write one spend alike. Pure, imports
 * nothing (beside wait-words.ts, the same kind of module for waits).
 */

/**
 * "$12.34" from $1, "$0.0123" from $0.001, below that two significant digits ("$0.00012",
 * "$0.000016", never "$0.0001" for $0.00012 nor "$0.0000"); 0 as "$0.00". Cents alone read a $0.054
 * spend of a $0.05 budget as "$0.05 of $0.05". Until 2026-12-07 `keys list`, `usage` and the
 * dashboard wrote four decimals down to $0.0001 ("$0.0001" for $0.00012), where a budget's 429
 * already wrote two significant digits.
 */
export function usdWords(c: number): string {
  if (c === 0) return "$0.00";
  if (c >= 1) return `$${c.toFixed(2)}`;
  if (c >= 0.001) return `$${c.toFixed(4)}`;
  return `$${Number(c.toPrecision(2)).toFixed(10).replace(/0+$/, "")}`;
}
