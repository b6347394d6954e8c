/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), both sides (SPEC F-1; REFERENCE §2).
 *
 * Client side: {@link parseRequest}, a stream encoder (hub events → Chat SSE, REFERENCE §6.2),
 * {@link encodeResponse}, {@link errorBody}. Provider side: {@link buildRequest} (kinds `openai` and
 * `openai-compatible`), {@link tidyRequest} (same-format third-party servers), a stream decoder (Chat
 * SSE → hub events), {@link decodeResponse}, {@link parseError}, and the passthrough tap for the native
 * pair Chat → `openai` (SPEC F-3).
 */
import type { FormatCodec } from "../codec.ts";
import { createDecoder } from "./decoder.ts";
import { createEncoder } from "./encoder.ts";
import { errorBody, parseError } from "./errors.ts";
import { buildRequest } from "./build.ts";
import { parseRequest } from "./parse.ts";
import { tidyRequest } from "./tidy.ts";
import { decodeResponse, encodeResponse, plainReplyFacts } from "./response.ts";
import { replayAsStream } from "./stream-replay.ts";
import { createTap } from "./tap.ts";
import { promptText, toolResults } from "./tool-results.ts";

/** The Chat Completions codec. */
export const openaiChat: FormatCodec = {
  format: "openai-chat",
  parseRequest,
  createEncoder,
  encodeResponse,
  errorBody,
  buildRequest,
  tidyRequest,
  createDecoder,
  decodeResponse,
  plainReplyFacts,
  replayAsStream,
  parseError,
  createTap,
  toolResults,
  promptText,
};

export { ChatDecoder } from "./decoder.ts";
export { ChatEncoder } from "./encoder.ts";
export { ChatTap } from "./tap.ts";
export { chatErrorObject, errorFromPayload } from "./errors.ts";
export { chatToolId, stopFromChat, stopToChat, usageFromChat, usageToChat } from "./mapping.ts";
export { parseDataUrl, usesLegacyFunctions } from "./parse.ts";
export { chatCustomToolsOfBody } from "./custom-calls.ts";
