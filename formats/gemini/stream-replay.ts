/**
 * A whole Gemini reply as a Gemini stream, every part kept (codec `replayAsStream`): a
 * GenerateContentResponse is itself a stream chunk, so a native streaming Gemini client whose upstream
 * answered with JSON (or with the JSON array `streamGenerateContent` sends without `alt=sse`) gets the
 * reply's chunks as `data:` events, images (`inlineData`) and code-execution parts included, which a
 * replay through the hub would drop (SPEC F-9).
 */
import type { EncoderOptions } from "../codec.ts";

/** `body` (one GenerateContentResponse, or an array of them) → one `data:` event per chunk (REFERENCE §4). */
export function replayAsStream(body: unknown, _opts?: EncoderOptions): string {
  let out = "";
  for (const chunk of Array.isArray(body) ? body : [body]) out += `data: ${JSON.stringify(chunk)}\n\n`;
  return out;
}
