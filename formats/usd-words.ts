/**
 * A USD amount in words for people: one rule for the command line (`keys list`, `usage`, through
 * src/limits/dollars.ts), the dashboard (the same module, part of the browser bundle) and a budget's
 * 429 (pipeline/key-limits.ts formatBudgetAmount), so the three write one spend alike. Pure, imports
 * nothing (beside wait-words.ts, the same kind of module for waits).
 */

/**
 * Significant digits an amount is read to at least before it is rounded for display ({@link usdFixed}):
 * enough to drop a float's noise (0.030499999999999999 reads 3.050000000e-2) and no more.
 */
const READ_DIGITS = 10;

/** Most digits read: 15 significant decimal digits always survive a double's round trip. */
const MAX_READ_DIGITS = 15;

/**
 * `n`'s decimal value shifted by `shift` places, as the nearest float, for rounding to `shown`
 * significant digits: `n` read to one digit more than shown, at least {@link READ_DIGITS} (so a
 * float's noise is dropped: 0.030499999999999999, the float of 0.0105 + 0.02, reads
 * 3.050000000e-2) and at most {@link MAX_READ_DIGITS}, then its exponent moved in the text, so
 * 0.0305 shifted by 3 is exactly 30.5 (0.0305 × 1000 in floats is 30.499999999999996). Until
 * 2026-12-08 it always read 10 digits, so an amount showing more (123456789.125 in cents, $12,345.678912
 * with 6 decimals) lost its last ones. `n` is finite and above 0.
 */
function shifted(n: number, shift: number, shown: number): number {
  const read = Math.min(MAX_READ_DIGITS, Math.max(READ_DIGITS, shown + 1));
  const [mantissa, exp] = n.toExponential(read - 1).split("e");
  return Number(`${mantissa}e${Number(exp) + shift}`);
}

/** The decimal exponent of `n` (> 0): 4 for 12345.6, -2 for 0.0305. */
function exponentOf(n: number): number {
  return Number(n.toExponential(READ_DIGITS - 1).split("e")[1]);
}

/**
 * `n` with `decimals` decimals (0–20) as the decimal amount a reader expects, halves rounded away from
 * zero: "0.031" for 0.0305 with 3, "1.01" for 1.005 with 2, "0.0015" for 0.0015 with 4, where
 * `toFixed` rounds the binary float (0.030499…, 1.00499…) and gave "0.030" and "1.00" (until
 * 2026-12-08, every USD amount of the command line and the dashboard). Non-finite values as `String`
 * writes them; no "-" before an amount that rounds to 0.
 */
export function usdFixed(n: number, decimals: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n === 0) return (0).toFixed(decimals);
  const a = Math.abs(n);
  // the digits shown: from the first significant one to the last decimal asked
  const units = Math.round(shifted(a, decimals, exponentOf(a) + 1 + decimals));
  // past 2^53 the units are no longer whole: such an amount has no decimals to round
  if (!Number.isSafeInteger(units)) return n.toFixed(decimals);
  const digits = String(units).padStart(decimals + 1, "0");
  const text = decimals > 0 ? `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : digits;
  return n < 0 && units > 0 ? `-${text}` : text;
}

/**
 * `n` to `digits` significant digits (≥ 1) of its decimal value, halves away from zero: 0.031 for
 * 0.0305 and 2, 0.00013 for 0.000125 ({@link usdFixed}'s rule; `toPrecision` gave 0.030). 0 and
 * non-finite values are returned as they are.
 */
export function usdSignificant(n: number, digits: number): number {
  if (n === 0 || !Number.isFinite(n)) return n;
  const a = Math.abs(n);
  const exp = exponentOf(a);
  const units = Math.round(shifted(a, digits - 1 - exp, digits));
  const out = Number(`${units}e${exp - (digits - 1)}`);
  return n < 0 ? -out : out;
}

/**
 * "$12.34" from $1, "$0.0123" from $0.001, below that two significant digits ("$0.00012",
 * "$0.000016", never "$0.0001" for $0.00012 nor "$0.0000") down to ten decimals; an amount under
 * half of that ($0.00000000005) reads "<$0.0000000001" (not "$0.00": something was spent); 0 as
 * "$0.00"; a negative amount with its sign before the dollar, as the dashboard writes it ("-$5.00",
 * "-$0.0012"). Cents alone read a $0.054 spend of a $0.05 budget as "$0.05 of $0.05". Until
 * 2026-12-07 `keys list`, `usage` and the dashboard wrote four decimals down to $0.0001 ("$0.0001"
 * for $0.00012), where a budget's 429 already wrote two significant digits; until 2026-12-08 an
 * amount under $0.00000000005 read "$0." and -5 read "$-5.". The amount is rounded as a reader
 * expects ({@link usdFixed}: $1.005 is "$1.01", $0.000125 "$0.00013").
 */
export function usdWords(c: number): string {
  if (c === 0) return "$0.00";
  if (c < 0) return `-${usdWords(-c)}`;
  if (c >= 1) return `$${usdFixed(c, 2)}`;
  if (c >= 0.001) return `$${usdFixed(c, 4)}`;
  const text = usdFixed(usdSignificant(c, 2), 10).replace(/0+$/, "");
  return text.endsWith(".") ? "<$0.0000000001" : `$${text}`;
}
