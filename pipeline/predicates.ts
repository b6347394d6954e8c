/**
 * Routing predicates (SPEC 5.2): the vocabulary and types of a combo target's `when` expression tree,
 * and its evaluation against the facts of one request and one target. Three-valued (true / false /
 * unknown, Kleene logic); no code, no eval: the tree is data (validated by src/config/predicate.ts)
 * and every node kind is interpreted here. Each evaluation yields a human-readable explanation for the route trace and the dry run.
 *
 * Facts (SPEC 5.2), their sources and when they are unknown:
 *
 * | fact | source | unknown when |
 * |---|---|---|
 * | has_tools | the request declares at least one tool | the body cannot be parsed |
 * | has_images | an image anywhere in the conversation (tool results included) | idem |
 * | has_reasoning | the request asks for reasoning (enabled, an effort other than `none`, a budget, adaptive) | idem |
 * | frontend | `openai` for Chat/Responses clients, `anthropic` for Messages clients | a Gemini client |
 * | client_format | the client wire format | never |
 * | requested_model | the model name as sent (after the guard's `[1m]` strip) | never |
 * | requested_alias / requested_combo | the alias followed / the outermost combo addressed | never (absent = "none") |
 * | key_tag | the client key's tag | never (no key or no tag = "none") |
 * | input_tokens | {@link estimateInputTokens} | the body cannot be parsed |
 * | target_model / target_provider | the target | never |
 * | target_capability(name) | the provider's `models:` entry (`reasoning` = reasoning efforts listed) | no entry or the field is not set |
 * | target_context_window / target_max_output_tokens | the provider's `models:` entry, in tokens | idem |
 *
 * A fact that is known to be absent ("none": no alias, no key tag) is not unknown: `eq`, `in` and
 * `contains` are false for it, `ne` and `not_in` true, ordering comparisons false.
 */
import type { HubPart, HubRequest, WireFormat } from "../formats/hub.ts";
import type { ProviderInfo } from "./ports.ts";

// ---------------------------------------------------------------------------------------------
// Vocabulary and expression types (validated when the config loads: src/config/predicate.ts)
// ---------------------------------------------------------------------------------------------

/** Comparison operators (SPEC 5.2). */
export const PREDICATE_OPS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "contains"] as const;
/** A comparison operator. */
export type PredicateOp = (typeof PREDICATE_OPS)[number];

/** Capability names accepted as `arg` of fact `target_capability` (ModelInfo fields; `reasoning` = any reasoning effort). */
export const CAPABILITIES = ["images", "pdf", "audio", "video", "reasoning"] as const;
/** A model capability a predicate can ask about. */
export type Capability = (typeof CAPABILITIES)[number];

/** The value type of a fact; decides operators and value shapes (see the module table). */
export type FactType =
  | { type: "boolean" }
  | { type: "string" }
  | { type: "number" }
  | { type: "enum"; values: readonly string[] };

/**
 * Every fact of SPEC 5.2 with its value type. `input_tokens` is an estimate, in tokens;
 * `target_context_window` and `target_max_output_tokens` are in tokens (unknown when the model has no
 * `models:` entry); `frontend` is the client's API family; `client_format` the client wire format.
 */
export const FACT_TYPES = {
  has_tools: { type: "boolean" },
  has_images: { type: "boolean" },
  has_reasoning: { type: "boolean" },
  frontend: { type: "enum", values: ["openai", "anthropic"] },
  client_format: { type: "enum", values: ["openai-chat", "openai-responses", "anthropic-messages", "gemini"] },
  requested_model: { type: "string" },
  requested_alias: { type: "string" },
  requested_combo: { type: "string" },
  key_tag: { type: "string" },
  input_tokens: { type: "number" },
  target_model: { type: "string" },
  target_provider: { type: "string" },
  target_capability: { type: "boolean" },
  target_context_window: { type: "number" },
  target_max_output_tokens: { type: "number" },
} as const satisfies Record<string, FactType>;

/** A fact name. */
export type PredicateFact = keyof typeof FACT_TYPES;

/** A scalar a comparison compares against. */
export type PredicateScalar = string | number | boolean;

/**
 * A leaf comparison `{fact, op, value}`. `value` is a list exactly when `op` is `in`/`not_in`.
 * `arg` is present exactly when `fact` is `target_capability`.
 */
