/**
 * Lenient valibot schemas for OpenAI Responses request bodies (REFERENCE §3.1). Every object schema
 * is a `looseObject`: unknown fields pass through untouched (Codex and the SDKs add fields often:
 * `client_metadata`, `prompt_cache_retention`, `phase`, …). The schemas check only what the parser
 * relies on — types of the fields it reads — so a real client body is never rejected for carrying
 * something new.
 *
 * Used once per request (parseRequest); never on the per-event stream path.
 */
import * as v from "valibot";

const nullishString = v.nullish(v.string());
const nullishNumber = v.nullish(v.number());
const nullishBoolean = v.nullish(v.boolean());

/** A content part of a message (`input_text`, `input_image`, `input_file`, `output_text`, …). */
export const ContentPartSchema = v.looseObject({
  type: v.string(),
  text: v.optional(v.string()),
});

/** Message content: a string or a list of typed parts. */
export const MessageContentSchema = v.union([v.string(), v.array(ContentPartSchema)]);

/**
 * A message item: `{type:"message", role, content}` or the "easy" form without `type`
 * (`{role:"developer", content:"…"}`). `phase` ("commentary" | "final_answer") is kept.
 */
export const MessageItemSchema = v.looseObject({
  type: v.optional(v.literal("message")),
  id: nullishString,
  role: v.picklist(["user", "assistant", "system", "developer"]),
  content: MessageContentSchema,
  phase: nullishString,
});

/** `function_call`: `call_id` pairs it with its output; `id` (`fc_…`) is the item id. */
export const FunctionCallItemSchema = v.looseObject({
  type: v.literal("function_call"),
  id: nullishString,
  call_id: v.string(),
  name: v.string(),
  arguments: v.string(),
  namespace: nullishString,
});

/** `function_call_output`: output is a string or a list of `input_text`/`input_image`/`input_file` parts. */
export const FunctionCallOutputItemSchema = v.looseObject({
  type: v.literal("function_call_output"),
  call_id: v.string(),
  output: v.union([v.string(), v.array(ContentPartSchema), v.looseObject({})]),
});

/** `custom_tool_call` (freeform tools such as Codex's `apply_patch`): `input` is raw text, not JSON. */
export const CustomToolCallItemSchema = v.looseObject({
  type: v.literal("custom_tool_call"),
  id: nullishString,
  call_id: v.string(),
  name: v.string(),
  input: v.string(),
  /** The Codex namespace of a `custom` member of a `namespace` tool. */
  namespace: nullishString,
});

/** `custom_tool_call_output`. */
export const CustomToolCallOutputItemSchema = v.looseObject({
  type: v.literal("custom_tool_call_output"),
  call_id: v.string(),
  output: v.union([v.string(), v.array(ContentPartSchema)]),
});

/** `reasoning`: summary parts, optional raw `content` (`reasoning_text`), optional `encrypted_content`. */
export const ReasoningItemSchema = v.looseObject({
  type: v.literal("reasoning"),
  id: nullishString,
  summary: v.nullish(v.array(v.looseObject({ text: v.string() }))),
  content: v.nullish(v.array(v.looseObject({ text: v.optional(v.string()) }))),
  encrypted_content: nullishString,
});

/** Any input item: only `type` (when present) is checked here; per-type schemas above do the rest. */
export const InputItemSchema = v.looseObject({ type: v.optional(v.string()) });

/** A tool definition: `function`, `namespace` (holding nested tools), `web_search`, `custom`, … */
export const ToolSchema = v.looseObject({
  type: v.string(),
  name: v.optional(v.string()),
});

/** `function` tool (flat, REFERENCE §3.1 / §5.6). */
export const FunctionToolSchema = v.looseObject({
  type: v.literal("function"),
  name: v.string(),
  description: nullishString,
  parameters: v.nullish(v.record(v.string(), v.unknown())),
  strict: nullishBoolean,
  defer_loading: nullishBoolean,
});

/** `namespace` tool (Codex): groups function/custom tools under a name used in calls. */
export const NamespaceToolSchema = v.looseObject({
  type: v.literal("namespace"),
  name: v.string(),
  description: nullishString,
  tools: v.array(ToolSchema),
});

/** The request body of `POST /v1/responses`. */
export const ResponsesRequestSchema = v.looseObject({
  model: v.string(),
  instructions: v.nullish(v.union([v.string(), v.array(InputItemSchema)])),
  input: v.nullish(v.union([v.string(), v.array(InputItemSchema)])),
  tools: v.nullish(v.array(ToolSchema)),
  tool_choice: v.nullish(v.union([v.string(), v.looseObject({ type: v.string() })])),
  parallel_tool_calls: nullishBoolean,
  max_output_tokens: nullishNumber,
  temperature: nullishNumber,
  top_p: nullishNumber,
  reasoning: v.nullish(
    v.looseObject({
      effort: nullishString,
      summary: nullishString,
    }),
  ),
  text: v.nullish(v.looseObject({ format: v.nullish(v.looseObject({ type: v.string() })) })),
  store: nullishBoolean,
  include: v.nullish(v.array(v.string())),
  prompt_cache_key: nullishString,
  previous_response_id: nullishString,
  user: nullishString,
  stream: nullishBoolean,
});

export type ResponsesRequestBody = v.InferOutput<typeof ResponsesRequestSchema>;
