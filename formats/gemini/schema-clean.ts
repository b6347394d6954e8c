/**
 * JSON Schema → the OpenAPI-3.0 subset Gemini accepts in `functionDeclarations[].parameters`
 * (REFERENCE §4.1, SPEC F-7, regression case B39).
 *
 * Gemini's `Schema` proto (python-genai / @google/genai `Schema`) knows: `type` (STRING, NUMBER,
 * INTEGER, BOOLEAN, ARRAY, OBJECT), `format`, `title`, `description`, `nullable`, `enum` (strings
 * only), `items`, `properties`, `required`, `anyOf`, `minItems`, `maxItems`, `minLength`,
 * `maxLength`, `minProperties`, `maxProperties`, `minimum`, `maximum`, `pattern`,
 * `propertyOrdering`. Anything else is rejected with 400 ("Unknown name …", "Proto field is not
 * repeating", "only 'enum' and 'date-time' are supported for STRING type", …), so this is a
 * WHITELIST converter, not a blacklist:
 *
 * | JSON Schema | Gemini |
 * |---|---|
 * | `$schema`, `$id`, `$comment`, `additionalProperties`, `propertyNames`, `patternProperties`, `unevaluated*`, `not`, `if/then/else`, `dependent*`, `default`, `examples`, `example`, `readOnly`, `deprecated`, `const` null, … | dropped |
 * | `$ref` (to `#/$defs`, `#/definitions` or any local JSON pointer) | inlined (sibling keywords win); a cyclic or unresolvable ref becomes a shallow schema |
 * | `$defs`, `definitions` | dropped after inlining |
 * | `allOf` | merged into one schema (properties and required united) |
 * | `oneOf` | `anyOf` |
 * | `type: [x, "null"]`, `anyOf: [x, {type: null}]`, `enum` containing null | `type: X` + `nullable: true` |
 * | `type: [x, y]` | `anyOf: [{type: X}, {type: Y}]` |
 * | `const: "v"` | `type: STRING, enum: ["v"]` |
 * | `enum` / `const` on a non-string type | dropped; the allowed values are appended to `description` |
 * | `format` other than STRING `enum`/`date-time`, NUMBER `float`/`double`, INTEGER `int32`/`int64` | dropped |
 * | `exclusiveMinimum`/`exclusiveMaximum` (numbers) | `minimum`/`maximum` when those are absent |
 * | tuple `items: [a, b]` / `prefixItems` | `items: a`, or `items: {anyOf: [a, b]}` |
 * | `type: array` without `items` | `items: {type: STRING}` (Gemini: "items: missing field") |
 * | `required` naming a property that is not declared | that name removed (Gemini 400s on it) |
 * | `properties: {}` | omitted |
 *
 * Pure and allocation-light; never throws; the input is not mutated.
 */
import { isObj, type JsonObject as Json } from "../json.ts";

const GEMINI_TYPES: Record<string, string> = {
  string: "STRING",
  number: "NUMBER",
  integer: "INTEGER",
  boolean: "BOOLEAN",
  array: "ARRAY",
  object: "OBJECT",
};

/** Allowed `format` values per Gemini type (Gemini API docs, "Schema.format"). */
const ALLOWED_FORMATS: Record<string, readonly string[]> = {
  STRING: ["enum", "date-time"],
  NUMBER: ["float", "double"],
  INTEGER: ["int32", "int64"],
};

const COUNT_KEYWORDS = ["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"] as const;

/** Nesting deeper than this is cut (a shallow schema is emitted instead). */
const MAX_DEPTH = 40;
/** Upper bound on schema nodes produced by `$ref` expansion, to stop exponential blow-up. */
const MAX_NODES = 20_000;

interface Ctx {
  root: Record<string, unknown>;
  /** `$ref` strings being expanded right now (cycle guard). */
  expanding: string[];
  nodes: number;
}

/**
 * Cleans any JSON Schema node into a Gemini `Schema`. Returns `{}` for a node that says nothing
 * (`true`, `{}`, non-objects).
 */
export function cleanSchema(schema: unknown): Json {
  if (!isObj(schema)) return {};
  return clean(schema, { root: schema, expanding: [], nodes: 0 }, 0);
}

/**
 * Cleans a tool's parameter schema for `functionDeclarations[].parameters`. Returns `undefined` when
 * the tool takes no arguments (no properties): Gemini rejects an OBJECT with empty `properties` at the
 * top level, and a declaration without `parameters` is a no-argument function.
 */
export function cleanParameters(schema: unknown): Json | undefined {
  if (!isObj(schema)) return undefined;
  const out = cleanSchema(schema);
  if (out.properties === undefined) return undefined;
  out.type = "OBJECT";
  return out;
}

/** Resolves a local `$ref` (`#`, `#/$defs/X`, `#/definitions/X`, any JSON pointer into the root). */
function resolveRef(root: Json, ref: string): Json | undefined {
  if (!ref.startsWith("#")) return undefined;
  let path = ref.slice(1);
  try {
    path = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  if (path === "" || path === "/") return root;
  if (!path.startsWith("/")) return undefined;
  let cur: unknown = root;
  for (const raw of path.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isObj(cur) && Object.prototype.hasOwnProperty.call(cur, key)) cur = cur[key];
    else return undefined;
  }
  return isObj(cur) ? cur : undefined;
}