export interface PredicateComparison {
  fact: PredicateFact;
  op: PredicateOp;
  value: PredicateScalar | PredicateScalar[];
  arg?: Capability;
}

/** A predicate expression tree (SPEC 5.2). */
export type PredicateExpr =
  | { all: PredicateExpr[] }
  | { any: PredicateExpr[] }
  | { not: PredicateExpr }
  | PredicateComparison;

/** What decides an expression that evaluates to "unknown" (SPEC 5.2): `skip` the target (default) or `allow` it. */
export type WhenUnknown = "skip" | "allow";

/** A predicate attached to a combo target (SPEC 5.2); evaluated by the order stage. */
export interface TargetPredicate {
  expr: PredicateExpr;
  whenUnknown: WhenUnknown;
}

/** What a predicate reads of a target (resolve.ts `Target` carries these): its provider, upstream model and label. */
export interface PredicateTarget {
  provider: ProviderInfo;
  /** Upstream model id. */
  model: string;
  /** `provider/model`, for explanations. */
  label: string;
}

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------


/** A three-valued truth value. */
export type Tri = true | false | "unknown";

/** A fact's value: a scalar, `null` when known to be absent, `undefined` when unknown. */
export type FactValue = PredicateScalar | null | undefined;

/** A looked-up fact with a note for the explanation ("estimated", why it is unknown). */
export interface FactReading {
  value: FactValue;
  note?: string;
}

/** The request-side facts of SPEC 5.2, computed once per request. `undefined` = unknown. */
export interface RequestFacts {
  has_tools?: boolean;
  has_images?: boolean;
  has_reasoning?: boolean;
  frontend?: "openai" | "anthropic";
  client_format: WireFormat;
  requested_model: string;
  /** null = the name was not an alias. */
  requested_alias: string | null;
  /** null = no combo was addressed. */
  requested_combo: string | null;
  /** null = no key, or a key without a tag. */
  key_tag: string | null;
  /** Estimated input tokens (see {@link estimateInputTokens}). */
  input_tokens?: number;
  /** Why the body-derived facts are unknown, when they are. */
  unknownReason?: string;
}

/** The result of evaluating one expression. */
export interface Evaluation {
  value: Tri;
  /** e.g. `input_tokens (12034, estimated) lt 100000 → true`. */
  explanation: string;
}

/** The verdict on one target: evaluation plus the `when_unknown` rule applied. */
export interface PredicateVerdict extends Evaluation {
  /** Whether the target stays in the candidate list. */
  admit: boolean;
}

/** What the request facts are computed from. */
export interface RequestFactInput {
  /** The hub form of the body; undefined when it could not be parsed (body facts are then unknown). */
  hub?: HubRequest;
  /** Why `hub` is missing, for explanations. */
  hubError?: string;
  clientFormat: WireFormat;
  requestedModel: string;
  alias?: string;
  combo?: string;
  keyTag?: string;
}

/** Computes the request facts of SPEC 5.2 (pure; O(size of the body)). */
export function requestFacts(input: RequestFactInput): RequestFacts {
  const facts: RequestFacts = {
    client_format: input.clientFormat,
    frontend: input.clientFormat === "anthropic-messages" ? "anthropic" : input.clientFormat === "gemini" ? undefined : "openai",
    requested_model: input.requestedModel,
    requested_alias: input.alias ?? null,
    requested_combo: input.combo ?? null,
    key_tag: input.keyTag ?? null,
  };
  const hub = input.hub;
  if (!hub) {
    facts.unknownReason = input.hubError ?? "the request body could not be read";
    return facts;
  }
  facts.has_tools = hub.tools.length > 0;
  facts.has_images = hub.messages.some((m) => m.content.some((p) => partHasImage(p)));
  facts.has_reasoning = wantsReasoning(hub);
  facts.input_tokens = estimateInputTokens(hub);
  return facts;
}

function partHasImage(p: HubPart): boolean {
  if (p.type === "image") return true;
  if (p.type === "tool_result") return p.content.some((c) => c.type === "image");
  return false;
}

function wantsReasoning(hub: HubRequest): boolean {
  const r = hub.reasoning;
  if (!r || r.enabled === false) return false;
  if (r.enabled === true || r.adaptive) return true;
  if (r.effort !== undefined && r.effort !== "none") return true;
  return (r.budgetTokens ?? 0) > 0;
}

