/**
 * The usage object of a Responses reply's terminal event and whole body, written from a template
 * (common.ts responsesUsageJson, docs/performance.md item 193): the same text as `JSON.stringify` of
 * `toResponsesUsage`, for the counters a provider reports and for the odd ones a broken provider could
 * (fractions, negatives, NaN, numbers whose sum is not finite).
 */
import { describe, expect, test } from "bun:test";
import type { Usage } from "../../../formats/hub.ts";
import { responsesUsageJson, toResponsesUsage } from "../../../formats/openai-responses/common.ts";

const USAGES: Usage[] = [
  {},
  { inputTokens: 12, outputTokens: 34 },
  { inputTokens: 12, outputTokens: 34, cacheReadTokens: 5, cacheWriteTokens: 6, reasoningTokens: 7 },
  { inputTokens: 1.4, outputTokens: 2.6, cacheReadTokens: 0.5 },
  { inputTokens: -3, outputTokens: -0.2 },
  { inputTokens: NaN, outputTokens: Infinity, reasoningTokens: -Infinity },
  { inputTokens: 1e21, outputTokens: 2 ** 53 + 2 },
  { inputTokens: Number.MAX_VALUE, outputTokens: Number.MAX_VALUE },
  { inputTokens: Number.MAX_VALUE, cacheReadTokens: Number.MAX_VALUE, outputTokens: 1 },
];

describe("responsesUsageJson", () => {
  test("is JSON.stringify(toResponsesUsage(u)) for every usage", () => {
    for (const u of USAGES) expect(responsesUsageJson(u)).toBe(JSON.stringify(toResponsesUsage(u)));
  });
});
