/**
 * Text slots over the string leaves of a parsed JSON value (tool-call inputs, structured tool results),
 * for the pipeline stages that rewrite prompt text in place (redaction, SPEC R-1). Pure, no I/O.
 */
import type { NumberSlots, TextSlot } from "./codec.ts";
import { isObj } from "./json.ts";
import { MAX_JSON_DEPTH } from "./json-depth.ts";

/**
 * Nesting deeper than this is not walked: the depth the guard lets a body nest (its own check, before
 * parsing), so no member a client can send is left out (at 64 the members below were sent unredacted);
 * this keeps the walk finite for a value that did not come through the guard.
 */
const MAX_DEPTH = MAX_JSON_DEPTH;

/**
 * Appends slots for the strings of `value`, depth-first in key order: for each object member one slot
 * over its name ({@link TextSlot.objectKey}: an address used as a key is text the model reads) and,
 * when its value is a string, one over the value carrying the name ({@link TextSlot.member}; a number
 * value too, as its text, marked {@link TextSlot.number}, when `numbers` takes it with the name: a PIN
 * under `password`, a card number under any name); array
 * items that are strings get a slot without a name, but for an array that is a member's value (or
 * nested in one: not an object inside it), whose items carry the name marked {@link TextSlot.item}
 * (numbers that `numbers` takes too, with that name or none). Renaming a member keeps its place among the
 * others (made by the slots' `commit`, after all sets: see {@link TextSlot.commit}). Every slot
 * carries the value first given as its {@link TextSlot.group} (one tool call's input, one structured
 * result; `depth` and `group` are the walk's own). A string `value` itself has no parent to write to and
 * yields nothing; the caller slots it.
 */
export function stringLeafSlots(value: unknown, out: TextSlot[], numbers?: NumberSlots, depth = 0, group = value as object, member?: string): void {
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === "string") out.push(item(value, i, group, member));
      else if (typeof v === "number") {
        if (numbers?.(v, member)) out.push(item(value, i, group, member, String(v)));
      } else stringLeafSlots(v, out, numbers, depth + 1, group, Array.isArray(v) ? member : undefined);
    }
  } else if (isObj(value)) {
    let renames: Renames | undefined;
    const members = () => (renames ??= { parent: value, pending: new Map() });
    for (const k of Object.keys(value)) {
      out.push(keySlot(value, k, members, group));
      const v = value[k];
      if (typeof v === "string") out.push(memberSlot(value, k, group));
      else if (typeof v === "number") {
        if (numbers?.(v, k)) out.push(numberSlot(value, k, v, group));
      } else stringLeafSlots(v, out, numbers, depth + 1, group, Array.isArray(v) ? k : undefined);
    }
  }
}

/** The renames recorded for one object, made at its commit in one rebuild (renaming one by one, re-adding the members after each, was quadratic). */
interface Renames {
  parent: Record<string, unknown>;
  /** Name as parsed → its new name. */
  pending: Map<string, string>;
}

/** Sets an own data property, also one named `__proto__` (which JSON.parse makes as an own member; assigning it would set the prototype). */
function own(parent: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * An array item: a string, or a number as its text (`number`, only one `numbers` takes). `member`: the
 * member whose value the array is (or an array holding it), marked {@link TextSlot.item}.
 */
function item(parent: unknown[], i: number, group: object, member?: string, number?: string): TextSlot {
  const set = (t: string) => {
    parent[i] = t;
  };
  if (member === undefined) return number === undefined ? { text: parent[i] as string, group, set } : { text: number, group, number: true, set };
  return number === undefined ? { text: parent[i] as string, group, member, item: true, set } : { text: number, group, member, item: true, number: true, set };
}

/** A member's string value: `set` writes under the name as parsed (a rename takes effect at the commit, with the value). */
function memberSlot(parent: Record<string, unknown>, name: string, group: object): TextSlot {
  return {
    text: parent[name] as string,
    group,
    member: name,
    set(t: string) {
      own(parent, name, t);
    },
  };
}

/** A member's number value as text (`String(n)`); `set` writes the text given, a string, in its place. */
function numberSlot(parent: Record<string, unknown>, name: string, n: number, group: object): TextSlot {
  return {
    text: String(n),
    group,
    member: name,
    number: true,
    set(t: string) {
      own(parent, name, t);
    },
  };
}

/**
 * A slot over a member's name: `set` records the rename, and `commit` (the same for every name of one
 * object; once is enough, again does nothing) rebuilds the object once with the new names, in the order
 * the members had.
 */
function keySlot(parent: Record<string, unknown>, name: string, members: () => Renames, group: object): TextSlot {
  return {
    text: name,
    group,
    objectKey: true,
    owner: parent,
    set(t: string) {
      if (t !== name) members().pending.set(name, t);
      else members().pending.delete(name);
    },
    commit() {
      const r = members();
      if (r.pending.size === 0) return;
      const entries = Object.entries(parent);
      for (const [k] of entries) delete parent[k];
      for (const [k, v] of entries) own(parent, r.pending.get(k) ?? k, v);
      r.pending.clear();
    },
  };
}