/** Tokens counted for an image or a binary document, whatever its size (a rough, fixed estimate). */
export const MEDIA_TOKEN_ESTIMATE = 1000;

/**
 * A rough input-token estimate: about 4 characters per token over the system prompt, every text,
 * reasoning text, tool call arguments and tool result text, and tool definitions (name, description,
 * JSON schema), plus {@link MEDIA_TOKEN_ESTIMATE} per image, audio clip, video or binary document.
 * Good for thresholds ("fits in 128k?"), not for billing.
 */
export function estimateInputTokens(hub: HubRequest): number {
  let chars = 0;
  let media = 0;
  const part = (p: HubPart): void => {
    switch (p.type) {
      case "text":
      case "thinking":
        chars += p.text.length;
        return;
      case "tool_call":
        chars += p.name.length + p.arguments.length;
        return;
      case "tool_result":
        for (const c of p.content) part(c);
        return;
      case "document":
        if (p.source.kind === "text") chars += p.source.data.length;
        else media++;
        return;
      case "image":
      case "audio":
      case "video":
        media++;
        return;
      default:
        return;
    }
  };
  for (const s of hub.system) chars += s.text.length;
  for (const m of hub.messages) for (const p of m.content) part(p);
  for (const t of hub.tools) {
    if (t.kind === "function") chars += t.name.length + (t.description?.length ?? 0) + JSON.stringify(t.parameters ?? {}).length;
    else chars += JSON.stringify(t.raw).length;
  }
  return Math.ceil(chars / 4) + media * MEDIA_TOKEN_ESTIMATE;
}

/** Looks up one fact for (request, target). `arg` is the capability name of `target_capability`. */
export function readFact(req: RequestFacts, target: PredicateTarget, fact: string, arg?: string): FactReading {
  const bodyUnknown = (): FactReading => ({ value: undefined, note: req.unknownReason ?? "unknown" });
  const info = target.provider.models[target.model];
  const noInfo = `no models entry for ${target.label}`;
  switch (fact) {
    case "has_tools":
    case "has_images":
    case "has_reasoning":
      return req[fact] === undefined ? bodyUnknown() : { value: req[fact] };
    case "input_tokens":
      return req.input_tokens === undefined ? bodyUnknown() : { value: req.input_tokens, note: "estimated" };
    case "frontend":
      return req.frontend === undefined ? { value: undefined, note: `no frontend for ${req.client_format} clients` } : { value: req.frontend };
    case "client_format":
      return { value: req.client_format };
    case "requested_model":
      return { value: req.requested_model };
    case "requested_alias":
    case "requested_combo":
    case "key_tag":
      return { value: req[fact] };
    case "target_model":
      return { value: target.model };
    case "target_provider":
      return { value: target.provider.id };
    case "target_context_window":
      return info?.contextWindow === undefined ? { value: undefined, note: info ? `context_window not set for ${target.label}` : noInfo } : { value: info.contextWindow };
    case "target_max_output_tokens":
      return info?.maxOutputTokens === undefined ? { value: undefined, note: info ? `max_output_tokens not set for ${target.label}` : noInfo } : { value: info.maxOutputTokens };
    case "target_capability": {
      if (!info) return { value: undefined, note: noInfo };
      if (arg === "reasoning") {
        return info.reasoningEfforts === undefined ? { value: undefined, note: `reasoning efforts not known for ${target.label}` } : { value: info.reasoningEfforts.length > 0 };
      }
      if (arg === "images" || arg === "pdf" || arg === "audio" || arg === "video") {
        const v = info[arg];
        return v === undefined ? { value: undefined, note: `${arg} not set for ${target.label}` } : { value: v };
      }
      return { value: undefined, note: `unknown capability ${String(arg)}` };
    }
    default:
      return { value: undefined, note: `unknown fact ${fact}` };
  }
}

const show = (v: PredicateScalar | PredicateScalar[]): string =>
  Array.isArray(v) ? `[${v.map((x) => show(x)).join(", ")}]` : typeof v === "string" ? JSON.stringify(v) : String(v);

const triText = (t: Tri): string => (t === "unknown" ? "unknown" : String(t));

