/**
 * Routing predicates (SPEC 5.2): the typed, side-effect-free expression a combo target may carry in
 * `when.expr`. This module is the valibot schema the config loader validates them with (and the
 * operators allowed per value type). The vocabulary (facts, operators, value types), the expression
 * types and their evaluation (three-valued, with explanations) live in pipeline/predicates.ts.
 *
 * Grammar, as written in YAML:
 *
 * ```yaml
 * when:
 *   when_unknown: skip            # or allow; decides an expression that evaluates to "unknown"
 *   expr:
 *     all:                        # every sub-expression true (also `any: [...]`, `not: expr`)
 *       - { fact: has_tools, op: eq, value: true }
 *       - { fact: input_tokens, op: lt, value: 100000 }
 *       - { fact: client_format, op: in, value: [openai-chat, openai-responses] }
 *       - { fact: target_capability, arg: images, op: eq, value: true }
 * ```
 *
 * `target_capability(name)` from SPEC 5.2 is written as fact `target_capability` with `arg: name`
 * (one of {@link CAPABILITIES}); the call-style spelling `target_capability(images)` is rejected with a
 * hint. Each fact has a value type that decides the allowed operators and the shape of `value`:
 *
 * | type    | ops                                       | value                                   |
 * |---------|-------------------------------------------|-----------------------------------------|
 * | boolean | eq, ne                                    | true / false                            |
 * | string  | eq, ne, contains (substring), in, not_in  | a string; a non-empty list for in/not_in |
 * | enum    | eq, ne, in, not_in                        | one of the enum's values (or a list)    |
 * | number  | eq, ne, lt, lte, gt, gte, in, not_in      | a number; a non-empty list for in/not_in |
 */
import * as v from "valibot";
import {
  CAPABILITIES,
  FACT_TYPES,
  PREDICATE_OPS,
  type FactType,
  type PredicateComparison,
  type PredicateExpr,
  type PredicateFact,
  type PredicateOp,
  type WhenUnknown,
} from "../../pipeline/index.ts";
import { describeKind, isMapping, shown, strictObj as strict, suggest } from "./errors.ts";

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

/** All fact names, in SPEC order. */
export const PREDICATE_FACTS = Object.keys(FACT_TYPES) as PredicateFact[];

/** Operators allowed per fact value type. */
export const OPS_BY_TYPE: Record<FactType["type"], readonly PredicateOp[]> = {
  boolean: ["eq", "ne"],
  string: ["eq", "ne", "contains", "in", "not_in"],
  enum: ["eq", "ne", "in", "not_in"],
  number: ["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in"],
};

// ---------------------------------------------------------------------------------------------
// Loaded form
// ---------------------------------------------------------------------------------------------

/** A target's predicate as loaded (`when:` in the file, camelCased). */
export interface TargetWhen {
  expr: PredicateExpr;
  whenUnknown: WhenUnknown;
}

// ---------------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------------

const quoteList = (xs: readonly string[]) => xs.join(", ");

const EXPR_SHAPE = "a predicate ({all: [...]}, {any: [...]}, {not: ...} or {fact, op, value})";

function scalarSchema(fact: string, t: FactType) {
  switch (t.type) {
    case "boolean":
      return v.boolean(`fact ${fact} compares with true or false`);
    case "number":
      return v.pipe(
        v.number(`fact ${fact} compares with a number`),
        v.finite(`fact ${fact} compares with a finite number`),
      );
    case "string":
      return v.string(`fact ${fact} compares with a string`);
    case "enum":
      return v.picklist(
        t.values,
        (i) => `fact ${fact} is one of ${quoteList(t.values)}; got ${shown(i.input)}`,
      );
  }
}

function valueSchema(fact: string, t: FactType, op: PredicateOp) {
  if (op === "in" || op === "not_in") {
    return v.pipe(
      v.array(scalarSchema(fact, t), `op ${op} needs a list of values`),
      v.minLength(1, `op ${op} needs a non-empty list of values`),
    );
  }
  if (op === "contains") return v.string(`op contains needs a string (substring match)`);
  return scalarSchema(fact, t);
}

function factMessage(input: unknown): string {
  if (typeof input === "string") {
    const call = /^(\w+)\((\w*)\)$/.exec(input);
    if (call && call[1] === "target_capability") {
      return `write ${input} as {fact: target_capability, arg: ${call[2] || "<name>"}}`;
    }
    const hint = suggest(input, PREDICATE_FACTS);
    return `unknown fact "${input}"${hint ? ` (did you mean "${hint}"?)` : ""}; known facts: ${quoteList(PREDICATE_FACTS)}`;
  }
  return `fact must be one of ${quoteList(PREDICATE_FACTS)}; got ${describeKind(input)}`;
}

