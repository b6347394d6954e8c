/**
 * Small Gemini ↔ hub vocabulary maps shared by the decoder, decodeResponse and the tap.
 */
import type { StopReason, Usage } from "../hub.ts";
import { finiteNumber } from "../json.ts";

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
  const prompt = finiteNumber(m.promptTokenCount);
  const cached = finiteNumber(m.cachedContentTokenCount);
  const cand = finiteNumber(m.candidatesTokenCount);
  const thoughts = finiteNumber(m.thoughtsTokenCount);
  const toolPrompt = finiteNumber(m.toolUsePromptTokenCount);
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
