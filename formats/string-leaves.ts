/**
 * Text slots over the string leaves of a parsed JSON value (tool-call inputs, structured tool results),
 * for the pipeline stages that rewrite prompt text in place (redaction, SPEC R-1). Pure, no I/O.
 */
import type { TextSlot } from "./codec.ts";
import { isObj } from "./json.ts";

/** Nesting deeper than this is not walked (a body's own depth is bounded earlier; this keeps the walk finite). */
const MAX_DEPTH = 64;

/**
 * Appends slots for the strings of `value`, depth-first in key order: for each object member one slot
 * over its name ({@link TextSlot.objectKey}: an address used as a key is text the model reads) and,
 * when its value is a string, one over the value carrying the name ({@link TextSlot.member}); array
 * items that are strings get a slot without a name. Renaming a member keeps its place among the
 * others, and the slot of its value writes under the new name. A string `value` itself has no parent
 * to write to and yields nothing; the caller slots it.
 */
export function stringLeafSlots(value: unknown, out: TextSlot[], depth = 0): void {
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (typeof value[i] === "string") out.push(item(value, i));
      else stringLeafSlots(value[i], out, depth + 1);
    }
  } else if (isObj(value)) {
    for (const k of Object.keys(value)) {
      const name = { current: k };
      out.push(keySlot(value, name));
      if (typeof value[k] === "string") out.push(memberSlot(value, name));
      else stringLeafSlots(value[k], out, depth + 1);
    }
  }
}

/** Sets an own data property, also one named `__proto__` (which JSON.parse makes as an own member; assigning it would set the prototype). */
function own(parent: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
}

function item(parent: unknown[], i: number): TextSlot {
  return {
    text: parent[i] as string,
    set(t: string) {
      parent[i] = t;
    },
  };
}

function memberSlot(parent: Record<string, unknown>, name: { current: string }): TextSlot {
  return {
    text: parent[name.current] as string,
    member: name.current,
    set(t: string) {
      own(parent, name.current, t);
    },
  };
}

/** A slot over a member's name: `set` renames it in place (the members after it are re-added after it, in order). */
function keySlot(parent: Record<string, unknown>, name: { current: string }): TextSlot {
  return {
    text: name.current,
    objectKey: true,
    set(t: string) {
      const old = name.current;
      if (t === old) return;
      const entries = Object.entries(parent);
      for (const [k] of entries) delete parent[k];
      for (const [k, v] of entries) own(parent, k === old ? t : k, v);
      name.current = t;
    },
  };
}
