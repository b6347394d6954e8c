/**
 * Found by the request-features tryout (session 45; fixed that session): a translated client's reasoning
 * request reaches an OpenAI model that does not reason as `reasoning_effort` (Chat) or
 * `reasoning: {effort}` plus `include: ["reasoning.encrypted_content"]` (Responses). OpenAI's
 * non-reasoning models refuse both: 400 "Unsupported parameter: 'reasoning.effort' is not supported
 * with this model." (gpt-4.1, gpt-4o, gpt-5-chat-latest) and "Encrypted content is not supported with
 * this model." (formats/openai-common/models.ts `reasonsByDefault` says so, and the builders use it
 * only when the client asked for nothing). Claude Code asks for thinking in every request (`thinking:
 * {type: "adaptive"}` or a `budget_tokens`), Gemini CLI in every chat turn (`thinkingConfig`), so
 * pointed at gpt-4.1 or gpt-4o through switchyard every request is sent in a shape OpenAI answers 400
 * (seen end to end: an Anthropic client's thinking budget reached `oc/gpt-4.1` as `reasoning_effort:
 * "medium"`). Expected: a model that does not reason gets no reasoning field and no encrypted-content
 * include, with a warning saying reasoning was not asked for; a reasoning model (gpt-5) keeps its
 * effort. Failed for that reason before the fix (session 45).
 */
import { describe, expect, test } from "bun:test";
import { clientRequest } from "../../support/fixtures.ts";
import { translateBody } from "../../support/translate-body.ts";

const NON_REASONING = ["gpt-4.1", "gpt-4o", "gpt-5-chat-latest"];

describe("an OpenAI model that does not reason gets no reasoning request", () => {
  for (const file of ["claude-code-default.json", "claude-code-tool-use-1.json"]) {
    test(`Claude Code's ${file} → Chat and Responses`, async () => {
      const body = await clientRequest(file);
      for (const model of NON_REASONING) {
        const chat = translateBody("anthropic-messages", body, "openai-chat", "openai", model);
        expect(chat.body.reasoning_effort, `${model} on Chat`).toBeUndefined();
        const resp = translateBody("anthropic-messages", body, "openai-responses", "openai-responses", model);
        expect((resp.body.reasoning as { effort?: string } | undefined)?.effort, `${model} on Responses`).toBeUndefined();
        expect((resp.body.include as string[] | undefined) ?? [], `${model} include`).not.toContain("reasoning.encrypted_content");
        expect(chat.warnings.some((w) => /reason|think/i.test(w.message)), `${model}: a warning`).toBe(true);
      }
    });
  }

  test("Gemini CLI's thinkingConfig → gpt-4o on Chat", () => {
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } } };
    expect(translateBody("gemini", body, "openai-chat", "openai", "gpt-4o").body.reasoning_effort).toBeUndefined();
  });

  test("a reasoning model keeps the effort (gpt-5)", async () => {
    const body = await clientRequest("claude-code-tool-use-1.json");
    expect(translateBody("anthropic-messages", body, "openai-chat", "openai", "gpt-5").body.reasoning_effort).toBe("high");
  });
});
