/**
 * Small Gemini ↔ hub vocabulary maps shared by the decoder, decodeResponse and the tap.
 */
import type { Opaque, ProviderFamily, StopReason, TokenAlternative, TokenLogprob, Usage } from "../hub.ts";
import { OPAQUE_TAG, readTaggedOpaque, writeTaggedOpaque } from "../hub.ts";
import { isObj } from "../json.ts";

/**
 * `finishReason` → hub stop reason (REFERENCE §4.2, §5.1): STOP → `end_turn` (the normalizer promotes
 * it to `tool_use` when a functionCall was emitted); MAX_TOKENS → `max_tokens`; the safety family
 * (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, LANGUAGE, IMAGE_SAFETY,
 * IMAGE_PROHIBITED_CONTENT, IMAGE_RECITATION) → `refusal`; everything else (MALFORMED_FUNCTION_CALL,
 * UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, OTHER, FINISH_REASON_UNSPECIFIED, unknown values) → `other`.
 */
export function mapFinishReason(reason: string): StopReason {
  switch (reason) {
    case "STOP":
      return "end_turn";
    case "MAX_TOKENS":
      return "max_tokens";
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "LANGUAGE":
    case "IMAGE_SAFETY":
    case "IMAGE_PROHIBITED_CONTENT":
    case "IMAGE_RECITATION":
      return "refusal";
    default:
      return "other";
  }
}

/**
 * A `usageMetadata` counter: a finite number as it is, a string of decimal digits (proto3's JSON form of
 * an int64: `"11"`) as its number; anything else (a negative or fractional string, an object) undefined,
 * as a counter the upstream did not send.
 */
export function tokenCount(x: unknown): number | undefined {
  if (typeof x === "number") return Number.isFinite(x) ? x : undefined;
  return typeof x === "string" && DIGITS.test(x) ? Number(x) : undefined;
}
const DIGITS = /^\d{1,15}$/;

/**
 * `usageMetadata` → hub usage (REFERENCE §5.10), in tokens: `inputTokens` = promptTokenCount −
 * cachedContentTokenCount (+ toolUsePromptTokenCount, tokens of server-side tool results, billed as
 * input); `cacheReadTokens` = cachedContentTokenCount; `outputTokens` = candidatesTokenCount +
 * thoughtsTokenCount; `reasoningTokens` = thoughtsTokenCount. Fields Google did not send stay absent.
 * Returns `undefined` when the object carries no token count at all (Vertex sends
 * `{"trafficType": …}` alone on intermediate chunks).
 */
export function mapUsage(u: unknown): Usage | undefined {
  if (typeof u !== "object" || u === null) return undefined;
  const m = u as Record<string, unknown>;
  const prompt = tokenCount(m.promptTokenCount);
  const cached = tokenCount(m.cachedContentTokenCount);
  const cand = tokenCount(m.candidatesTokenCount);
  const thoughts = tokenCount(m.thoughtsTokenCount);
  const toolPrompt = tokenCount(m.toolUsePromptTokenCount);
  if (prompt === undefined && cand === undefined && thoughts === undefined && cached === undefined) return undefined;
  const out: Usage = {};
  if (prompt !== undefined) out.inputTokens = Math.max(0, prompt - (cached ?? 0)) + (toolPrompt ?? 0);
  if (cached !== undefined) out.cacheReadTokens = cached;
  if (cand !== undefined || thoughts !== undefined) out.outputTokens = (cand ?? 0) + (thoughts ?? 0);
  if (thoughts !== undefined) out.reasoningTokens = thoughts;
  return out;
}

/** Whether two usage snapshots say the same. */
export function sameUsage(a: Usage | undefined, b: Usage): boolean {
  return (
    a !== undefined &&
    a.inputTokens === b.inputTokens &&
    a.outputTokens === b.outputTokens &&
    a.cacheReadTokens === b.cacheReadTokens &&
    a.cacheWriteTokens === b.cacheWriteTokens &&
    a.reasoningTokens === b.reasoningTokens
  );
}

// ---------------------------------------------------------------------------------------------
// Client side: stop reasons, usage, opaque state (SPEC F-8)
// ---------------------------------------------------------------------------------------------

/**
 * Hub stop reason → the `finishReason` a Gemini client gets (REFERENCE §4.2, §5.1): a turn that ended
 * in tool calls says `STOP`, as Gemini itself does (clients derive tool use from the functionCall
 * parts); `max_tokens` → `MAX_TOKENS`; `refusal` → `SAFETY`; `context_window_exceeded` →
 * `MAX_TOKENS` (the reply was cut by a token limit); `other` → `OTHER`; `pause_turn` (Anthropic paused
 * a long server-tool turn; the client sends the reply back to go on) → `STOP`, REFERENCE §5.1's table
 * (until 2026-12-07 `OTHER`, which Gemini CLI shows as "Response stopped for other reasons."). The
 * same turn reaches a Chat client as `stop` (openai-chat/mapping.ts `stopToChat`) and a Responses
 * client as `incomplete`.
 */
export function finishReasonToGemini(reason: StopReason): string {
  switch (reason) {
    case "end_turn":
    case "tool_use":
    case "stop_sequence":
    case "pause_turn":
      return "STOP";
    case "max_tokens":
    case "context_window_exceeded":
      return "MAX_TOKENS";
    case "refusal":
      return "SAFETY";
    case "other":
      return "OTHER";
  }
}

