/**
 * USD amounts of budgets and costs as the command line writes them (`keys list`, `usage`, a budget's
 * 429) and the dashboard's Keys page shows a USD budget ("$0.0540 of $0.0500"), and the money spent of a
 * usage row: one module for both, importing nothing but formats/usd-words.ts (which imports nothing),
 * so the dashboard's browser bundle can use it.
 */
import { usdFixed, usdSignificant, usdWords } from "../../formats/usd-words.ts";

/** A USD amount with a number of decimals, and to significant digits, rounded as a reader expects (formats/usd-words.ts: $0.0305 to 3 decimals is "0.031", not toFixed's "0.030"): the dashboard's formatters use them too. */
export { usdFixed, usdSignificant };

/**
 * A USD amount to 12 significant digits: a sum or product of prices in binary floating point reads
 * 0.19999999999999998 where $0.20 was spent (a request's log line and span, a key's budget use in
 * `GET /admin/api/keys`; newuser12a's tryout, G8). 0 and non-finite values are returned as they are.
 */
export function roundUsd(usd: number): number {
  return usd === 0 || !Number.isFinite(usd) ? usd : Number(usd.toPrecision(12));
}

/**
 * Money spent of a usage row or bucket (GET /admin/api/usage): its cost apart from what subscriptions
 * served, whose `subscriptionUsd` is their use at API prices, paid by the month, not per request (SPEC
 * 9.5); to 12 significant digits. A row without `subscriptionUsd` (an older server's) is all spent.
 */
export function spentUsd(row: { costUsd?: number; subscriptionUsd?: number }): number {
  return roundUsd(Math.max(0, (row.costUsd ?? 0) - (row.subscriptionUsd ?? 0)));
}

/**
 * "$12.34" from $1, "$0.0123" from $0.001, below that two significant digits ("$0.00012", "$0.000016",
 * never "$0.0000"); nothing as "$0.00". The rule is formats/usd-words.ts's, which a budget's 429 writes
 * too (pipeline/key-limits.ts): until 2026-12-07 this gave "$0.0001" for $0.00012, where the 429 said
 * "$0.00012". Cents alone read a $0.054 spend of a $0.05 budget as "$0.05 of $0.05".
 */
export const dollars: (c: number) => string = usdWords;

/** Decimals {@link dollars} gives a non-zero amount (2, 4, or as many as two significant digits take); 0 for 0. */
function decimalsOf(c: number): number {
  if (c === 0 || !Number.isFinite(c)) return 0;
  const s = dollars(Math.abs(c));
  const dot = s.indexOf(".");
  return dot < 0 ? 0 : s.length - dot - 1;
}

/**
 * Two amounts read side by side (a USD budget's use and its amount on the Keys page): both with one
 * precision, the finer of the two as {@link dollars} writes each, so the pair never mixes "$0.00" with
 * "$0.5000" (try18 D5): `$0.0000 of $0.5000`, `$1.20 of $5.00`, `$0.0540 of $0.0500`, `$0.0031 of
 * $1.0000` (a spend under a cent is still not "$0.00").
 */
export function dollarsPair(a: number, b: number): [string, string] {
  const d = Math.max(2, decimalsOf(a), decimalsOf(b));
  return [`$${usdFixed(a, d)}`, `$${usdFixed(b, d)}`];
}

/**
 * The decimals of a column of USD amounts (`values`; zero, missing and non-finite ones are ignored):
 * as many as its smallest non-zero amount needs for two significant digits, at least 2 (cents), at
 * most 8 ($0.025 → 3, $0.00014 → 5, $0.000027 → 6, $1.25 → 2). One rule for the dashboard's columns
 * (src/dashboard/client/format.ts usdColumn) and the command line's ({@link dollarsColumn}), so that a
 * column never mixes "$0.00014" with "$0.000027".
 */
export function columnDecimals(values: ReadonlyArray<number | undefined | null>): number {
  let smallest = Infinity;
  for (const v of values) if (typeof v === "number" && Number.isFinite(v) && v !== 0) smallest = Math.min(smallest, usdSignificant(Math.abs(v), 2));
  // Two significant digits of the smallest: 0.025 → 3 decimals ("$0.025", not "$0.03"), 0.00014 → 5;
  // 0.0305 reads 0.031 (usdSignificant), 3 decimals.
  return smallest === Infinity ? 2 : Math.min(8, Math.max(2, 1 - Math.floor(Math.log10(smallest) + 1e-9)));
}

/**
 * A formatter for one column of the command line's USD amounts (`usage`'s cost and subscription_use):
 * every amount with the {@link columnDecimals} of `values` ("$0.000140" above "$0.000027", "$1.2500"
 * above "$0.0012"), as the dashboard's usdColumn writes them. Zero reads "$0.00", as {@link dollars}
 * writes it (nothing spent, as the dashboard's "$0"); an amount under $0.00000001, which 8 decimals
 * would write as nothing, reads as {@link dollars} writes it ("$0.000000005", "<$0.0000000001").
 */
export function dollarsColumn(values: ReadonlyArray<number | undefined | null>): (n: number) => string {
  const decimals = columnDecimals(values);
  return (n) => (Math.abs(n) < 1e-8 ? dollars(n) : `${n < 0 ? "-" : ""}$${usdFixed(Math.abs(n), decimals)}`);
}
