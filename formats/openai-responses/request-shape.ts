/**
 * A Responses request body checked by hand, for parse.ts (issue 17, docs/performance.md item 143): as
 * for Messages (formats/anthropic-messages/request-shape.ts), valibot's `safeParse` of
 * {@link ResponsesRequestSchema} copies the body, every input item and every tool, and the per-item
 * and per-tool schemas copy each again (a function tool's `parameters` too); for Codex's ~40 KB turns
 * that was most of the parse to the hub. Each check here says yes only when it is sure the schema
 * accepts the value and parse.ts reads the same from the value as from the schema's copy; otherwise
 * the caller runs the schema, which names the failing path (so every 400 keeps its message). Pure, no I/O.
 *
 * - {@link acceptedRequest}: the envelope. What it returns reads as `ResponsesRequestSchema`'s output:
 *   the objects whose members parse.ts keeps as they are (`tool_choice`, `reasoning`, `text` and its
 *   `format`, a tool that is not a function tool) are valibot's copies ({@link looseCopy}, the
 *   schema's keys first); the `instructions` and `input` items and function tools are the body's own
 *   (parse.ts checks each again, below, or reads its fields by name); an item or tool that is an array
 *   (valibot's `looseObject` takes it as an object), a function tool with an own `__proto__`,
 *   `prototype` or `constructor` member (valibot's copy leaves it out; parse.ts copies the tool's other
 *   members), or anything the schema refuses is left to the schema.
 * - {@link plainMessageItem}, {@link plainFunctionCall}, {@link plainFunctionCallOutput},
 *   {@link plainCustomToolCall}, {@link plainCustomToolCallOutput}, {@link plainReasoningItem},
 *   {@link plainFunctionTool}: one item or function tool that its schema (schema.ts) surely accepts and
 *   whose fields parse.ts reads by name (a function tool's `parameters` kept as its own: valibot's
 *   `record` copy of it differs only by being a copy, and one with a left-out member is refused).
 */
import { hasLeftOutMember, isNullish, looseCopy, nullishBoolean, nullishNumber, nullishString } from "../schema-copy.ts";
import { isObj } from "../json.ts";
import { ResponsesRequestSchema } from "./schema.ts";

type Json = Record<string, any>;

/** The schema's keys of the request body, in its order (schema.ts `ResponsesRequestSchema`, read from it). */
const REQUEST_KEYS = Object.keys(ResponsesRequestSchema.entries);
const TYPE_KEYS = ["type"];
const TOOL_KEYS = ["type", "name"];
const REASONING_KEYS = ["effort", "summary"];
const TEXT_KEYS = ["format"];

/** `instructions` / `input` as the schema takes them: a string, or items (`InputItemSchema`) that are objects. */
function plainItems(x: unknown): boolean {
  if (isNullish(x) || typeof x === "string") return true;
  if (!Array.isArray(x)) return false;
  for (const item of x) if (!isObj(item) || (item.type !== undefined && typeof item.type !== "string")) return false;
  return true;
}

/**
 * What parse.ts reads for `body` in place of `ResponsesRequestSchema`'s output when the schema surely
 * accepts the body (module doc); undefined when the check is not sure, and the schema decides. The
 * body itself when no member needs valibot's copy (no `tool_choice`, `reasoning` or `text` object, no
 * provider tool): parse.ts reads the schema's fields by name and never writes to what it gets here.
 */
export function acceptedRequest(body: unknown): Json | undefined {
  if (!isObj(body) || typeof body.model !== "string") return undefined;
  if (!plainItems(body.instructions) || !plainItems(body.input)) return undefined;
  if (!nullishBoolean(body.parallel_tool_calls) || !nullishNumber(body.max_output_tokens) || !nullishNumber(body.temperature) || !nullishNumber(body.top_p)) return undefined;
  if (!nullishBoolean(body.store) || !nullishString(body.prompt_cache_key) || !nullishString(body.previous_response_id) || !nullishString(body.user) || !nullishBoolean(body.stream)) return undefined;
  const include = body.include;
  if (!isNullish(include)) {
    if (!Array.isArray(include)) return undefined;
    for (const s of include) if (typeof s !== "string") return undefined;
  }
  const tc = body.tool_choice;
  if (!isNullish(tc) && typeof tc !== "string" && !(isObj(tc) && typeof tc.type === "string")) return undefined;
  const reasoning = body.reasoning;
  if (!isNullish(reasoning) && !(isObj(reasoning) && nullishString(reasoning.effort) && nullishString(reasoning.summary))) return undefined;
  const text = body.text;
  if (!isNullish(text)) {
    if (!isObj(text)) return undefined;
    const f = text.format;
    if (!isNullish(f) && !(isObj(f) && typeof f.type === "string")) return undefined;
  }
  const tools = body.tools;
  let keptTools: unknown = tools;
  if (!isNullish(tools)) {
    if (!Array.isArray(tools)) return undefined;
    let copied: unknown[] | undefined;
    for (let i = 0; i < tools.length; i++) {
      const t = tools[i];
      if (!isObj(t) || typeof t.type !== "string" || (t.name !== undefined && typeof t.name !== "string")) return undefined;
      if (t.type === "function") {
        // parse.ts copies its members beyond the mapped ones (keepToolFields) in the tool's own order.
        if (hasLeftOutMember(t)) return undefined;
        copied?.push(t);
      } else if (t.type === "namespace") {
        copied?.push(t); // checked and copied by NamespaceToolSchema in parse.ts, as before
      } else (copied ??= tools.slice(0, i)).push(looseCopy(t, TOOL_KEYS)); // kept whole as a provider tool
    }
    if (copied) keptTools = copied;
  }
  // Nothing of the body that parse.ts keeps as it is needs valibot's copy: the body itself reads the
  // same for every field parse.ts reads by name (the copy's values are the body's own, and parse.ts
  // takes the fields it does not map from the body, not from this), without a copy of the envelope.
  if (keptTools === tools && !isObj(tc) && !isObj(reasoning) && !isObj(text)) return body;
  const out = looseCopy(body, REQUEST_KEYS);
  if (keptTools !== tools) out.tools = keptTools;
  if (isObj(tc)) out.tool_choice = looseCopy(tc, TYPE_KEYS);
  if (isObj(reasoning)) out.reasoning = looseCopy(reasoning, REASONING_KEYS);
  if (isObj(text)) {
    const t = looseCopy(text, TEXT_KEYS);
    if (isObj(t.format)) t.format = looseCopy(t.format, TYPE_KEYS);
    out.text = t;
  }
  return out;
}