/** Inlines a `$ref` at this node (sibling keywords override the target's), recursively. */
function derefNode(node: Json, ctx: Ctx): { node: Json; ref?: string } {
  let cur = node;
  let ref: string | undefined;
  for (let hops = 0; typeof cur.$ref === "string" && hops < 8; hops++) {
    const r = cur.$ref as string;
    if (ctx.expanding.includes(r)) return { node: shallow(cur, resolveRef(ctx.root, r)), ref: undefined };
    const target = resolveRef(ctx.root, r);
    if (!target) return { node: shallow(cur, undefined) };
    const { $ref: _r, ...siblings } = cur;
    cur = { ...target, ...siblings };
    ref ??= r;
  }
  return { node: cur, ref };
}

/**
 * A (JSON Schema) stand-in for a node that cannot be expanded (cyclic or unresolvable ref, depth or
 * size limit): the target's type when it is one plain type, and a description. Cleaned like any node.
 */
function shallow(node: Json, target: Json | undefined): Json {
  const out: Json = {};
  const t = typeof target?.type === "string" && GEMINI_TYPES[target.type as string] ? target.type : undefined;
  if (t) out.type = t;
  const d = typeof node.description === "string" ? node.description : target?.description;
  if (typeof d === "string" && d.length > 0) out.description = d;
  return out;
}

/** Merges `allOf` members into the node (properties and required united, other keywords first wins). */
function mergeAllOf(node: Json, ctx: Ctx): Json {
  const { allOf, ...rest } = node;
  if (!Array.isArray(allOf)) return node;
  const out: Json = { ...rest };
  for (const member of allOf) {
    if (!isObj(member)) continue;
    const m = derefNode(member, ctx).node;
    const sub = Array.isArray(m.allOf) ? mergeAllOf(m, ctx) : m;
    for (const [k, val] of Object.entries(sub)) {
      if (k === "properties" && isObj(val)) {
        out.properties = { ...(isObj(out.properties) ? out.properties : {}), ...val };
      } else if (k === "required" && Array.isArray(val)) {
        out.required = [...(Array.isArray(out.required) ? out.required : []), ...val];
      } else if (!(k in out)) {
        out[k] = val;
      }
    }
  }
  return out;
}

function isNullSchema(x: unknown): boolean {
  if (!isObj(x)) return false;
  if (x.type === "null") return true;
  if ("const" in x && x.const === null) return true;
  return Array.isArray(x.enum) && x.enum.length > 0 && x.enum.every((e) => e === null);
}

function isCount(x: unknown): x is number {
  return typeof x === "number" && Number.isInteger(x) && x >= 0;
}

function clean(input: Json, ctx: Ctx, depth: number): Json {
  ctx.nodes++;
  if (depth > MAX_DEPTH || ctx.nodes > MAX_NODES) return cleanResolved(shallow(input, input), ctx, depth);

  let s = input;
  let pushed: string | undefined;
  if (typeof s.$ref === "string") {
    const r = derefNode(s, ctx);
    s = r.node;
    if (r.ref) {
      ctx.expanding.push(r.ref);
      pushed = r.ref;
    }
  }
  try {
    if (Array.isArray(s.allOf)) s = mergeAllOf(s, ctx);
    return cleanResolved(s, ctx, depth);
  } finally {
    if (pushed) ctx.expanding.pop();
  }
}