function compare(op: PredicateComparison["op"], actual: PredicateScalar | null, expected: PredicateScalar | PredicateScalar[]): Tri {
  const list = Array.isArray(expected) ? expected : [expected];
  if (actual === null) {
    // Known to be absent: nothing equals it, contains nothing, orders with nothing.
    return op === "ne" || op === "not_in";
  }
  switch (op) {
    case "eq":
      return !Array.isArray(expected) && actual === expected;
    case "ne":
      return Array.isArray(expected) || actual !== expected;
    case "in":
      return list.includes(actual);
    case "not_in":
      return !list.includes(actual);
    case "contains":
      return typeof actual === "string" && typeof expected === "string" ? actual.includes(expected) : "unknown";
    case "lt":
    case "lte":
    case "gt":
    case "gte": {
      if (typeof actual !== "number" || typeof expected !== "number") return "unknown";
      if (op === "lt") return actual < expected;
      if (op === "lte") return actual <= expected;
      if (op === "gt") return actual > expected;
      return actual >= expected;
    }
    default:
      return "unknown";
  }
}

/** How deep an expression may nest before evaluation gives up with "unknown" (a config is never this deep). */
const MAX_DEPTH = 64;

/**
 * Evaluates an expression tree (SPEC 5.2) with Kleene's three-valued logic: `all` is false when any
 * child is false, else unknown when any is unknown, else true; `any` is true when any child is true,
 * else unknown when any is unknown, else false; `not` swaps true and false and keeps unknown. A
 * comparison on an unknown fact is unknown. Never throws; a malformed node is unknown.
 */
export function evaluate(expr: PredicateExpr, req: RequestFacts, target: PredicateTarget, depth = 0): Evaluation {
  if (depth > MAX_DEPTH || expr === null || typeof expr !== "object") return { value: "unknown", explanation: "malformed expression → unknown" };
  if ("all" in expr || "any" in expr) {
    const isAll = "all" in expr;
    const children = (isAll ? (expr as { all: PredicateExpr[] }).all : (expr as { any: PredicateExpr[] }).any) ?? [];
    const evals = children.map((c) => evaluate(c, req, target, depth + 1));
    let value: Tri;
    if (isAll) value = evals.some((e) => e.value === false) ? false : evals.some((e) => e.value === "unknown") ? "unknown" : true;
    else value = evals.some((e) => e.value === true) ? true : evals.some((e) => e.value === "unknown") ? "unknown" : false;
    return { value, explanation: `${isAll ? "all" : "any"}(${evals.map((e) => e.explanation).join("; ")}) → ${triText(value)}` };
  }
  if ("not" in expr) {
    const inner = evaluate((expr as { not: PredicateExpr }).not, req, target, depth + 1);
    const value: Tri = inner.value === "unknown" ? "unknown" : !inner.value;
    return { value, explanation: `not(${inner.explanation}) → ${triText(value)}` };
  }
  if ("fact" in expr) {
    const c = expr as PredicateComparison;
    const name = c.fact === "target_capability" ? `target_capability(${c.arg ?? "?"})` : c.fact;
    const reading = readFact(req, target, c.fact, c.arg);
    const rhs = `${c.op} ${show(c.value)}`;
    if (reading.value === undefined) {
      return { value: "unknown", explanation: `${name} (unknown: ${reading.note ?? "not known"}) ${rhs} → unknown` };
    }
    const shown = reading.value === null ? "none" : show(reading.value) + (reading.note ? `, ${reading.note}` : "");
    const value = compare(c.op, reading.value, c.value);
    return { value, explanation: `${name} (${shown}) ${rhs} → ${triText(value)}` };
  }
  return { value: "unknown", explanation: "malformed expression → unknown" };
}

/**
 * Decides a target's `when` (SPEC 5.2): true admits, false skips, unknown follows `when_unknown`
 * (`skip`, the default, or `allow`). The explanation ends with the rule that decided.
 */
export function decide(when: TargetPredicate, req: RequestFacts, target: PredicateTarget): PredicateVerdict {
  const e = evaluate(when.expr, req, target);
  if (e.value === "unknown") {
    const admit = when.whenUnknown === "allow";
    return { ...e, admit, explanation: `${e.explanation}; when_unknown: ${when.whenUnknown} → ${admit ? "allowed" : "skipped"}` };
  }
  return { ...e, admit: e.value };
}
