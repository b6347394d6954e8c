/**
 * Anthropic Messages (`POST /v1/messages`), both sides (SPEC F-1; REFERENCE §1):
 * client side — {@link parseRequest}, stream encoder, {@link encodeResponse}, {@link errorBody};
 * provider side — {@link buildRequest} for kinds `anthropic`, `claude-code`, `anthropic-compatible`,
 * {@link tidyRequest}, stream decoder, {@link decodeResponse}, {@link parseError}, passthrough tap.
 */
import type { FormatCodec } from "../codec.ts";
import { createDecoder } from "./decoder.ts";
import { createEncoder } from "./encoder.ts";
import { errorBody, parseError } from "./errors.ts";
import { buildRequest } from "./build.ts";
import { parseRequest } from "./parse.ts";
import { tidyRequest } from "./tidy.ts";
import { decodeResponse, encodeResponse, plainReplyFacts, responseWarnings } from "./response.ts";
import { createTap } from "./tap.ts";
import { promptText, toolResults } from "./tool-results.ts";

export { AnthropicDecoder } from "./decoder.ts";
export { AnthropicEncoder, PING_FRAME } from "./encoder.ts";
export { errorFrame, errorFromObject } from "./errors.ts";
export { AnthropicTap } from "./tap.ts";
export { readOpaque, writeOpaque, sanitizeToolId, OPAQUE_TAG } from "./mapping.ts";
export { ACCEPTED_IDENTITIES, CLAUDE_CODE_IDENTITY, hasClaudeCodeIdentity } from "./claude-code.ts";
export { DEFAULT_MAX_TOKENS, EFFORT_BUDGET, ITEM_FIELDS_KEY } from "./mapping.ts";
export { buildRequest, parseRequest, tidyRequest, decodeResponse, encodeResponse, errorBody, parseError };

/** The Anthropic Messages {@link FormatCodec}. */
export const anthropicMessages: FormatCodec = {
  format: "anthropic-messages",
  parseRequest,
  createEncoder,
  encodeResponse,
  responseWarnings,
  errorBody,
  buildRequest,
  tidyRequest,
  createDecoder,
  decodeResponse,
  plainReplyFacts,
  parseError,
  createTap,
  toolResults,
  promptText,
};