function comparisonSchema(input: Record<string, unknown>): v.GenericSchema<unknown, PredicateComparison> {
  const fact = input.fact;
  const known = typeof fact === "string" && Object.hasOwn(FACT_TYPES, fact);
  if (!known) {
    // Unknown fact: report it (and any other key problem) without guessing value rules.
    return strict(
      {
        fact: v.custom<PredicateFact>(() => false, (i) => factMessage(i.input)),
        op: v.picklist(PREDICATE_OPS, (i) => opMessage(i.input)),
        value: v.unknown(),
        arg: v.optional(v.unknown()),
      },
      "a comparison {fact, op, value}",
    ) as v.GenericSchema<unknown, PredicateComparison>;
  }
  const t: FactType = FACT_TYPES[fact as PredicateFact];
  const ops = OPS_BY_TYPE[t.type];
  const op = input.op;
  const opOk = typeof op === "string" && (ops as readonly string[]).includes(op);
  return strict(
    {
      fact: v.literal(fact as PredicateFact),
      op: v.picklist(ops, (i) =>
        typeof i.input === "string" && (PREDICATE_OPS as readonly string[]).includes(i.input)
          ? `op ${i.input} does not apply to fact ${fact} (a ${t.type}); use one of ${quoteList(ops)}`
          : opMessage(i.input),
      ),
      value: opOk ? valueSchema(fact as string, t, op as PredicateOp) : v.unknown(),
      arg:
        fact === "target_capability"
          ? v.picklist(CAPABILITIES, (i) => `unknown capability ${shown(i.input)}; known: ${quoteList(CAPABILITIES)}`)
          : v.optional(v.never(`arg is only used with fact target_capability`)),
    },
    "a comparison {fact, op, value}",
    { arg: `fact target_capability needs arg: one of ${quoteList(CAPABILITIES)}` },
  ) as v.GenericSchema<unknown, PredicateComparison>;
}

function opMessage(input: unknown): string {
  if (typeof input === "string") {
    const hint = suggest(input, PREDICATE_OPS);
    return `unknown op "${input}"${hint ? ` (did you mean "${hint}"?)` : ""}; known ops: ${quoteList(PREDICATE_OPS)}`;
  }
  if (input === undefined) return "required";
  return `op must be one of ${quoteList(PREDICATE_OPS)}; got ${describeKind(input)}`;
}

/**
 * The valibot schema of a predicate expression. The node kind is chosen by its key (`all`, `any`,
 * `not`, else a comparison), so errors point inside the right shape: an unknown fact is reported at
 * `….expr.all[1].fact`, a wrong value at `….value`.
 */
export const PredicateExprSchema: v.GenericSchema<unknown, PredicateExpr> = v.lazy((input) => {
  if (!isMapping(input)) return v.custom<PredicateExpr>(() => false, (i) => `expected ${EXPR_SHAPE}, got ${describeKind(i.input)}`);
  if ("all" in input) {
    return strict({ all: v.pipe(v.array(PredicateExprSchema, "all takes a list"), v.minLength(1, "all needs at least one expression")) }, "an {all: [...]} node");
  }
  if ("any" in input) {
    return strict({ any: v.pipe(v.array(PredicateExprSchema, "any takes a list"), v.minLength(1, "any needs at least one expression")) }, "an {any: [...]} node");
  }
  if ("not" in input) return strict({ not: PredicateExprSchema }, "a {not: ...} node");
  if ("fact" in input) return comparisonSchema(input);
  return v.custom<PredicateExpr>(() => false, () => `expected ${EXPR_SHAPE}; found keys ${Object.keys(input).join(", ") || "none"}`);
}) as v.GenericSchema<unknown, PredicateExpr>;

/** The schema of a target's `when:` block; `when_unknown` defaults to `skip` (SPEC 5.2). */
export const TargetWhenSchema = strict(
  {
    expr: PredicateExprSchema,
    when_unknown: v.optional(
      v.picklist(["skip", "allow"], (i) => `when_unknown is skip or allow; got ${shown(i.input)}`),
      "skip",
    ),
  },
  "a when block {expr, when_unknown}",
);
