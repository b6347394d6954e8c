/**
 * OpenAI's later chat models (`gpt-5.1-chat-latest`, `gpt-5.2-chat-latest`, …) reason at medium effort
 * only (OpenAI: "Unsupported value: 'reasoning_effort' does not support 'high' with this model.
 * Supported values are: 'medium'." for gpt-5.2-chat-latest, egoist/chatwise-releases#1257). A client
 * that switched reasoning off (Anthropic `thinking: disabled`, Gemini `thinkingBudget: 0`) got
 * `reasoning_effort: "none"` for them (the gpt-5.N rule), which OpenAI refuses. Now they get no effort
 * and a note; `gpt-5-chat-latest` (no reasoning) and `gpt-5.1` (effort none) are unchanged, and the
 * `-chat-latest` models are not classified as models that never reason (their temperature is kept as
 * before, their effort when the client asks for one too).
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const off = { model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }], thinking: { type: "disabled" } };

test("reasoning switched off: gpt-5.N-chat-latest gets no effort none, and a note says why (Chat and Responses)", () => {
  for (const model of ["gpt-5.1-chat-latest", "gpt-5.2-chat-latest", "openai/gpt-5.3-chat-latest"]) {
    const chat = translateBody("anthropic-messages", off, "openai-chat", "openai", model);
    expect(chat.body.reasoning_effort, model).toBeUndefined();
    expect(chat.warnings, model).toContainEqual({ code: "changed_field", message: `${model} only reasons at medium effort; reasoning could not be switched off` });
    const resp = translateBody("anthropic-messages", off, "openai-responses", "openai-responses", model);
    expect((resp.body.reasoning as { effort?: string } | undefined)?.effort, model).toBeUndefined();
  }
  const gemini = translateBody("gemini", { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }, "openai-chat", "openai", "gpt-5.2-chat-latest");
  expect(gemini.body.reasoning_effort).toBeUndefined();
});

test("gpt-5.1 still gets none, gpt-5-chat-latest no effort and no note, gpt-6 as before", () => {
  expect(translateBody("anthropic-messages", off, "openai-chat", "openai", "gpt-5.1").body.reasoning_effort).toBe("none");
  const chat5 = translateBody("anthropic-messages", off, "openai-chat", "openai", "gpt-5-chat-latest");
  expect(chat5.body.reasoning_effort).toBeUndefined();
  expect(chat5.warnings.filter((w) => w.code === "changed_field")).toEqual([]);
  const six = translateBody("anthropic-messages", { ...off, temperature: 0.2 }, "openai-chat", "openai", "gpt-6");
  expect([six.body.reasoning_effort, six.body.temperature]).toEqual([undefined, 0.2]);
});