function cleanResolved(s: Json, ctx: Ctx, depth: number): Json {
  const out: Json = {};
  let nullable = s.nullable === true;

  // ---- type -----------------------------------------------------------------------------
  let types: string[] = [];
  if (typeof s.type === "string") types = [s.type];
  else if (Array.isArray(s.type)) types = s.type.filter((t): t is string => typeof t === "string");
  if (types.includes("null")) {
    nullable = true;
    types = types.filter((t) => t !== "null");
  }
  if (types.length > 1) {
    // Several types: one anyOf branch per type, each with the keywords that apply to it.
    const branches: Json[] = [];
    for (const t of types) {
      if (!GEMINI_TYPES[t]) continue;
      const { description: _d, title: _t, ...rest } = s;
      branches.push(cleanResolved({ ...rest, type: t, anyOf: undefined, oneOf: undefined }, ctx, depth + 1));
    }
    if (typeof s.title === "string") out.title = s.title;
    if (typeof s.description === "string" && s.description.length > 0) out.description = s.description;
    if (branches.length === 1) Object.assign(out, branches[0]);
    else if (branches.length > 1) out.anyOf = branches;
    if (nullable) out.nullable = true;
    return out;
  }
  let type = types.length === 1 ? GEMINI_TYPES[types[0]!] : undefined;

  // ---- anyOf / oneOf --------------------------------------------------------------------
  const variants = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  let merged: Json | undefined;
  let anyOf: Json[] | undefined;
  if (variants) {
    const kept: Json[] = [];
    for (const vnt of variants) {
      if (isNullSchema(vnt)) {
        nullable = true;
        continue;
      }
      if (isObj(vnt)) kept.push(clean(vnt, ctx, depth + 1));
      else if (vnt === true) kept.push({});
    }
    if (kept.length === 1) merged = kept[0];
    else if (kept.length > 1) anyOf = kept;
  }

  // ---- enum / const -----------------------------------------------------------------------
  let values: unknown[] | undefined;
  if ("const" in s && s.const !== undefined) values = [s.const];
  else if (Array.isArray(s.enum)) values = s.enum;
  let description = typeof s.description === "string" && s.description.length > 0 ? s.description : undefined;
  let enumOut: string[] | undefined;
  if (values) {
    const nonNull = values.filter((x) => x !== null);
    if (nonNull.length < values.length) nullable = true;
    if (nonNull.length > 0) {
      const allStrings = nonNull.every((x) => typeof x === "string");
      if (allStrings && (type === undefined || type === "STRING")) {
        type = "STRING";
        enumOut = nonNull as string[];
      } else {
        // Gemini enums are strings of a STRING schema; keep the argument's real type and say the
        // allowed values in words instead.
        const list = nonNull.map((x) => JSON.stringify(x)).join(", ");
        const note = nonNull.length === 1 ? `Must be ${list}.` : `Allowed values: ${list}.`;
        description = description ? `${description} ${note}` : note;
        if (type === undefined) {
          const t0 = typeof nonNull[0];
          if (nonNull.every((x) => typeof x === t0)) {
            if (t0 === "number") type = nonNull.every((x) => Number.isInteger(x)) ? "INTEGER" : "NUMBER";
            else if (t0 === "boolean") type = "BOOLEAN";
          }
        }
      }
    }
  }

  // ---- properties / items -----------------------------------------------------------------
  let properties: Json | undefined;
  if (isObj(s.properties)) {
    for (const [name, sub] of Object.entries(s.properties)) {
      let cleaned: Json | undefined;
      if (isObj(sub)) cleaned = clean(sub, ctx, depth + 1);
      else if (sub === true) cleaned = {};
      if (cleaned) (properties ??= {})[name] = cleaned;
    }
  }
  if (type === undefined && properties) type = "OBJECT";

  let items: Json | undefined;
  const rawItems = s.items !== undefined ? s.items : s.prefixItems;
  if (isObj(rawItems)) items = clean(rawItems, ctx, depth + 1);
  else if (Array.isArray(rawItems)) {
    const list = rawItems.filter(isObj).map((x) => clean(x, ctx, depth + 1));
    if (list.length === 1) items = list[0];
    else if (list.length > 1) items = { anyOf: list };
  }
  if (type === undefined && items) type = "ARRAY";
  if (type === "ARRAY" && !items) items = { type: "STRING" };

  // ---- assemble -----------------------------------------------------------------------------
  if (merged) {
    // A single non-null variant: it IS the schema; the outer node's words win.
    Object.assign(out, merged);
  }
  if (type) out.type = type;
  if (typeof s.title === "string" && s.title.length > 0) out.title = s.title;
  if (description) out.description = description;
  if (anyOf) out.anyOf = anyOf;
  if (enumOut) out.enum = enumOut;

  const t = out.type as string | undefined;
  if (typeof s.format === "string" && t && ALLOWED_FORMATS[t]?.includes(s.format)) out.format = s.format;
  if (typeof s.pattern === "string" && t === "STRING") out.pattern = s.pattern;

  if (typeof s.minimum === "number") out.minimum = s.minimum;
  else if (typeof s.exclusiveMinimum === "number") out.minimum = s.exclusiveMinimum;
  if (typeof s.maximum === "number") out.maximum = s.maximum;
  else if (typeof s.exclusiveMaximum === "number") out.maximum = s.exclusiveMaximum;
  for (const k of COUNT_KEYWORDS) if (isCount(s[k])) out[k] = s[k];

  if (properties) {
    out.properties = properties;
    if (Array.isArray(s.required)) {
      const req = [...new Set(s.required.filter((r): r is string => typeof r === "string" && r in properties))];
      if (req.length > 0) out.required = req;
    }
    if (Array.isArray(s.propertyOrdering)) {
      const ord = s.propertyOrdering.filter((r): r is string => typeof r === "string" && r in properties);
      if (ord.length > 0) out.propertyOrdering = ord;
    }
  } else if (merged?.properties === undefined) {
    delete out.required;
  }
  if (items) out.items = items;
  if (nullable) out.nullable = true;
  return out;
}

/**
 * Light clean for `generationConfig.responseJsonSchema`, which takes real JSON Schema (with `$ref`,
 * `$defs`, `additionalProperties`, …): only `$schema` (rejected as an unknown field) is removed, at any
 * depth. The input is not mutated.
 */
export function cleanResponseJsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (!isObj(x)) return x;
    const out: Json = {};
    for (const [k, val] of Object.entries(x)) {
      if (k === "$schema") continue;
      out[k] = walk(val);
    }
    return out;
  };
  return walk(schema) as Record<string, unknown>;
}
