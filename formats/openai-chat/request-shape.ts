/**
 * A Chat request body checked by hand against `ChatRequestSchema` (schema.ts), for the
 * same-format tidy lane (tidy.ts): the lane sends the client's body on without the hub's parse, and a
 * wrong-typed field (`role: 5`, `temperature: "hot"`, `stream: "yes"`) is the 400 a translated target
 * gives (parse.ts `checkedRequest` names it), never passed on to the provider. valibot's `safeParse`
 * copies every object it checks; this reads the body in place and only says whether the schema surely
 * accepts it. When it is not sure (a wrong type, or an array where the schema's `looseObject` would
 * take one), the caller runs the schema, which decides and names the failing path.
 *
 * Pure, no I/O, no allocation. Each check is the schema's: `nullish` fields take undefined and null,
 * `optional` ones undefined only; a `looseObject` or `record` is a plain object here (valibot also
 * takes an array: left to the schema).
 */
import { isNullish as nullish, nullishBoolean, nullishNumber, nullishString } from "../schema-copy.ts";
import { isObj } from "../json.ts";

type Json = Record<string, unknown>;

/** The roles `MessageSchema` takes. */
const ROLES: ReadonlySet<unknown> = new Set(["system", "developer", "user", "assistant", "tool", "function"]);

/** `v.optional(v.string())`. */
const optionalString = (x: unknown): boolean => x === undefined || typeof x === "string";

/** `v.nullish(CacheControlSchema)`. */
function cacheControl(x: unknown): boolean {
  return nullish(x) || (isObj(x) && typeof x.type === "string" && optionalString(x.ttl));
}

/** `ContentPartSchema`. */
function part(p: unknown): boolean {
  if (!isObj(p) || typeof p.type !== "string" || !optionalString(p.text) || !optionalString(p.refusal) || !cacheControl(p.cache_control)) return false;
  const image = p.image_url;
  if (image !== undefined && typeof image !== "string" && !(isObj(image) && typeof image.url === "string" && nullishString(image.detail))) return false;
  const audio = p.input_audio;
  if (audio !== undefined && !(isObj(audio) && typeof audio.data === "string" && typeof audio.format === "string")) return false;
  const file = p.file;
  return file === undefined || (isObj(file) && nullishString(file.file_data) && nullishString(file.file_id) && nullishString(file.filename));
}

/** `ToolCallSchema`. */
function toolCall(c: unknown): boolean {
  if (!isObj(c) || !nullishString(c.id) || !nullishString(c.type)) return false;
  const fn = c.function;
  if (fn === undefined && c.type === "custom") return isObj(c.custom) && typeof c.custom.name === "string" && nullishString(c.custom.input);
  if (!isObj(fn) || typeof fn.name !== "string" || c.custom !== undefined) return false;
  const args = fn.arguments;
  return nullish(args) || typeof args === "string" || isObj(args);
}

/** `MessageSchema`. */
function message(m: unknown): boolean {
  if (!isObj(m) || !ROLES.has(m.role)) return false;
  const content = m.content;
  if (!nullish(content) && typeof content !== "string") {
    if (!Array.isArray(content)) return false;
    for (const p of content) if (!part(p)) return false;
  }
  if (!nullishString(m.name) || !nullishString(m.tool_call_id) || !nullishString(m.reasoning_content) || !nullishString(m.refusal) || !cacheControl(m.cache_control)) return false;
  const calls = m.tool_calls;
  if (!nullish(calls)) {
    if (!Array.isArray(calls)) return false;
    for (const c of calls) if (!toolCall(c)) return false;
  }
  const fc = m.function_call;
  return nullish(fc) || (isObj(fc) && typeof fc.name === "string" && nullishString(fc.arguments));
}

/** `ToolSchema`. */
function tool(t: unknown): boolean {
  if (!isObj(t) || typeof t.type !== "string" || !cacheControl(t.cache_control)) return false;
  const fn = t.function;
  return fn === undefined || (isObj(fn) && typeof fn.name === "string" && nullishString(fn.description) && (nullish(fn.parameters) || isObj(fn.parameters)) && nullishBoolean(fn.strict));
}

/**
 * Whether `ChatRequestSchema` surely accepts `body` (see the module doc); false when a field has
 * the wrong type or the check is not sure: the schema then decides.
 */
export function chatBodyAccepted(body: unknown): body is Json {
  if (!isObj(body) || typeof body.model !== "string" || !Array.isArray(body.messages)) return false;
  for (const m of body.messages) if (!message(m)) return false;
  const tools = body.tools;
  if (!nullish(tools)) {
    if (!Array.isArray(tools)) return false;
    for (const t of tools) if (!tool(t)) return false;
  }
  const choice = body.tool_choice;
  if (!nullish(choice) && typeof choice !== "string" && !(isObj(choice) && typeof choice.type === "string")) return false;
  if (!nullishBoolean(body.parallel_tool_calls) || !nullishBoolean(body.stream)) return false;
  if (!nullishNumber(body.max_tokens) || !nullishNumber(body.max_completion_tokens) || !nullishNumber(body.temperature)) return false;
  if (!nullishNumber(body.top_p) || !nullishNumber(body.top_k) || !nullishNumber(body.n)) return false;
  const stop = body.stop;
  if (!nullish(stop) && typeof stop !== "string") {
    if (!Array.isArray(stop)) return false;
    for (const s of stop) if (typeof s !== "string") return false;
  }
  const so = body.stream_options;
  if (!nullish(so) && !(isObj(so) && nullishBoolean(so.include_usage))) return false;
  const rf = body.response_format;
  if (!nullish(rf) && !(isObj(rf) && typeof rf.type === "string")) return false;
  return nullishString(body.reasoning_effort) && nullishString(body.user) && nullishString(body.safety_identifier) && nullishString(body.prompt_cache_key);
}
