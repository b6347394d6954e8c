/**
 * A Messages request body's envelope checked by hand, for parse.ts (issue 17, docs/performance.md item
 * 142): valibot's `safeParse` of {@link RequestSchema} (schema.ts) copies every object it checks (the
 * body, every message, content block and tool), which for Claude Code's ~90 KB turns was most of the
 * parse to the hub. {@link acceptedEnvelope} reads the body instead and, when it is sure the schema
 * accepts it, returns what parse.ts reads in place of the schema's output; otherwise undefined, and the
 * caller runs the schema, which names the failing path (so every refusal keeps its message).
 *
 * Pure, no I/O. What it returns reads the same as the schema's output for parse.ts:
 * - the top-level object and the small objects whose members parse.ts keeps as they are (`thinking`,
 *   `tool_choice`, `output_config`, `metadata`) and a tool that is not a function tool (kept whole as a
 *   provider tool) are copied as valibot's `looseObject` copies them ({@link looseCopy}: the schema's
 *   keys first, in its order, then the others in the body's order, without `__proto__`, `prototype` and
 *   `constructor`), since their key order reaches the upstream body;
 * - the arrays of messages, system blocks and tools are the body's own, with the body's own messages,
 *   blocks and function tools in them: parse.ts reads their fields by name and walks their other members
 *   in the body's order, which valibot's copies keep; a message, a tool or a tool's `input_schema` with
 *   an own `__proto__`, `prototype` or `constructor` member (which valibot's copy leaves out) is left to
 *   the schema, as is an array where the schema wants an object (valibot's `looseObject` takes an array
 *   and copies it into an object).
 */
import { hasLeftOutMember, isNullish, looseCopy, nullishBoolean, nullishNumber, nullishString } from "../schema-copy.ts";
import { isObj } from "../json.ts";
import { RequestSchema, type RequestBody } from "./schema.ts";

type Json = Record<string, unknown>;

const nullish = isNullish;
const hasSpecialMember = hasLeftOutMember;

/** The schema's keys of the request body, in its order (schema.ts `RequestSchema`). */
const REQUEST_KEYS = Object.keys(RequestSchema.entries);
const TOOL_KEYS = ["name", "type", "description", "input_schema"];
const TOOL_CHOICE_KEYS = ["type", "name", "disable_parallel_tool_use"];
const THINKING_KEYS = ["type", "budget_tokens", "display"];
const EFFORT_KEYS = ["effort"];
const USER_ID_KEYS = ["user_id"];
const NO_KEYS: string[] = [];

/** A content block as the schema's `BlockSchema` takes it: an object with a string `type`. */
function isBlock(b: unknown): boolean {
  return isObj(b) && typeof b.type === "string";
}

function blocks(x: unknown[]): boolean {
  for (const b of x) if (!isBlock(b)) return false;
  return true;
}

/** A message the schema accepts and whose fields parse.ts reads from the body as from its copy. */
function plainMessage(m: unknown): boolean {
  if (!isObj(m) || typeof m.role !== "string" || hasSpecialMember(m)) return false;
  const c = m.content;
  return typeof c === "string" || (Array.isArray(c) && blocks(c));
}

/** A tool the schema accepts; for a function tool, whose fields parse.ts reads from the body as from its copy. */
function plainTool(t: unknown): boolean {
  if (!isObj(t) || hasSpecialMember(t)) return false;
  if (!nullishString(t.name) || !nullishString(t.type) || !nullishString(t.description)) return false;
  const s = t.input_schema;
  return nullish(s) || (isObj(s) && !hasSpecialMember(s));
}

/**
 * Whether the schema surely accepts `body` (see the module doc), read in place: false when a field has
 * the wrong type or the check is not sure, and the schema decides. Also asked by the same-format tidy
 * lane (tidy.ts), which sends the body on without parse.ts: a wrong-typed field is the same 400 there.
 */
