/**
 * Reassembly of Vertex AI streamed function-call arguments (`streamFunctionCallArguments`:
 * `functionCall.partialArgs[]` with `jsonPath`, one of `stringValue`/`numberValue`/`boolValue`/
 * `nullValue`, and `willContinue`; python-genai `PartialArg`, REFERENCE §4.3).
 *
 * Each piece sets the value at an RFC 9535 JSON path (`$.a.b[0].c`, `$['odd key']`); consecutive
 * `stringValue` pieces for the same path are one string split in parts and are concatenated (the
 * recorded streams send `"add"` with `willContinue: true`, then `""` to end the string).
 * The object is built with null-prototype containers, so a `__proto__` key is a plain key.
 */
import type { GeminiPartialArg } from "./schema.ts";

type Segment = string | number;
type Container = Record<string, unknown> | unknown[];

/**
 * Parses an RFC 9535 normalized-style path: `$`, then `.name`, `['name']`, `["name"]` or `[index]`
 * segments. Returns `undefined` for syntax it does not understand (the piece is then ignored).
 */
export function parseJsonPath(path: string): Segment[] | undefined {
  if (!path.startsWith("$")) return undefined;
  const out: Segment[] = [];
  let i = 1;
  const n = path.length;
  while (i < n) {
    const c = path.charCodeAt(i);
    if (c === 46 /* . */) {
      let j = i + 1;
      while (j < n && path[j] !== "." && path[j] !== "[") j++;
      if (j === i + 1) return undefined;
      out.push(path.slice(i + 1, j));
      i = j;
    } else if (c === 91 /* [ */) {
      const q = path[i + 1];
      if (q === "'" || q === '"') {
        let j = i + 2;
        let key = "";
        while (j < n && path[j] !== q) {
          if (path[j] === "\\" && j + 1 < n) {
            key += path[j + 1];
            j += 2;
          } else key += path[j++];
        }
        if (path[j + 1] !== "]") return undefined;
        out.push(key);
        i = j + 2;
      } else {
        const close = path.indexOf("]", i);
        if (close < 0) return undefined;
        const idx = Number(path.slice(i + 1, close));
        if (!Number.isInteger(idx) || idx < 0 || idx > 100_000) return undefined;
        out.push(idx);
        i = close + 1;
      }
    } else {
      return undefined;
    }
  }
  return out;
}

function newContainer(next: Segment): Container {
  return typeof next === "number" ? [] : (Object.create(null) as Record<string, unknown>);
}

/** Accumulates one call's arguments. */
export class PartialArgsAccumulator {
  readonly args: Record<string, unknown>;
  private lastPath: string | undefined;

  /** `initial`: an `args` object that came with the call's first part, if any. */
  constructor(initial?: Record<string, unknown>) {
    this.args = Object.create(null) as Record<string, unknown>;
    if (initial) for (const k of Object.keys(initial)) this.args[k] = initial[k];
  }

  /** Applies the pieces of one `partialArgs` array, in order. */
  apply(pieces: readonly GeminiPartialArg[]): void {
    for (const p of pieces) this.applyOne(p);
  }

  private applyOne(p: GeminiPartialArg): void {
    if (!p || typeof p.jsonPath !== "string") return;
    let value: unknown;
    let isString = false;
    if (typeof p.stringValue === "string") {
      value = p.stringValue;
      isString = true;
    } else if (typeof p.numberValue === "number") value = p.numberValue;
    else if (typeof p.boolValue === "boolean") value = p.boolValue;
    else if ("nullValue" in p) value = null;
    else return;

    const segs = parseJsonPath(p.jsonPath);
    if (!segs || segs.length === 0) {
      this.lastPath = undefined;
      return;
    }
    const continues = isString && this.lastPath === p.jsonPath;
    this.lastPath = isString ? p.jsonPath : undefined;

    let cur: Container = this.args;
    for (let i = 0; i < segs.length - 1; i++) {
      const seg = segs[i]!;
      const next = segs[i + 1]!;
      let child = (cur as Record<string | number, unknown>)[seg as never];
      if (typeof child !== "object" || child === null || Array.isArray(child) !== (typeof next === "number")) {
        child = newContainer(next);
        (cur as Record<string | number, unknown>)[seg as never] = child;
      }
      cur = child as Container;
    }
    const leaf = segs[segs.length - 1]!;
    const slot = cur as Record<string | number, unknown>;
    if (continues && typeof slot[leaf as never] === "string") {
      slot[leaf as never] = (slot[leaf as never] as string) + (value as string);
    } else {
      slot[leaf as never] = value;
    }
  }

  /** The arguments as JSON text (array holes become `null`). */
  json(): string {
    return JSON.stringify(this.args);
  }
}
