/**
 * OpenAI model rules the builders apply to what a client asked (formats/openai-common/models.ts):
 * - a Chat client's OpenRouter-style `reasoning: {effort}` carried to a Responses upstream goes through
 *   the same `topEffortFor` rules as the request's own effort (xhigh → high for gpt-5, which refuses
 *   xhigh: OpenAI's API reference "xhigh is supported for all models after gpt-5.1-codex-max");
 * - gpt-5-pro reasons at `high` only ("The gpt-5-pro model defaults to (and only supports) high
 *   reasoning effort", OpenAI's API reference): a budget that buckets lower goes to it as high;
 * - `verbosity` other than `medium` goes to OpenAI's own API for the gpt-5 family only (gpt-4o: 400
 *   "Unsupported value: 'verbosity' does not support 'low' with this model. Supported values are:
 *   'medium'.", google-deepmind/concordia#164; gpt-5-chat-latest likewise, enricoros/big-AGI#930); a
 *   Chat client's own is sent as it came.
 * Each failed before the fix.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const chat = (over: Record<string, unknown>) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...over });
const anthropic = (budget: number) => ({ model: "m", max_tokens: 32000, thinking: { type: "enabled", budget_tokens: budget }, messages: [{ role: "user", content: "hi" }] });
const messages = (ws: Array<{ code: string; message: string }>) => ws.map((w) => `${w.code}: ${w.message}`);

test("a Chat client's reasoning {effort: xhigh} reaches a Responses gpt-5 as high, with a changed_field warning", () => {
  const out = translateBody("openai-chat", chat({ reasoning: { effort: "xhigh" } }), "openai-responses", "openai-responses", "gpt-5");
  expect((out.body.reasoning as { effort: string }).effort).toBe("high");
  expect(messages(out.warnings)).toContain(
    "changed_field: gpt-5 takes reasoning effort up to high (xhigh only from gpt-5.1-codex-max on); effort xhigh was sent as high.",
  );
  // gpt-5.2 takes xhigh; a later chat model takes medium only
  expect((translateBody("openai-chat", chat({ reasoning: { effort: "xhigh" } }), "openai-responses", "openai-responses", "gpt-5.2").body.reasoning as { effort: string }).effort).toBe("xhigh");
  expect((translateBody("openai-chat", chat({ reasoning: { effort: "low" } }), "openai-responses", "openai-responses", "gpt-5.2-chat-latest").body.reasoning as { effort: string }).effort).toBe("medium");
});

test("a thinking budget that buckets to low or medium goes to gpt-5-pro as high on Responses and Chat; gpt-5.2-pro keeps it", () => {
  const resp = translateBody("anthropic-messages", anthropic(4096), "openai-responses", "openai-responses", "gpt-5-pro");
  expect((resp.body.reasoning as { effort: string }).effort).toBe("high");
  expect(messages(resp.warnings)).toContain("changed_field: gpt-5-pro reasons at high effort only; effort medium was sent as high.");
  const dated = translateBody("anthropic-messages", anthropic(1024), "openai-chat", "openai", "gpt-5-pro-2025-10-06");
  expect(dated.body.reasoning_effort).toBe("high");
  expect(messages(dated.warnings)).toContain("changed_field: gpt-5-pro-2025-10-06 reasons at high effort only; effort low was sent as high.");
  expect(translateBody("anthropic-messages", anthropic(4096), "openai-chat", "openai", "gpt-5.2-pro").body.reasoning_effort).toBe("medium");
  // a third-party server's model keeps what the client asked
  expect(translateBody("anthropic-messages", anthropic(4096), "openai-chat", "openai-compatible", "openai/gpt-5-pro").body.reasoning_effort).toBe("medium");
});

test("verbosity low goes to OpenAI's gpt-4.1 on neither API (warned); medium does; a gpt-5 model and a Chat client's own get it", () => {
  const resp = (v: string) => ({ model: "m", input: "hi", text: { verbosity: v } });
  const toChat = translateBody("openai-responses", resp("low"), "openai-chat", "openai", "gpt-4.1");
  expect("verbosity" in toChat.body).toBe(false);
  expect(messages(toChat.warnings)).toContain("dropped_field: gpt-4.1 takes verbosity medium only (the gpt-5 models take low and high); verbosity low was not sent.");
  expect(translateBody("openai-responses", resp("medium"), "openai-chat", "openai", "gpt-4.1").body.verbosity).toBe("medium");
  expect(translateBody("openai-responses", resp("low"), "openai-chat", "openai", "gpt-5-mini").body.verbosity).toBe("low");

  const fromChat = translateBody("openai-chat", chat({ verbosity: "high" }), "openai-responses", "openai-responses", "gpt-4.1");
  expect(fromChat.body.text).toBeUndefined();
  expect(messages(fromChat.warnings)).toContain("dropped_field: gpt-4.1 takes verbosity medium only (the gpt-5 models take low and high); verbosity high was not sent.");
  expect(translateBody("openai-chat", chat({ verbosity: "high" }), "openai-responses", "openai-responses", "gpt-5").body.text).toEqual({ verbosity: "high" });

  // gpt-5's own chat model takes medium only (big-AGI#930, llmgateway#2989); the later chat models take low
  expect("verbosity" in translateBody("openai-responses", resp("low"), "openai-chat", "openai", "gpt-5-chat-latest").body).toBe(false);
  expect(translateBody("openai-responses", resp("low"), "openai-chat", "openai", "gpt-5.1-chat-latest").body.verbosity).toBe("low");

  // a Chat client's own field to its own kind goes as it came (the native lane sends its bytes untouched)
  const own = translateBody("openai-chat", chat({ verbosity: "low" }), "openai-chat", "openai", "gpt-4.1");
  expect(own.body.verbosity).toBe("low");
});
