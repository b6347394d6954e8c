/**
 * The usage a translated reply reports to its client when the provider reported none (a Chat server
 * that sends no usage chunk, a JSON reply without `usage`), in every client format (a Gemini client's
 * `usageMetadata` too), and the usage chunk a native Chat stream's `include_usage` client gets when its
 * upstream sent none (pipeline/add-usage-chunk.ts): the gateway's estimate, the same figures
 * the request's usage row records (src/limits/accounting.ts, marked estimated), instead of zeros a
 * client reads as a free, empty reply. Input: the request body's estimate (pipeline/key-limits.ts
 * `estimateInputOfRequest`: text characters / 4 plus a flat amount per image); output: the characters of
 * text, reasoning and tool arguments the reply driver counted, / 4 (output-estimate.ts
 * `estimateOutputTokens`), present only when over 0, as in the row.
 */
import type { Usage } from "../formats/hub.ts";
import { estimateOutputTokens } from "./output-estimate.ts";

/** Where a reply driver reads the request's input estimate (pipeline/commit.ts ReplyEncoderOptions), in tokens. */
export interface UsageEstimates {
  estimatedInputTokens(): number;
}

/** The estimated usage of a reply whose content counted `outputChars` characters (see the module's comment). */
export function estimateReplyUsage(source: UsageEstimates, outputChars: number): Usage {
  const output = estimateOutputTokens(outputChars);
  const input = source.estimatedInputTokens();
  return output > 0 ? { inputTokens: input, outputTokens: output } : { inputTokens: input };
}
