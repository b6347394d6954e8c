/**
 * Gemini `generateContent` wire shapes (REFERENCE §4): lenient valibot schemas for the bodies this
 * format decodes outside the hot path (non-streamed responses, HTTP error bodies), and the TypeScript
 * types of the request body the builder writes.
 *
 * Every object schema is a `v.looseObject`: unknown fields pass through (Google adds fields often:
 * `createTime`, `trafficType`, `serviceTier`, `finishMessage`, …). The streaming decoder does NOT run
 * these schemas per event; it uses cheap manual checks (see decoder.ts).
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
  id: v.optional(v.string()),
  name: v.optional(v.string()),
  args: v.optional(v.record(v.string(), v.unknown())),
  partialArgs: v.optional(v.array(PartialArgSchema)),
  willContinue: v.optional(v.boolean()),
});

/** One response part: text (optionally a thought), a function call, or something this gateway ignores. */
export const PartSchema = v.looseObject({
  text: v.optional(v.string()),
  thought: v.optional(v.boolean()),
  thoughtSignature: v.optional(v.string()),
  thought_signature: v.optional(v.string()),
  functionCall: v.optional(FunctionCallSchema),
});

export const CandidateSchema = v.looseObject({
  content: v.optional(
    v.looseObject({
      role: v.optional(v.string()),
      parts: v.optional(v.array(PartSchema)),
    }),
  ),
  finishReason: v.optional(v.string()),
  index: v.optional(v.number()),
});

/** `usageMetadata`, in tokens. `promptTokenCount` includes cached tokens; candidates exclude thoughts. */
export const UsageMetadataSchema = v.looseObject({
  promptTokenCount: v.optional(v.number()),
  candidatesTokenCount: v.optional(v.number()),
  thoughtsTokenCount: v.optional(v.number()),
  cachedContentTokenCount: v.optional(v.number()),
  toolUsePromptTokenCount: v.optional(v.number()),
  totalTokenCount: v.optional(v.number()),
});

/** A whole `GenerateContentResponse` (also the shape of every SSE `data:` payload). */
export const GenerateContentResponseSchema = v.looseObject({
  candidates: v.optional(v.array(CandidateSchema)),
  promptFeedback: v.optional(v.looseObject({ blockReason: v.optional(v.string()) })),
  usageMetadata: v.optional(UsageMetadataSchema),
  modelVersion: v.optional(v.string()),
  responseId: v.optional(v.string()),
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
