/**
 * The registry of wire formats: {@link WireFormat} → {@link FormatCodec}.
 */
import type { FormatCodec } from "./codec.ts";
import type { WireFormat } from "./hub.ts";
import { anthropicMessages } from "./anthropic-messages/index.ts";
import { openaiChat } from "./openai-chat/index.ts";
import { openaiResponses } from "./openai-responses/index.ts";
import { gemini } from "./gemini/index.ts";

const CODECS: Record<WireFormat, FormatCodec> = {
  "anthropic-messages": anthropicMessages,
  "openai-chat": openaiChat,
  "openai-responses": openaiResponses,
  gemini,
};

/** The codec of a wire format. */
export function codecFor(format: WireFormat): FormatCodec {
  return CODECS[format];
}

export type { FormatCodec } from "./codec.ts";
