/**
 * Text slots over the string leaves of a parsed JSON value (tool-call inputs, structured tool results),
 * for the pipeline stages that rewrite prompt text in place (redaction, SPEC R-1). Pure, no I/O.
 */
import type { TextSlot } from "./codec.ts";
import { isObj } from "./json.ts";

/** Nesting deeper than this is not walked (a body's own depth is bounded earlier; this keeps the walk finite). */
const MAX_DEPTH = 64;

/**
 * Appends one slot per string leaf of `value` (array items and object member values; never object
 * keys: they are a tool schema's parameter names), depth-first in key order. A string `value` itself
 * has no parent to write to and yields nothing; the caller slots it.
 */
export function stringLeafSlots(value: unknown, out: TextSlot[], depth = 0): void {
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (typeof value[i] === "string") out.push(leaf(value, i));
      else stringLeafSlots(value[i], out, depth + 1);
    }
  } else if (isObj(value)) {
    for (const k of Object.keys(value)) {
      if (typeof value[k] === "string") out.push(leaf(value, k));
      else stringLeafSlots(value[k], out, depth + 1);
    }
  }
}

function leaf(parent: Record<string | number, unknown> | unknown[], key: string | number): TextSlot {
  const p = parent as Record<string | number, unknown>;
  return {
    text: p[key] as string,
    set(t: string) {
      p[key] = t;
    },
  };
}
