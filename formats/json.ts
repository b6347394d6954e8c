/**
 * Small helpers for reading parsed JSON (wire bodies, stream events) shared by every format and by
 * the pipeline's probes. Pure functions, no I/O, no valibot: they run per stream event.
 */

import { valueNestsDeeperThan } from "./json-depth.ts";

/** A parsed JSON object: keys to values of unknown shape. */
export type JsonObject = Record<string, unknown>;

/** Whether `x` is a JSON object (not null, not an array). */
export function isObj(x: unknown): x is JsonObject {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** A finite number, else undefined (NaN, ±Infinity, strings and the rest are not numbers here). */
export function finiteNumber(x: unknown): number | undefined {
  return typeof x === "number" && Number.isFinite(x) ? x : undefined;
}

/** A non-empty string, else undefined. */
export function nonEmptyString(x: unknown): string | undefined {
  return typeof x === "string" && x.length > 0 ? x : undefined;
}

/**
 * The fields of `o` whose keys are not in `known` and whose value is neither null nor undefined
 * (a body's fields a format has no slot for, kept to re-emit); undefined when there are none.
 */
export function leftover(o: JsonObject, known: ReadonlySet<string>): JsonObject | undefined {
  let out: JsonObject | undefined;
  for (const k in o) {
    if (known.has(k)) continue;
    const val = o[k];
    if (val === undefined || val === null) continue;
    (out ??= {})[k] = val;
  }
  return out;
}

/**
 * The length of `JSON.stringify(x)` for a parsed JSON value, or -1 when it nests more than
 * MAX_JSON_DEPTH levels (formats/json-depth.ts; the caller then leaves the reply to the decode, which
 * refuses it) or cannot be serialised: `JSON.parse` takes nesting far deeper than `JSON.stringify` can
 * recurse (100,000 levels parse, 50,000 overflow the stack in Bun 1.4, after ~1 s of CPU from ~26,000).
 */
export function jsonLength(x: unknown): number {
  if (valueNestsDeeperThan(x)) return -1;
  try {
    return JSON.stringify(x).length;
  } catch {
    return -1;
  }
}
