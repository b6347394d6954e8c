/**
 * Found by a review (session 45): OpenAI's `gpt-5.1-chat-latest` and `gpt-5.2-chat-latest` reason, but
 * take one reasoning effort only: 400 "Unsupported value: 'high' is not supported with the
 * 'gpt-5.1-chat-latest' model. Supported values are: 'medium'." (param reasoning.effort; reported in
 * Laisky/one-api#266, and for gpt-5.2-chat in egoist/chatwise-releases#1257 and Laisky/one-api#285).
 * Claude Code's tool-use turns (thinking budget 31999 → effort high) got that 400 on every turn. Now any
 * other effort goes to them as medium, with a `changed_field` warning (openai-common/models.ts
 * `topEffortFor`, `reasonsAtMediumOnly`); a third-party server keeps what the client asked.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const claudeCodeTurn = { model: "m", max_tokens: 32000, thinking: { type: "enabled", budget_tokens: 31999 }, messages: [{ role: "user", content: "hi" }] };

test("Claude Code's budget 31999 to gpt-5.1-chat-latest / gpt-5.2-chat-latest: effort medium, with a warning (OpenAI takes medium only)", () => {
  for (const model of ["gpt-5.1-chat-latest", "gpt-5.2-chat-latest"]) {
    const chat = translateBody("anthropic-messages", claudeCodeTurn, "openai-chat", "openai", model);
    expect(chat.body.reasoning_effort, `${model} Chat`).toBe("medium");
    expect(chat.warnings.some((w) => w.code === "changed_field" && w.message.includes("medium effort only")), `${model} Chat warning`).toBe(true);
    const responses = translateBody("anthropic-messages", claudeCodeTurn, "openai-responses", "openai-responses", model);
    expect((responses.body.reasoning as { effort?: string } | undefined)?.effort, `${model} Responses`).toBe("medium");
    expect(responses.warnings.some((w) => w.code === "changed_field" && w.message.includes("medium effort only")), `${model} Responses warning`).toBe(true);
  }
});

test("an effort of medium goes without a warning; gpt-5's own gpt-5-chat-latest and a third-party server are not clamped", () => {
  const medium = { ...claudeCodeTurn, thinking: { type: "enabled", budget_tokens: 8192 } };
  const chat = translateBody("anthropic-messages", medium, "openai-chat", "openai", "gpt-5.1-chat-latest");
  expect(chat.body.reasoning_effort).toBe("medium");
  expect(chat.warnings.some((w) => w.message.includes("medium effort only"))).toBe(false);
  expect(translateBody("anthropic-messages", claudeCodeTurn, "openai-chat", "openai-compatible", "gpt-5.1-chat-latest").body.reasoning_effort).toBe("high");
  expect(translateBody("anthropic-messages", claudeCodeTurn, "openai-chat", "openai", "gpt-5-chat-latest").body.reasoning_effort).toBeUndefined();
});
