/**
 * What valibot's object schemas do to an object, for the hand checks that read a request body in
 * place of a schema's output (formats/anthropic-messages/request-shape.ts,
 * formats/openai-responses/request-shape.ts; issue 17, docs/performance.md items 142–143). valibot 1.x's
 * `looseObject` and `record` return a copy: a `looseObject`'s has the schema's keys first (those the
 * object has, in the schema's order), then the object's other own keys in its order; both leave out
 * the keys `__proto__`, `prototype` and `constructor` (valibot's `_isValidObjectKey`), and both take an
 * array as an object (its indices become keys). Pure, no I/O.
 */

type Json = Record<string, unknown>;

/** Whether valibot's copies leave `key` out. */
export function leftOutKey(key: string): boolean {
  return key === "__proto__" || key === "prototype" || key === "constructor";
}

/** Whether `o` has an own member that valibot's copies leave out ({@link leftOutKey}). */
export function hasLeftOutMember(o: object): boolean {
  return Object.hasOwn(o, "__proto__") || Object.hasOwn(o, "prototype") || Object.hasOwn(o, "constructor");
}

/**
 * valibot's `looseObject` copy of `o` for a schema whose keys are `entries` (in its order): the entries'
 * keys that `o` has (`key in o`), then `o`'s other own keys in its order, except {@link leftOutKey}s.
 * The values are `o`'s own: a nested schema's copy is the caller's to make.
 */
export function looseCopy(o: Json, entries: readonly string[]): Json {
  const out: Json = {};
  for (const k of entries) if (k in o) out[k] = o[k];
  for (const k in o) if (Object.hasOwn(o, k) && !leftOutKey(k) && !entries.includes(k)) out[k] = o[k];
  return out;
}

/** valibot's `nullish(…)`: undefined or null. */
export function isNullish(x: unknown): x is null | undefined {
  return x === undefined || x === null;
}

/** valibot's `nullish(string())`. */
export function nullishString(x: unknown): boolean {
  return x === undefined || x === null || typeof x === "string";
}

/** valibot's `nullish(number())` (its `number()` refuses NaN). */
export function nullishNumber(x: unknown): boolean {
  return x === undefined || x === null || (typeof x === "number" && !Number.isNaN(x));
}

/** valibot's `nullish(boolean())`. */
export function nullishBoolean(x: unknown): boolean {
  return x === undefined || x === null || typeof x === "boolean";
}
