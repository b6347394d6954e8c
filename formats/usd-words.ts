/**
 * A USD amount in words for people: one rule for the command line (`keys list`, `usage`, through
 * src/limits/dollars.ts), the dashboard (the same module, part of the browser bundle) and a budget's
 * 429 (pipeline/key-limits.ts formatBudgetAmount), so the three write one spend alike. Pure, imports
 * nothing (beside wait-words.ts, the same kind of module for waits).
 */

/** Significant digits an amount is read to before it is rounded for display ({@link usdFixed}). */
const READ_DIGITS = 10;

/**
 * `n`'s decimal value shifted by `shift` places, as the nearest float: `n` read to {@link READ_DIGITS}
 * significant digits (0.030499999999999999, the float of 0.0105 + 0.02, reads 3.050000000e-2), then
 * its exponent moved in the text, so 0.0305 shifted by 3 is exactly 30.5 (0.0305 × 1000 in floats is
 * 30.499999999999996). `n` is finite and above 0.
 */
function shifted(n: number, shift: number): number {
  const [mantissa, exp] = n.toExponential(READ_DIGITS - 1).split("e");
  return Number(`${mantissa}e${Number(exp) + shift}`);
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
  const units = Math.round(shifted(Math.abs(n), decimals));
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
  const exp = Number(a.toExponential(READ_DIGITS - 1).split("e")[1]);
  const units = Math.round(shifted(a, digits - 1 - exp));
  const out = Number(`${units}e${exp - (digits - 1)}`);
  return n < 0 ? -out : out;
}

/**
 * "$12.34" from $1, "$0.0123" from $0.001, below that two significant digits ("$0.00012",
 * "$0.000016", never "$0.0001" for $0.00012 nor "$0.0000"); 0 as "$0.00". Cents alone read a $0.054
 * spend of a $0.05 budget as "$0.05 of $0.05". Until 2026-12-07 `keys list`, `usage` and the
 * dashboard wrote four decimals down to $0.0001 ("$0.0001" for $0.00012), where a budget's 429
 * already wrote two significant digits. The amount is rounded as a reader expects ({@link usdFixed}:
 * $1.005 is "$1.01", $0.000125 "$0.00013").
 */
export function usdWords(c: number): string {
  if (c === 0) return "$0.00";
  if (c >= 1) return `$${usdFixed(c, 2)}`;
  if (c >= 0.001) return `$${usdFixed(c, 4)}`;
  return `$${usdFixed(usdSignificant(c, 2), 10).replace(/0+$/, "")}`;
}
