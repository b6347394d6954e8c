import { describe, expect, test } from "bun:test";
import { cleanParameters, cleanSchema } from "../../../formats/gemini/schema-clean.ts";
import { clientRequest } from "../../support/fixtures.ts";

/** Keywords Gemini's Schema proto accepts; anything else is a 400. */
const ALLOWED = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "items",
  "properties",
  "required",
  "anyOf",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
  "minimum",
  "maximum",
  "pattern",
  "propertyOrdering",
]);
const TYPES = new Set(["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"]);

/** Walks a cleaned schema and returns every violation of Gemini's subset. */
function violations(s: unknown, path = "#"): string[] {
  if (typeof s !== "object" || s === null || Array.isArray(s)) return [`${path}: not an object`];
  const out: string[] = [];
  const o = s as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) {
    if (!ALLOWED.has(k)) out.push(`${path}/${k}: keyword not allowed`);
    if (k === "type" && !TYPES.has(v as string)) out.push(`${path}/type: ${JSON.stringify(v)}`);
    if (k === "enum" && (!Array.isArray(v) || v.some((x) => typeof x !== "string") || o.type !== "STRING")) out.push(`${path}/enum: not a string enum`);
    if (k === "properties") {
      if (Object.keys(v as object).length === 0) out.push(`${path}/properties: empty`);
      for (const [name, sub] of Object.entries(v as object)) out.push(...violations(sub, `${path}/properties/${name}`));
    }
    if (k === "required") for (const r of v as string[]) if (!(r in ((o.properties as object) ?? {}))) out.push(`${path}/required: ${r} undeclared`);
    if (k === "items") out.push(...violations(v, `${path}/items`));
    if (k === "anyOf") (v as unknown[]).forEach((x, i) => out.push(...violations(x, `${path}/anyOf/${i}`)));
  }
  if (o.type === "ARRAY" && o.items === undefined) out.push(`${path}: ARRAY without items`);
  return out;
}

describe("cleanSchema: one row per JSON Schema construct", () => {
  const rows: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ["types are upper-cased", { type: "string", description: "d" }, { type: "STRING", description: "d" }],
    ["$schema, additionalProperties, default, examples, $comment dropped", {
      $schema: "http://json-schema.org/draft-07/schema#",
      $comment: "c",
      type: "object",
      additionalProperties: false,
      properties: { a: { type: "integer", default: 3, examples: [1] } },
    }, { type: "OBJECT", properties: { a: { type: "INTEGER" } } }],
    ["type: [x, null] → x + nullable", { type: ["string", "null"] }, { type: "STRING", nullable: true }],
    ["type: [x, y] → anyOf", { type: ["string", "integer"], description: "id" }, { description: "id", anyOf: [{ type: "STRING" }, { type: "INTEGER" }] }],
    ["anyOf with a null branch → nullable single schema", { anyOf: [{ type: "number" }, { type: "null" }], description: "n" }, { type: "NUMBER", description: "n", nullable: true }],
    ["oneOf → anyOf", { oneOf: [{ type: "string" }, { type: "boolean" }] }, { anyOf: [{ type: "STRING" }, { type: "BOOLEAN" }] }],
    ["const string → STRING enum", { const: "replace" }, { type: "STRING", enum: ["replace"] }],
    ["enum with null → nullable string enum", { enum: ["a", "b", null] }, { type: "STRING", enum: ["a", "b"], nullable: true }],
    ["numeric enum → type kept, values in the description", { type: "integer", enum: [1, 2, 3], description: "Level." }, { type: "INTEGER", description: "Level. Allowed values: 1, 2, 3." }],
    ["const boolean → BOOLEAN with the value in words", { const: true }, { type: "BOOLEAN", description: "Must be true." }],
    ["format kept only where Gemini allows it", { type: "object", properties: {
      when: { type: "string", format: "date-time" },
      url: { type: "string", format: "uri" },
      n: { type: "number", format: "double" },
      i: { type: "integer", format: "uint8" },
    } }, { type: "OBJECT", properties: {
      when: { type: "STRING", format: "date-time" },
      url: { type: "STRING" },
      n: { type: "NUMBER", format: "double" },
      i: { type: "INTEGER" },
    } }],
    ["exclusiveMinimum/Maximum → minimum/maximum", { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 10 }, { type: "NUMBER", minimum: 0, maximum: 10 }],
    ["string and count constraints kept", { type: "string", minLength: 1, maxLength: 9, pattern: "^a" }, { type: "STRING", pattern: "^a", minLength: 1, maxLength: 9 }],
    ["array without items gets STRING items", { type: "array", maxItems: 4 }, { type: "ARRAY", maxItems: 4, items: { type: "STRING" } }],
    ["tuple items → anyOf items", { type: "array", items: [{ type: "string" }, { type: "number" }] }, { type: "ARRAY", items: { anyOf: [{ type: "STRING" }, { type: "NUMBER" }] } }],
    ["required naming undeclared properties is filtered", { type: "object", properties: { a: { type: "string" } }, required: ["a", "ghost", "a"] }, { type: "OBJECT", properties: { a: { type: "STRING" } }, required: ["a"] }],
    ["empty properties omitted (free-form object)", { type: "object", properties: {}, additionalProperties: true }, { type: "OBJECT" }],
    ["propertyNames, patternProperties, not, if/then dropped", { type: "object", propertyNames: { pattern: "^x" }, patternProperties: { "^x": {} }, not: {}, if: {}, then: {}, properties: { x: {} } }, { type: "OBJECT", properties: { x: {} } }],
    ["type inferred from properties / items", { properties: { a: { items: { type: "string" } } } }, { type: "OBJECT", properties: { a: { type: "ARRAY", items: { type: "STRING" } } } }],
    ["allOf merged", { allOf: [{ type: "object", properties: { a: { type: "string" } }, required: ["a"] }, { properties: { b: { type: "boolean" } }, required: ["b"] }] }, { type: "OBJECT", properties: { a: { type: "STRING" }, b: { type: "BOOLEAN" } }, required: ["a", "b"] }],
    ["property names that look like keywords are kept as properties", { type: "object", properties: { type: { type: "string" }, $ref: { type: "string" }, default: { type: "number" } } }, { type: "OBJECT", properties: { type: { type: "STRING" }, $ref: { type: "STRING" }, default: { type: "NUMBER" } } }],
  ];
  for (const [name, input, expected] of rows) {
    test(name, () => {
      const before = JSON.stringify(input);
      expect(cleanSchema(input)).toEqual(expected);
      expect(JSON.stringify(input)).toBe(before); // input not mutated
    });
  }
});

