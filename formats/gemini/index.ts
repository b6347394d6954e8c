/**
 * The Gemini `generateContent` wire format, both sides (SPEC F-1; REFERENCE §4).
 *
 * Client side (the `/v1beta/models/{model}:generateContent` endpoints, SPEC 2.1): {@link parseRequest}
 * (parse.ts; the model and stream come from the URL), the stream encoder and
 * `encodeResponse` (encoder.ts), `errorBody`, `promptText`. Provider side: `buildRequest`, the stream
 * decoder, `decodeResponse`, `parseError`, and the passthrough tap for the native pair Gemini →
 * `gemini`.
 *
 * Executor contract: the model goes in the URL, not the body — use {@link geminiPath}
 * (`/v1beta/models/{model}:streamGenerateContent?alt=sse` or `:generateContent`). When a tool name
 * had to be changed for Gemini, pass {@link geminiToolNames}(request) to `createDecoder` as
 * `toolNames` so the client sees the names it declared.
 */
import type { FormatCodec } from "../codec.ts";
import { parseRequest } from "./parse.ts";
import { createDecoder } from "./decoder.ts";
import { createEncoder, encodeResponse } from "./encoder.ts";
import { errorBody, parseError } from "./errors.ts";
import { buildRequest } from "./build.ts";
import { decodeResponse, plainReplyFacts } from "./response.ts";
import { replayAsStream } from "./stream-replay.ts";
import { createTap } from "./tap.ts";
import { promptText, toolResults } from "./tool-results.ts";

export { geminiPath, geminiToolNames, thinkingConfig, DUMMY_THOUGHT_SIGNATURE } from "./build.ts";
export { cleanSchema, cleanParameters } from "./schema-clean.ts";
export type { GeminiDecoderOptions } from "./decoder.ts";
export { parseRequest as parseGeminiRequest, geminiSchemaToJsonSchema, type GeminiParseOptions } from "./parse.ts";
export { finishReasonToGemini, usageToGemini, writeGeminiSignature, readGeminiSignature } from "./mapping.ts";

/** The Gemini codec. */
export const gemini: FormatCodec = {
  format: "gemini",
  wholeToolCalls: true,
  parseRequest: (body) => parseRequest(body),
  createEncoder,
  encodeResponse,
  errorBody,
  buildRequest,
  createDecoder,
  decodeResponse,
  plainReplyFacts,
  replayAsStream,
  parseError,
  createTap,
  toolResults,
  promptText,
};