/** `ContentPartSchema`: an object with a string `type` and an absent or string `text`. */
function plainParts(x: unknown[]): boolean {
  for (const p of x) if (!isObj(p) || typeof p.type !== "string" || (p.text !== undefined && typeof p.text !== "string")) return false;
  return true;
}

/** `MessageItemSchema`: `type` absent or "message", a known role, content a string or parts, `id` and `phase` nullish strings. */
export function plainMessageItem(item: Json): boolean {
  if (!isObj(item) || (item.type !== undefined && item.type !== "message")) return false;
  const role = item.role;
  if (role !== "user" && role !== "assistant" && role !== "system" && role !== "developer") return false;
  if (!nullishString(item.id) || !nullishString(item.phase)) return false;
  const c = item.content;
  return typeof c === "string" || (Array.isArray(c) && plainParts(c));
}

/** `FunctionCallItemSchema`. */
export function plainFunctionCall(item: Json): boolean {
  return (
    isObj(item) &&
    item.type === "function_call" &&
    typeof item.call_id === "string" &&
    typeof item.name === "string" &&
    typeof item.arguments === "string" &&
    nullishString(item.id) &&
    nullishString(item.namespace)
  );
}

/** `FunctionCallOutputItemSchema` with an output that is a string or parts (an object output is left to the schema, whose copy parse.ts writes). */
export function plainFunctionCallOutput(item: Json): boolean {
  if (!isObj(item) || item.type !== "function_call_output" || typeof item.call_id !== "string") return false;
  const o = item.output;
  return typeof o === "string" || (Array.isArray(o) && plainParts(o));
}

/** `CustomToolCallItemSchema`. */
export function plainCustomToolCall(item: Json): boolean {
  return isObj(item) && item.type === "custom_tool_call" && typeof item.call_id === "string" && typeof item.name === "string" && typeof item.input === "string" && nullishString(item.id) && nullishString(item.namespace);
}

/** `CustomToolCallOutputItemSchema`. */
export function plainCustomToolCallOutput(item: Json): boolean {
  if (!isObj(item) || item.type !== "custom_tool_call_output" || typeof item.call_id !== "string") return false;
  const o = item.output;
  return typeof o === "string" || (Array.isArray(o) && plainParts(o));
}

/** `ReasoningItemSchema`: `summary` nullish or objects with a string `text`, `content` nullish or objects with an absent or string `text`. */
export function plainReasoningItem(item: Json): boolean {
  if (!isObj(item) || item.type !== "reasoning" || !nullishString(item.id) || !nullishString(item.encrypted_content)) return false;
  const s = item.summary;
  if (!isNullish(s)) {
    if (!Array.isArray(s)) return false;
    for (const p of s) if (!isObj(p) || typeof p.text !== "string") return false;
  }
  const c = item.content;
  if (!isNullish(c)) {
    if (!Array.isArray(c)) return false;
    for (const p of c) if (!isObj(p) || (p.text !== undefined && typeof p.text !== "string")) return false;
  }
  return true;
}

/** `FunctionToolSchema`, with `parameters` absent, null or an object without a member valibot's copy leaves out. */
export function plainFunctionTool(t: Json): boolean {
  if (!isObj(t) || t.type !== "function" || typeof t.name !== "string") return false;
  if (!nullishString(t.description) || !nullishBoolean(t.strict) || !nullishBoolean(t.defer_loading)) return false;
  const p = t.parameters;
  return isNullish(p) || (isObj(p) && !hasLeftOutMember(p));
}
