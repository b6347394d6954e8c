/**
 * Lenient valibot schema of a Chat Completions request body (REFERENCE §2.1). Every object is a
 * `looseObject`: unknown fields pass through untouched. Only the shapes the translator reads are
 * checked, and optional fields accept `null` (clients and SDKs send explicit nulls). Used once per
 * request by `parseRequest`, never per stream event.
 */
import * as v from "valibot";

const CacheControlSchema = v.looseObject({ type: v.string(), ttl: v.optional(v.string()) });

/** One content part of a message (`text`, `image_url`, `input_audio`, `file`, `refusal`, …). */
export const ContentPartSchema = v.looseObject({
  type: v.string(),
  text: v.optional(v.string()),
  refusal: v.optional(v.string()),
  image_url: v.optional(v.union([v.string(), v.looseObject({ url: v.string(), detail: v.nullish(v.string()) })])),
  input_audio: v.optional(v.looseObject({ data: v.string(), format: v.string() })),
  file: v.optional(
    v.looseObject({ file_data: v.nullish(v.string()), file_id: v.nullish(v.string()), filename: v.nullish(v.string()) }),
  ),
  cache_control: v.nullish(CacheControlSchema),
});

const ContentSchema = v.nullish(v.union([v.string(), v.array(ContentPartSchema)]));

/**
 * An assistant tool call in history: a function call (`arguments` a JSON string; some clients send an
 * object), or a call of a `custom` tool (`type: "custom"`, `custom: {name, input}`, raw text). One of
 * the two is required (parse.ts says which is missing).
 */
export const ToolCallSchema = v.looseObject({
  id: v.nullish(v.string()),
  type: v.nullish(v.string()),
  function: v.optional(
    v.looseObject({
      name: v.string(),
      arguments: v.nullish(v.union([v.string(), v.record(v.string(), v.unknown())])),
    }),
  ),
  custom: v.optional(v.looseObject({ name: v.string(), input: v.nullish(v.string()) })),
});

/** One message. `role` is checked against the roles Chat defines. */
export const MessageSchema = v.looseObject({
  role: v.picklist(["system", "developer", "user", "assistant", "tool", "function"]),
  content: ContentSchema,
  name: v.nullish(v.string()),
  tool_calls: v.nullish(v.array(ToolCallSchema)),
  tool_call_id: v.nullish(v.string()),
  function_call: v.nullish(v.looseObject({ name: v.string(), arguments: v.nullish(v.string()) })),
  reasoning_content: v.nullish(v.string()),
  /** Assistant history: the refusal a reply carried (the SDK's `message` appended back as is). */
  refusal: v.nullish(v.string()),
  cache_control: v.nullish(CacheControlSchema),
});

/** A tool definition; `function` tools are read, other types are carried as provider tools. */
export const ToolSchema = v.looseObject({
  type: v.string(),
  function: v.optional(
    v.looseObject({
      name: v.string(),
      description: v.nullish(v.string()),
      parameters: v.nullish(v.record(v.string(), v.unknown())),
      strict: v.nullish(v.boolean()),
    }),
  ),
  cache_control: v.nullish(CacheControlSchema),
});

/** The request body. */
export const ChatRequestSchema = v.looseObject({
  model: v.string(),
  messages: v.array(MessageSchema),
  tools: v.nullish(v.array(ToolSchema)),
  tool_choice: v.nullish(v.union([v.string(), v.looseObject({ type: v.string() })])),
  parallel_tool_calls: v.nullish(v.boolean()),
  max_tokens: v.nullish(v.number()),
  max_completion_tokens: v.nullish(v.number()),
  temperature: v.nullish(v.number()),
  top_p: v.nullish(v.number()),
  top_k: v.nullish(v.number()),
  n: v.nullish(v.number()),
  stop: v.nullish(v.union([v.string(), v.array(v.string())])),
  stream: v.nullish(v.boolean()),
  stream_options: v.nullish(v.looseObject({ include_usage: v.nullish(v.boolean()) })),
  reasoning_effort: v.nullish(v.string()),
  response_format: v.nullish(v.looseObject({ type: v.string() })),
  user: v.nullish(v.string()),
  safety_identifier: v.nullish(v.string()),
  prompt_cache_key: v.nullish(v.string()),
});

export type ChatRequest = v.InferOutput<typeof ChatRequestSchema>;
export type ChatMessage = v.InferOutput<typeof MessageSchema>;
export type ChatContentPart = v.InferOutput<typeof ContentPartSchema>;
