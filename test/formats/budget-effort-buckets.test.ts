/**
 * Found by the request-features tryout (session 45; fixed that session): a thinking budget (an Anthropic
 * client's `thinking.budget_tokens`, a Gemini client's `thinkingConfig.thinkingBudget`) becomes an
 * OpenAI reasoning effort through two different tables. formats/openai-chat/build.ts
 * `effortFromBudget`: ≤ 2048 low, ≤ 8192 medium, else high; formats/openai-responses/build.ts
 * `effortForBudget`: < 2048 low, < 16384 medium, else high. So the same request reaches the same
 * OpenAI model with another effort depending on which of OpenAI's endpoints the provider speaks:
 * budget 2048 is `low` on Chat but `medium` on Responses, 10000 is `high` on Chat but `medium` on
 * Responses. REFERENCE §5.9's table puts 1024–2048 at low. Expected: one table, 2048 → low on both.
 * Failed for that reason before the fix (session 45).
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../support/translate-body.ts";

const anthropic = (budget: number) => ({ model: "m", max_tokens: 64000, thinking: { type: "enabled", budget_tokens: budget }, messages: [{ role: "user", content: "hi" }] });
const gemini = (budget: number) => ({ contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { thinkingConfig: { thinkingBudget: budget } } });

function efforts(from: "anthropic-messages" | "gemini", budget: number) {
  const body = from === "gemini" ? gemini(budget) : anthropic(budget);
  const chat = translateBody(from, body, "openai-chat", "openai", "gpt-5").body.reasoning_effort as string | undefined;
  const responses = (translateBody(from, body, "openai-responses", "openai-responses", "gpt-5").body.reasoning as { effort?: string } | undefined)?.effort;
  return { chat, responses };
}

describe("a thinking budget becomes the same OpenAI effort on Chat and on Responses", () => {
  test("Anthropic client: budgets 1024 … 32000 give one effort per budget on both endpoints", () => {
    for (const budget of [1024, 2048, 4096, 8192, 10000, 16384, 32000]) {
      const e = efforts("anthropic-messages", budget);
      expect(e.responses, `budget_tokens ${budget}`).toBe(e.chat);
    }
  });

  test("budget 2048 is low (REFERENCE §5.9: low = 1024–2048), from an Anthropic or a Gemini client", () => {
    expect(efforts("anthropic-messages", 2048)).toEqual({ chat: "low", responses: "low" });
    expect(efforts("gemini", 2048)).toEqual({ chat: "low", responses: "low" });
  });
});