/**
 * Hub usage → `usageMetadata` (REFERENCE §5.10), every counter an integer: `promptTokenCount` = input +
 * cache read + cache write (Gemini's prompt count includes cached tokens); `cachedContentTokenCount` =
 * cache read (only when known); `candidatesTokenCount` = output − reasoning; `thoughtsTokenCount` =
 * reasoning (only when non-zero); `totalTokenCount` = prompt + candidates + thoughts.
 *
 * Only what the provider reported: the prompt counts when an input count is known, the candidate and
 * thought counts when the output count is, the total when both are; undefined (no `usageMetadata`,
 * which the google-genai SDKs type as optional) when the provider reported no usage at all, rather
 * than zeros a client would read as a free, empty reply.
 */
export function usageToGemini(u: Usage): Record<string, number> | undefined {
  const int = (n: number | undefined) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);
  const promptKnown = u.inputTokens !== undefined || u.cacheReadTokens !== undefined || u.cacheWriteTokens !== undefined;
  const outputKnown = u.outputTokens !== undefined;
  if (!promptKnown && !outputKnown) return undefined;
  const cached = int(u.cacheReadTokens);
  const prompt = int(u.inputTokens) + cached + int(u.cacheWriteTokens);
  const thoughts = Math.min(int(u.reasoningTokens), int(u.outputTokens));
  const candidates = int(u.outputTokens) - thoughts;
  const out: Record<string, number> = {};
  if (promptKnown) out.promptTokenCount = prompt;
  if (outputKnown) out.candidatesTokenCount = candidates;
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  if (cached > 0) out.cachedContentTokenCount = cached;
  if (promptKnown && outputKnown) out.totalTokenCount = prompt + candidates + thoughts;
  return out;
}

/**
 * Prefix that marks a `thoughtSignature` minted by a provider family other than `gemini`, when
 * switchyard hands it to a Gemini client: `sy|<family>|<value>` (the same tag the Anthropic client side
 * uses; `|` is not in the base64 alphabet, so a real Gemini signature never starts with it). The
 * client sends the string back unchanged and {@link readGeminiSignature} recovers the family (SPEC F-8).
 */
export const SIGNATURE_TAG = OPAQUE_TAG;

/** Placeholders Google documents for history without a real signature (REFERENCE §4.3): no state. */
const PLACEHOLDER_SIGNATURES = new Set(["skip_thought_signature_validator", "context_engineering_is_the_way_to_go"]);

/** Hub {@link Opaque} → the `thoughtSignature` a Gemini client sees (raw for `gemini`, tagged otherwise). */
export function writeGeminiSignature(o: Opaque): string {
  return writeTaggedOpaque(o, "gemini");
}

/**
 * A `thoughtSignature` from a Gemini client body → hub {@link Opaque}, or undefined for Google's
 * documented placeholders (Gemini CLI puts `skip_thought_signature_validator` on every call that came
 * without a signature: it carries no reasoning state). Untagged values are `gemini`; tagged values get
 * their family back; a malformed tag is kept verbatim as `gemini`.
 */
export function readGeminiSignature(value: string): Opaque | undefined {
  if (value.length === 0 || PLACEHOLDER_SIGNATURES.has(value)) return undefined;
  return readTaggedOpaque(value, "gemini");
}

// ---------------------------------------------------------------------------------------------
// Log probabilities
// ---------------------------------------------------------------------------------------------

/** A `LogprobsResult.Candidate` → hub token; proto3 JSON leaves out a 0 `logProbability` and an empty `token`. */
function readCandidate(v: unknown): TokenAlternative | undefined {
  if (!isObj(v)) return undefined;
  return { token: typeof v.token === "string" ? v.token : "", logprob: typeof v.logProbability === "number" ? v.logProbability : 0 };
}

/**
 * A candidate's `logprobsResult` → hub tokens (ai.google.dev/api/generate-content#LogprobsResult):
 * `chosenCandidates[i]` `{token, tokenId, logProbability}` is token i, `topCandidates[i].candidates`
 * (sorted by log probability, best first) its alternatives. In a stream each chunk's result covers
 * that chunk's tokens. Undefined when there are no chosen candidates.
 */
export function readGeminiLogprobs(r: unknown): TokenLogprob[] | undefined {
  if (!isObj(r) || !Array.isArray(r.chosenCandidates) || r.chosenCandidates.length === 0) return undefined;
  const tops = Array.isArray(r.topCandidates) ? r.topCandidates : undefined;
  const out: TokenLogprob[] = [];
  for (let i = 0; i < r.chosenCandidates.length; i++) {
    const t = readCandidate(r.chosenCandidates[i]) as TokenLogprob | undefined;
    if (!t) continue;
    const top = tops?.[i];
    if (isObj(top) && Array.isArray(top.candidates) && top.candidates.length > 0) {
      const alts: TokenAlternative[] = [];
      for (const c of top.candidates) {
        const a = readCandidate(c);
        if (a) alts.push(a);
      }
      if (alts.length > 0) t.top = alts;
    }
    out.push(t);
  }
  return out.length > 0 ? out : undefined;
}

/**
 * Hub tokens → a Gemini `logprobsResult` (`topCandidates` first, as Gemini writes it, only when some
 * token has alternatives; then `chosenCandidates`). No `tokenId`: other formats do not carry one.
 */
export function writeGeminiLogprobs(list: readonly TokenLogprob[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (list.some((t) => t.top !== undefined)) {
    out.topCandidates = list.map((t) => ({ candidates: (t.top ?? []).map((a) => ({ token: a.token, logProbability: a.logprob })) }));
  }
  out.chosenCandidates = list.map((t) => ({ token: t.token, logProbability: t.logprob }));
  return out;
}
