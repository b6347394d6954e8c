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
import { countsTokens, type PlainReplyFacts } from "../codec.ts";
import { FormatError, hubError, noteDropped, type HubEvent } from "../hub.ts";
import { accumulate } from "../accumulate.ts";
import { normalizeEvents, promoteStopReason } from "../normalize.ts";
import { GeminiChunkDecoder, type GeminiDecoderOptions } from "./decoder.ts";
import { errorFromStatus } from "./errors.ts";
import { mapFinishReason, mapUsage } from "./mapping.ts";
import { jsonLength, isObj } from "../json.ts";
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
    if (!plainResponse(obj)) {
      const ok = v.safeParse(GenerateContentResponseSchema, obj);
      if (!ok.success) throw notGemini(ok.issues[0]?.message ?? "unexpected shape");
    }
    core.chunk(obj);
  }
  const r = accumulate(normalizeEvents(events, { end: false }));
  // The chunk decoder fails a call whose arguments nest past MAX_JSON_DEPTH (formats/json-depth.ts).
  if (r.error) throw new FormatError(r.error);
  if (core.dropped) for (const k of core.dropped) noteDropped(r.response, k);
  return r.response;
}

// ---------------------------------------------------------------------------------------------
// The schema's check without valibot, for the shapes a reply has (issue 17, docs/performance.md item 71)
// ---------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const optString = (x: unknown) => x === undefined || typeof x === "string";
const optNumber = (x: unknown) => x === undefined || (typeof x === "number" && !Number.isNaN(x));
const optBoolean = (x: unknown) => x === undefined || typeof x === "boolean";
/** `x` is undefined or an array whose every item passes `item`. */
function optArrayOf(x: unknown, item: (v: unknown) => boolean): boolean {
  if (x === undefined) return true;
  if (!Array.isArray(x)) return false;
  for (const v of x) if (!item(v)) return false;
  return true;
}

function partialArg(a: unknown): boolean {
  return isObj(a) && optString(a.jsonPath) && optString(a.stringValue) && optNumber(a.numberValue) && optBoolean(a.boolValue) && optBoolean(a.willContinue);
}

function functionCall(f: unknown): boolean {
  if (f === undefined) return true;
  if (!isObj(f)) return false;
  return optString(f.id) && optString(f.name) && (f.args === undefined || isObj(f.args)) && optArrayOf(f.partialArgs, partialArg) && optBoolean(f.willContinue);
}

function part(p: unknown): boolean {
  return isObj(p) && optString(p.text) && optBoolean(p.thought) && optString(p.thoughtSignature) && optString(p.thought_signature) && functionCall(p.functionCall);
}

function candidate(c: unknown): boolean {
  if (!isObj(c) || !optString(c.finishReason) || !optNumber(c.index)) return false;
  const content = c.content;
  if (content === undefined) return true;
  return isObj(content) && optString(content.role) && optArrayOf(content.parts, part);
}

/**
 * Whether `obj` passes {@link GenerateContentResponseSchema}, checked by hand: the same fields and
 * types (every object `looseObject`, every field optional, `null` refused as valibot's `optional`
 * refuses it), ~1 µs less per reply than `v.safeParse` (its pipeline of issue-collecting closures).
 * Never true where the schema fails; false on a few shapes the schema takes (an array where an object
 * is expected): the caller then asks valibot, which also words the error of a reply that fails.
 */
export function plainResponse(obj: Obj): boolean {
  if (!optArrayOf(obj.candidates, candidate) || !optString(obj.modelVersion) || !optString(obj.responseId)) return false;
  const fb = obj.promptFeedback;
  if (fb !== undefined && !(isObj(fb) && optString(fb.blockReason))) return false;
  const u = obj.usageMetadata;
  // Its counters are not checked: the schema takes any (a string from a proto3 JSON writer), mapping.ts tokenCount reads them.
  return u === undefined || isObj(u);
}

/**
 * {@link FormatCodec.plainReplyFacts} for Gemini: a single `GenerateContentResponse` (no array, no
 * `error`) that passes the schema's check, with one candidate (index 0) whose parts all have text (answer
 * or thought, signed or not) or are a whole function call (a `functionCall` with a non-empty `name`, no
 * `partialArgs` and no `willContinue: true`, and no `text` beside it), with a `finishReason`, and no log
 * probabilities. For it {@link decodeResponse} makes text and thinking blocks of the text parts and a
 * tool call of each call (its arguments `JSON.stringify(args ?? {})`), the mapped finish reason
 * promoted to `tool_use` when there is a call ({@link promoteStopReason}) and `mapUsage(usageMetadata)`,
 * and the output characters are the texts' and arguments' lengths: the same facts are read here without
 * the chunk decoder, the normalizer and the accumulator (1–3 µs and ~35 objects less per reply,
 * docs/performance.md items 92 and 101). A call's arguments are serialised for their length only when
 * the usage has no token counts ({@link PlainReplyFacts.outputChars}). Undefined otherwise.
 */
export function plainReplyFacts(body: unknown): PlainReplyFacts | undefined {
  if (!isObj(body) || body.error !== undefined || !plainResponse(body)) return undefined;
  const cands = body.candidates;
  if (!Array.isArray(cands) || cands.length !== 1) return undefined;
  const c = cands[0] as Obj; // an object: plainResponse checked it
  if ((c.index !== undefined && c.index !== 0) || c.logprobsResult !== undefined) return undefined;
  const finish = c.finishReason;
  if (typeof finish !== "string" || finish.length === 0) return undefined;
  const usage = mapUsage(body.usageMetadata);
  const measure = !countsTokens(usage);
  let chars = 0;
  let sawTool = false;
  const parts = c.content === undefined ? undefined : (c.content as Obj).parts;
  if (parts !== undefined) {
    for (const p of parts as Obj[]) {
      // plainResponse checked every field's type: text a string, a functionCall an object, its
      // partialArgs an array, its willContinue a boolean, its args an object.
      const fc = p.functionCall as Obj | undefined;
      if (fc !== undefined) {
        if (p.text !== undefined || typeof fc.name !== "string" || fc.name.length === 0 || fc.partialArgs !== undefined || fc.willContinue === true) return undefined;
        sawTool = true;
        if (measure) {
          // Too deep to serialise: decodeResponse throws on it (a 502), so leave it to the decode.
          const n = jsonLength(fc.args ?? {});
          if (n < 0) return undefined;
          chars += n;
        }
        continue;
      }
      // A thought is counted like text; a signature adds no characters.
      if (typeof p.text !== "string") return undefined;
      chars += p.text.length;
    }
  }
  return { usage, stopReason: promoteStopReason(mapFinishReason(finish), sawTool), outputChars: chars };
}
