/**
 * Card numbers for redaction (SPEC R-1; pipeline/redact.ts): the check of the `card` pattern (length,
 * grouping, a card network's prefix, the Luhn check digit), and which JSON numbers of a structured
 * payload (Anthropic `tool_use.input`, Gemini `functionCall.args` and `functionResponse.response`, read
 * as objects: formats/string-leaves.ts) are looked at. A card number written as a JSON number is one,
 * under any member name, as in JSON-text arguments (Chat, Responses: pipeline/redact-json.ts); before,
 * only numbers under a secret-named member were looked at there, and `{"card": 4111111111111111}` went
 * upstream in clear. Pure, no I/O.
 */

/** Luhn check digit validation of a digit string (`"4111111111111111"`: true). */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The prefixes of the card networks (Visa, Mastercard, Amex, Diners, JCB, Discover, UnionPay). */
const CARD_PREFIX = /^(?:4|5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[47]|3(?:0[0-5]|[689])|35|6(?:011|5|4[4-9]|22))/;

/**
 * Whether `value` (digits, plain or grouped by one kind of separator, space or `-`, as 4-4-4-4,
 * 4-4-4-4-3, Amex 4-6-5, 4-6-4 or 4-4-4-1) is a card number: 13 to 19 digits with a card network's
 * prefix and a valid Luhn check digit.
 */
export function cardOk(value: string): boolean {
  const seps = value.match(/[ -]/g);
  const digits = value.replace(/[ -]/g, "");
  if (digits.length < 13 || digits.length > 19) return false;
  if (seps) {
    if (new Set(seps).size > 1) return false;
    const groups = value.split(/[ -]/).map((g) => g.length).join(",");
    if (!["4,4,4,4", "4,4,4,4,3", "4,6,5", "4,6,4", "4,4,4,1"].includes(groups)) return false;
  }
  return CARD_PREFIX.test(digits) && luhn(digits);
}

/**
 * Whether the JSON number `n` is a card number: its text as it is sent (`String(n)`, what
 * `JSON.stringify` writes) is 13 to 19 digits that {@link cardOk} takes. A negative number, a fraction
 * or an exponent is not (the `card` pattern does not take one in JSON text either).
 */
export function cardNumber(n: number): boolean {
  if (!Number.isInteger(n) || n < 1e12) return false;
  const text = String(n);
  return /^\d{13,19}$/.test(text) && cardOk(text);
}

/**
 * The number values of a structured payload that get a text slot (formats/codec.ts `NumberSlots`):
 * those under a member `secretNamed` takes (a PIN under `password`: a secret whole), and card numbers
 * ({@link cardNumber}) under any name or none.
 */
export function numberSlots(secretNamed: (name: string) => boolean): (value: number, member: string | undefined) => boolean {
  return (value, member) => (member !== undefined && secretNamed(member)) || cardNumber(value);
}
