/**
 * Non-streamed Gemini body → hub reply (FormatCodec.decodeResponse; REFERENCE §4.2).
 *
 * The body is one `GenerateContentResponse` (the same shape as every SSE chunk) — or, from the
 * non-SSE `streamGenerateContent` endpoint, a JSON array of them. It goes through the same chunk
 * decoder as the stream, then the normalizer and the accumulator, so both paths agree exactly on
 * parts, signatures, ids, stop reasons (tool-use promotion) and usage.
 */
import * as v from "valibot";
import type { HubResponse } from "../hub.ts";
import { FormatError, hubError, type HubEvent } from "../hub.ts";
import { accumulate } from "../accumulate.ts";
import { normalizeEvents } from "../normalize.ts";
import { GeminiChunkDecoder, type GeminiDecoderOptions } from "./decoder.ts";
import { errorFromStatus } from "./errors.ts";
import { GenerateContentResponseSchema } from "./schema.ts";

function notGemini(why: string): FormatError {
  return new FormatError(hubError("api_error", `The upstream reply is not a Gemini generateContent response: ${why}.`, { status: 502, code: "upstream_malformed" }));
}

/**
 * Decodes a whole reply. `stopReason` is null when the body carries no `finishReason` (nor a prompt
 * `blockReason`). Throws {@link FormatError}: with the mapped upstream error for an `{"error": …}`
 * body; `api_error`/502 `upstream_malformed` for anything that is not a GenerateContentResponse.
 */
export function decodeResponse(body: unknown, opts: GeminiDecoderOptions): HubResponse {
  const chunks = Array.isArray(body) ? body : [body];
  if (chunks.length === 0) throw notGemini("empty array");
  const events: HubEvent[] = [];
  const core = new GeminiChunkDecoder(opts, (e) => events.push(e));
  for (const c of chunks) {
    if (typeof c !== "object" || c === null || Array.isArray(c)) throw notGemini("not an object");
    const obj = c as Record<string, unknown>;
    if (typeof obj.error === "object" && obj.error !== null) {
      throw new FormatError(errorFromStatus(obj.error as Record<string, unknown>, 0));
    }
    if (!("candidates" in obj) && !("promptFeedback" in obj) && !("usageMetadata" in obj)) {
      throw notGemini("no candidates, promptFeedback or usageMetadata");
    }
    const ok = v.safeParse(GenerateContentResponseSchema, obj);
    if (!ok.success) throw notGemini(ok.issues[0]?.message ?? "unexpected shape");
    core.chunk(obj);
  }
  return accumulate(normalizeEvents(events, { end: false })).response;
}
