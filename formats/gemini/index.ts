/**
 * The Gemini `generateContent` wire format, provider side (SPEC F-1; REFERENCE §4). A Gemini client
 * endpoint is later work, so only the required client member (`errorBody`) is implemented.
 *
 * Executor contract: the model goes in the URL, not the body — use {@link geminiPath}
 * (`/v1beta/models/{model}:streamGenerateContent?alt=sse` or `:generateContent`). When a tool name
 * had to be changed for Gemini, pass {@link geminiToolNames}(request) to `createDecoder` as
 * `toolNames` so the client sees the names it declared.
 */
import type { FormatCodec } from "../codec.ts";
import { createDecoder } from "./decoder.ts";
import { errorBody, parseError } from "./errors.ts";
import { buildRequest } from "./build.ts";
import { decodeResponse } from "./response.ts";
import { createTap } from "./tap.ts";
import { toolResults } from "./tool-results.ts";

export { geminiPath, geminiToolNames, thinkingConfig, DUMMY_THOUGHT_SIGNATURE } from "./build.ts";
export { cleanSchema, cleanParameters } from "./schema-clean.ts";
export type { GeminiDecoderOptions } from "./decoder.ts";

/** The Gemini codec. */
export const gemini: FormatCodec = {
  format: "gemini",
  errorBody,
  buildRequest,
  createDecoder,
  decodeResponse,
  parseError,
  createTap,
  toolResults,
};
