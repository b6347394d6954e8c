/**
 * valibot schemas for Anthropic Messages bodies (REFERENCE §1.1, §1.2). Lenient by design (SPEC F-1):
 * every object is a `looseObject`, so unknown fields pass through, and optional fields accept `null`
 * (clients send `"temperature": null`; REFERENCE §7.5 "null-valued optional fields omitted").
 *
 * What real clients send that a strict schema would reject, and is accepted here (fixtures
 * `clients/claude-code-*.json`): `role: "system"` entries inside `messages` with their own
 * `output_config`; `thinking: {type: "adaptive", display: "omitted"}`; `context_management`;
 * `metadata.user_id` holding a JSON document; tools with `defer_loading`, `$schema` and schemas without
 * `type`; content blocks of types this gateway does not know.
 *
 * Block-level rules (a `tool_use` needs an `id`, …) are checked while mapping (parse.ts), which can
 * name the offending path; the schema only fixes the envelope. Used once per request, never per
 * stream event.
 */
import * as v from "valibot";
import { specificIssue } from "../schema-issues.ts";

const nullishNumber = v.nullish(v.number());
const nullishString = v.nullish(v.string());

/** Any content block: a `type` string and anything else. */
export const BlockSchema = v.looseObject({ type: v.string() });

/** `content`: a string or a list of blocks. */
export const ContentSchema = v.union([v.string(), v.array(BlockSchema)]);

/** One entry of `messages`. `role` is any string here (Claude Code sends `system`); parse.ts decides. */
export const MessageSchema = v.looseObject({
  role: v.string(),
  content: ContentSchema,
});

/** A tool definition: function tools have `input_schema`; server tools have a versioned `type`. */
export const ToolSchema = v.looseObject({
  name: nullishString,
  type: nullishString,
  description: nullishString,
  input_schema: v.nullish(v.looseObject({})),
});

/** The request body of `POST /v1/messages`. `max_tokens` is required by the API but tolerated missing. */
export const RequestSchema = v.looseObject({
  model: v.string(),
  messages: v.array(MessageSchema),
  max_tokens: nullishNumber,
  system: v.nullish(v.union([v.string(), v.array(BlockSchema)])),
  tools: v.nullish(v.array(ToolSchema)),
  tool_choice: v.nullish(
    v.looseObject({
      type: v.string(),
      name: nullishString,
      disable_parallel_tool_use: v.nullish(v.boolean()),
    }),
  ),
  stop_sequences: v.nullish(v.array(v.string())),
  temperature: nullishNumber,
  top_p: nullishNumber,
  top_k: nullishNumber,
  thinking: v.nullish(
    v.looseObject({
      type: v.string(),
      budget_tokens: nullishNumber,
      display: nullishString,
    }),
  ),
  output_config: v.nullish(v.looseObject({ effort: nullishString })),
  metadata: v.nullish(v.looseObject({ user_id: nullishString })),
  stream: v.nullish(v.boolean()),
});

export type RequestBody = v.InferOutput<typeof RequestSchema>;

/** A non-streamed reply (REFERENCE §1.2). `content` and `usage` are what the gateway needs. */
export const ResponseSchema = v.looseObject({
  type: v.optional(v.string()),
  id: nullishString,
  model: nullishString,
  content: v.array(BlockSchema),
  stop_reason: nullishString,
  stop_sequence: nullishString,
  usage: v.nullish(v.looseObject({})),
});

export type ResponseBody = v.InferOutput<typeof ResponseSchema>;

/**
 * Validates with a schema and returns the output, or a readable reason naming the first failing path
 * (`messages.1.content: Invalid type…`).
 */
export function check<S extends v.GenericSchema>(schema: S, body: unknown): { ok: true; value: v.InferOutput<S> } | { ok: false; message: string; path?: string } {
  const r = v.safeParse(schema, body);
  if (r.success) return { ok: true, value: r.output };
  const issue = specificIssue(r.issues[0]);
  const path = v.getDotPath(issue) ?? undefined;
  return { ok: false, message: path ? `${path}: ${issue.message}` : issue.message, path };
}