describe("cleanSchema: $ref and $defs", () => {
  test("refs to $defs and definitions are inlined, sibling description wins, defs dropped", () => {
    const out = cleanSchema({
      type: "object",
      properties: {
        a: { $ref: "#/$defs/Opts", description: "the options" },
        b: { $ref: "#/definitions/Name" },
        c: { $ref: "#/properties/b" },
      },
      $defs: { Opts: { type: "object", description: "Opts", properties: { dry: { type: "boolean" } } } },
      definitions: { Name: { type: "string", minLength: 1 } },
    });
    expect(out).toEqual({
      type: "OBJECT",
      properties: {
        a: { type: "OBJECT", description: "the options", properties: { dry: { type: "BOOLEAN" } } },
        b: { type: "STRING", minLength: 1 },
        c: { type: "STRING", minLength: 1 },
      },
    });
  });

  test("recursive refs terminate with a shallow schema; unresolvable refs become {} (with their description)", () => {
    const out = cleanSchema({
      type: "object",
      properties: {
        tree: { $ref: "#/$defs/Node" },
        remote: { $ref: "https://example.com/s.json", description: "remote" },
      },
      $defs: { Node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } }, label: { type: "string" } } } },
    });
    expect(out).toEqual({
      type: "OBJECT",
      properties: {
        tree: {
          type: "OBJECT",
          properties: { children: { type: "ARRAY", items: { type: "OBJECT" } }, label: { type: "STRING" } },
        },
        remote: { description: "remote" },
      },
    });
    expect(violations(out)).toEqual([]);
  });

  test("a ref used many times does not blow up exponentially", () => {
    const defs: Record<string, unknown> = { L0: { type: "string" } };
    for (let i = 1; i <= 30; i++) defs[`L${i}`] = { type: "object", properties: { a: { $ref: `#/$defs/L${i - 1}` }, b: { $ref: `#/$defs/L${i - 1}` } } };
    // 2^30 expansions would never finish: the test's own timeout is the failure (speed: scripts/bench-schema-clean.ts).
    const out = cleanSchema({ $ref: "#/$defs/L30", $defs: defs });
    expect(out.type).toBe("OBJECT");
    expect(violations(out)).toEqual([]);
  });
});

describe("cleanParameters", () => {
  test("a tool without arguments has no parameters (Gemini rejects an OBJECT with empty properties)", () => {
    expect(cleanParameters({ type: "object", properties: {} })).toBeUndefined();
    expect(cleanParameters({ type: "object" })).toBeUndefined();
    expect(cleanParameters(undefined)).toBeUndefined();
  });

  test("B39's schema: nothing Gemini rejects survives", async () => {
    const b39 = (await Bun.file(new URL("../../fixtures/shared/cases/B39.json", import.meta.url)).json()) as any;
    const out = cleanParameters(b39.request.tools[0].input_schema)!;
    expect(out).toEqual({
      type: "OBJECT",
      properties: {
        mode: { type: "STRING", enum: ["replace"] },
        path: { type: "STRING", nullable: true },
        opts: { type: "OBJECT", properties: { dry: { type: "BOOLEAN" } } },
      },
      required: ["mode"],
    });
  });

  test("every tool schema of the real Claude Code and Codex requests cleans into Gemini's subset", async () => {
    let n = 0;
    for (const file of ["claude-code-tool-use-1.json", "claude-code-default.json", "codex-tool-use-1.json"]) {
      const body = await clientRequest(file);
      for (const t of body.tools ?? []) {
        const schema = t.input_schema ?? t.parameters;
        if (!schema) continue;
        const out = cleanParameters(schema);
        if (out === undefined) continue;
        n++;
        expect({ tool: t.name, problems: violations(out) }).toEqual({ tool: t.name, problems: [] });
        // declared properties survive
        expect(Object.keys(out.properties as object).sort()).toEqual(Object.keys(schema.properties).sort());
      }
    }
    expect(n).toBeGreaterThan(10);
  });
});
