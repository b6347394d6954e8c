/**
 * Gemini `generateContent` wire shapes (REFERENCE §4): lenient valibot schemas for the bodies this
 * format decodes outside the hot path (non-streamed responses, HTTP error bodies), and the TypeScript
 * types of the request body the builder writes.
 *
 * Every object schema is a `v.looseObject`: unknown fields pass through (Google adds fields often:
 * `createTime`, `trafficType`, `serviceTier`, `finishMessage`, …), and a response's optional fields may
 * be null (`v.nullish`: a Gemini-compatible server that writes an absent field as null is read as the
 * streaming decoder reads it, not refused). The streaming decoder does NOT run these schemas per event;
 * it uses cheap manual checks (see decoder.ts).
 */
import * as v from "valibot";

// ---------------------------------------------------------------------------------------------
// Response (REFERENCE §4.2; python-genai `types.py` Part, FunctionCall, Candidate, UsageMetadata)
// ---------------------------------------------------------------------------------------------

/** One streamed argument piece of a Vertex `functionCall.partialArgs` (python-genai `PartialArg`). */
export const PartialArgSchema = v.looseObject({
  jsonPath: v.optional(v.string()),
  stringValue: v.optional(v.string()),
  numberValue: v.optional(v.number()),
  boolValue: v.optional(v.boolean()),
  nullValue: v.optional(v.unknown()),
  willContinue: v.optional(v.boolean()),
});

/** `functionCall` of a response part. `args` is the whole arguments object (AI Studio). */
export const FunctionCallSchema = v.looseObject({
  id: v.nullish(v.string()),
  name: v.nullish(v.string()),
  args: v.nullish(v.record(v.string(), v.unknown())),
  partialArgs: v.nullish(v.array(PartialArgSchema)),
  willContinue: v.nullish(v.boolean()),
});

/** One response part: text (optionally a thought), a function call, or something this gateway ignores. */
export const PartSchema = v.looseObject({
  text: v.nullish(v.string()),
  thought: v.nullish(v.boolean()),
  thoughtSignature: v.nullish(v.string()),
  thought_signature: v.nullish(v.string()),
  functionCall: v.nullish(FunctionCallSchema),
});

export const CandidateSchema = v.looseObject({
  content: v.nullish(
    v.looseObject({
      role: v.nullish(v.string()),
      parts: v.nullish(v.array(PartSchema)),
    }),
  ),
  finishReason: v.nullish(v.string()),
  index: v.nullish(v.number()),
});

/**
 * A `usageMetadata` counter, in tokens: a number, or (proto3's JSON mapping of an int64, which a proxy or
 * Gemini-compatible server that re-serialises the reply may write) a string; mapping.ts `tokenCount` reads
 * a numeric string as its number and ignores anything else (the usage is then estimated, as for other
 * formats). A reply is never refused over its usage counters.
 */
const TokenCountSchema = v.nullish(v.unknown());

/** `usageMetadata`, in tokens. `promptTokenCount` includes cached tokens; candidates exclude thoughts. */
export const UsageMetadataSchema = v.looseObject({
  promptTokenCount: TokenCountSchema,
  candidatesTokenCount: TokenCountSchema,
  thoughtsTokenCount: TokenCountSchema,
  cachedContentTokenCount: TokenCountSchema,
  toolUsePromptTokenCount: TokenCountSchema,
  totalTokenCount: TokenCountSchema,
});

/** A whole `GenerateContentResponse` (also the shape of every SSE `data:` payload). */
export const GenerateContentResponseSchema = v.looseObject({
  candidates: v.nullish(v.array(CandidateSchema)),
  promptFeedback: v.nullish(v.looseObject({ blockReason: v.nullish(v.string()) })),
  usageMetadata: v.nullish(UsageMetadataSchema),
  modelVersion: v.nullish(v.string()),
  responseId: v.nullish(v.string()),
});

export type GeminiPartialArg = v.InferOutput<typeof PartialArgSchema>;
export type GeminiFunctionCall = v.InferOutput<typeof FunctionCallSchema>;
export type GeminiResponsePart = v.InferOutput<typeof PartSchema>;
export type GeminiUsageMetadata = v.InferOutput<typeof UsageMetadataSchema>;
export type GeminiResponse = v.InferOutput<typeof GenerateContentResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Errors (REFERENCE §4.4; google.rpc.Status with `details`)
// ---------------------------------------------------------------------------------------------

/** `{"error": {code, message, status, details}}`. */
export const ErrorBodySchema = v.looseObject({
  error: v.looseObject({
    code: v.optional(v.number()),
    message: v.optional(v.string()),
    status: v.optional(v.string()),
    details: v.optional(v.array(v.looseObject({ "@type": v.optional(v.string()) }))),
  }),
});

export type GeminiErrorBody = v.InferOutput<typeof ErrorBodySchema>;

// ---------------------------------------------------------------------------------------------
// Request (REFERENCE §4.1) — written by build.ts
// ---------------------------------------------------------------------------------------------

/** A request part. Exactly one data field (`text`, `inlineData`, `fileData`, `functionCall`, `functionResponse`). */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  /** Returned exactly as received, on the same part (REFERENCE §4.3). */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { name: string; args: Record<string, unknown> };
  functionResponse?: { name: string; response: Record<string, unknown> };
}

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}
