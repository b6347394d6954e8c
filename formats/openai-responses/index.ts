/**
 * The OpenAI Responses wire format (`POST /v1/responses`, REFERENCE §3), both sides: client
 * (Codex CLI, OpenAI SDK `responses.*`) and provider (OpenAI, Codex backend, Responses-compatible
 * servers). See the module docs of parse.ts, build.ts, tidy.ts, codex.ts, decoder.ts, encoder.ts, response.ts, tap.ts, errors.ts.
 */
import type { FormatCodec } from "../codec.ts";
import { buildRequest } from "./build.ts";
import { parseRequest } from "./parse.ts";
import { tidyRequest } from "./tidy.ts";
import { createDecoder } from "./decoder.ts";
import { createEncoder, createEventEncoder } from "./encoder.ts";
import { decodeResponse, encodeResponse, encodeResponseText, plainReplyFacts } from "./response.ts";
import { errorBody, parseError } from "./errors.ts";
import { createEventTap, createTap } from "./tap.ts";
import { promptText, toolResults } from "./tool-results.ts";

export { assertNoPreviousResponse } from "./parse.ts";
export { tidyRequest } from "./tidy.ts";

/** The Responses codec (SPEC F-1). */
export const openaiResponses: FormatCodec = {
  format: "openai-responses",
  wholeToolCalls: true,
  parseRequest,
  createEncoder,
  createEventEncoder,
  encodeResponse,
  encodeResponseText,
  errorBody,
  buildRequest,
  tidyRequest,
  createDecoder,
  decodeResponse,
  plainReplyFacts,
  parseError,
  createTap,
  createEventTap,
  toolResults,
  promptText,
};
