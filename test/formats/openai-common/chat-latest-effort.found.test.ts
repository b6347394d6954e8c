/**
 * Found by review (session 45, report only): OpenAI's `gpt-5.1-chat-latest` and `gpt-5.2-chat-latest`
 * reason, but take one reasoning effort only: 400 "Unsupported value: 'high' is not supported with the
 * 'gpt-5.1-chat-latest' model. Supported values are: 'medium'." (param reasoning.effort; reported in
 * Laisky/one-api#266, and for gpt-5.2-chat in egoist/chatwise-releases#1257 and Laisky/one-api#285).
 * openai-common/models.ts classifies neither (`reasonsByDefault` excludes every "-chat" id,
 * `reasonsNever` only gpt-5-chat), so the client's effort goes as asked: Claude Code's tool-use turns
 * (thinking budget 31999 → effort high) get that 400 on every turn. README "Not done yet" says these ids
 * keep what the client asked; the rule itself is now known. Expected: an effort other than medium is
 * not sent as is to these models (sent as medium with a warning, or left out). Fails today for that reason.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const claudeCodeTurn = { model: "m", max_tokens: 32000, thinking: { type: "enabled", budget_tokens: 31999 }, messages: [{ role: "user", content: "hi" }] };

test("Claude Code's budget 31999 to gpt-5.1-chat-latest / gpt-5.2-chat-latest: no effort high (OpenAI takes medium only)", () => {
  for (const model of ["gpt-5.1-chat-latest", "gpt-5.2-chat-latest"]) {
    const chat = translateBody("anthropic-messages", claudeCodeTurn, "openai-chat", "openai", model);
    expect(chat.body.reasoning_effort, `${model} Chat`).not.toBe("high");
    const responses = translateBody("anthropic-messages", claudeCodeTurn, "openai-responses", "openai-responses", model);
    expect((responses.body.reasoning as { effort?: string } | undefined)?.effort, `${model} Responses`).not.toBe("high");
  }
});
