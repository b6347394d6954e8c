/**
 * Found by the request-features tryout (session 45; fixed that session): fields the target format has under
 * the same meaning are dropped with a warning that says the target has no equivalent.
 * - A Gemini client's `generationConfig.seed`, `presencePenalty`, `frequencyPenalty` reach an OpenAI
 *   Chat provider as nothing ("Fields with no Chat Completions equivalent were dropped:
 *   generationConfig.seed, …"), though Chat Completions takes `seed`, `presence_penalty`,
 *   `frequency_penalty`; the other way (a Chat client to Gemini) is mapped (formats/gemini/lost-fields.ts).
 * - A Chat client's `safety_identifier` (sent with `user`) reaches an OpenAI Responses provider as
 *   nothing ("Fields with no Responses equivalent were dropped: safety_identifier."), though the
 *   Responses API takes `safety_identifier` (OpenAI API reference, Create a model response).
 * Expected: each sent under the target's name, with no dropped_field warning. Failed for that reason before the fix (session 45).
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../support/translate-body.ts";

describe("fields the target has are sent, not named as having no equivalent", () => {
  test("Gemini client seed and penalties → OpenAI Chat seed, presence_penalty, frequency_penalty", () => {
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { seed: 7, presencePenalty: 0.5, frequencyPenalty: 0.25 } };
    const built = translateBody("gemini", body, "openai-chat", "openai", "gpt-4.1");
    expect({ seed: built.body.seed, presence_penalty: built.body.presence_penalty, frequency_penalty: built.body.frequency_penalty }).toEqual({ seed: 7, presence_penalty: 0.5, frequency_penalty: 0.25 });
    expect(built.warnings.filter((w) => w.code === "dropped_field")).toEqual([]);
  });

  test("Chat client safety_identifier (with user) → OpenAI Responses safety_identifier", () => {
    const body = { model: "m", messages: [{ role: "user", content: "hi" }], user: "u-2", safety_identifier: "sid-3" };
    const built = translateBody("openai-chat", body, "openai-responses", "openai-responses", "gpt-5");
    expect(built.body.safety_identifier).toBe("sid-3");
    expect(built.warnings.filter((w) => w.code === "dropped_field")).toEqual([]);
  });
});