export function envelopeAccepted(body: unknown): body is Json & RequestBody {
  if (!isObj(body) || typeof body.model !== "string") return false;
  const messages = body.messages;
  if (!Array.isArray(messages)) return false;
  for (const m of messages) if (!plainMessage(m)) return false;
  if (!nullishNumber(body.max_tokens) || !nullishNumber(body.temperature) || !nullishNumber(body.top_p) || !nullishNumber(body.top_k) || !nullishBoolean(body.stream)) return false;
  const system = body.system;
  if (!nullish(system) && typeof system !== "string" && !(Array.isArray(system) && blocks(system))) return false;
  const stops = body.stop_sequences;
  if (!nullish(stops)) {
    if (!Array.isArray(stops)) return false;
    for (const s of stops) if (typeof s !== "string") return false;
  }
  const tc = body.tool_choice;
  if (!nullish(tc) && !(isObj(tc) && typeof tc.type === "string" && nullishString(tc.name) && nullishBoolean(tc.disable_parallel_tool_use))) return false;
  const th = body.thinking;
  if (!nullish(th) && !(isObj(th) && typeof th.type === "string" && nullishNumber(th.budget_tokens) && nullishString(th.display))) return false;
  const oc = body.output_config;
  if (!nullish(oc) && !(isObj(oc) && nullishString(oc.effort))) return false;
  const md = body.metadata;
  if (!nullish(md) && !(isObj(md) && nullishString(md.user_id))) return false;
  const tools = body.tools;
  if (!nullish(tools)) {
    if (!Array.isArray(tools)) return false;
    for (const t of tools) if (!plainTool(t)) return false;
  }
  return true;
}

/**
 * What parse.ts reads for `body` in place of `RequestSchema`'s output when the schema surely accepts
 * the body ({@link envelopeAccepted}); undefined when the check is not sure, and the schema decides.
 * The body itself when no member needs valibot's copy (no `tool_choice`, `thinking`, `output_config`
 * or `metadata` object, no provider tool, no member the copy leaves out): parse.ts never writes to it.
 */
export function acceptedEnvelope(body: unknown): (Json & RequestBody) | undefined {
  if (!envelopeAccepted(body)) return undefined;
  const { tools, tool_choice: tc, thinking: th, output_config: oc, metadata: md } = body as Json;
  let keptTools: unknown = tools;
  if (Array.isArray(tools)) {
    let copied: unknown[] | undefined;
    for (let i = 0; i < tools.length; i++) {
      const t = tools[i] as Json;
      if (t.type === undefined || t.type === null || t.type === "custom") {
        copied?.push(t);
        continue;
      }
      // Kept whole as a provider tool (parse.ts parseTool): valibot's copy, its input_schema copied too.
      const raw = looseCopy(t, TOOL_KEYS);
      if (isObj(raw.input_schema)) raw.input_schema = looseCopy(raw.input_schema, NO_KEYS);
      (copied ??= tools.slice(0, i)).push(raw);
    }
    if (copied) keptTools = copied;
  }
  // Nothing parse.ts keeps as it is needs valibot's copy: the body itself reads the same (parse.ts reads
  // the schema's fields by name, and its walk for `source.extra` skips them all, so the other members
  // come in the body's order either way), without a copy of the envelope per request. Not with a member
  // the copy leaves out (`__proto__`, `prototype`, `constructor`): that walk would meet it.
  if (keptTools === tools && !isObj(tc) && !isObj(th) && !isObj(oc) && !isObj(md) && !hasSpecialMember(body)) return body as Json & RequestBody;
  const out = looseCopy(body, REQUEST_KEYS);
  if (keptTools !== tools) out.tools = keptTools;
  if (isObj(tc)) out.tool_choice = looseCopy(tc, TOOL_CHOICE_KEYS);
  if (isObj(th)) out.thinking = looseCopy(th, THINKING_KEYS);
  if (isObj(oc)) out.output_config = looseCopy(oc, EFFORT_KEYS);
  if (isObj(md)) out.metadata = looseCopy(md, USER_ID_KEYS);
  return out as Json & RequestBody;
}
