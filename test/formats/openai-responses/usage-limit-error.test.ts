/**
 * A client key's used-up budget in the Responses format (formats/openai-responses/errors.ts errorBody):
 * the Codex backend's `usage_limit_reached` with `resets_at`, the one 429 Codex reports as a usage
 * limit ("You've hit your usage limit. Try again at …") instead of "exceeded retry limit"
 * (test/e2e/cli/over-budget.test.ts runs the real Codex). Other refusals keep OpenAI's types.
 */
import { expect, test } from "bun:test";
import { refusalError } from "../../../pipeline/key-limits.ts";
import { codecFor } from "../../../formats/index.ts";

const NOW = Date.parse("2026-12-05T01:45:50.250Z");
const responses = codecFor("openai-responses");
const chat = codecFor("openai-chat");

test("a budget used up: type usage_limit_reached, resets_at the second the message names, the gateway's code and message", () => {
  const err = refusalError("bud", { limit: "budget", retryAfterMs: 86_380_000, used: 36, max: 20, budget: { window: "1d", tokens: 20 }, resetsAt: NOW + 86_380_000 }, NOW);
  const body = responses.errorBody(err) as any;
  expect(body.error).toEqual({
    message: 'Client key "bud" has used its 1d budget of 20 tokens (36 tokens used); the window resets in 24h 0m (at 2026-12-06T01:45:30Z).',
    type: "usage_limit_reached",
    param: null,
    code: "key_budget_exceeded",
    resets_at: Date.parse("2026-12-06T01:45:30Z") / 1000,
  });
  // the Chat format has no such type: its rate limit one, as before
  const inChat = (chat.errorBody(err) as any).error;
  expect(inChat).toMatchObject({ type: "rate_limit_error", code: "key_budget_exceeded" });
  expect(inChat.resets_at).toBeUndefined();
});

test("a budget held by requests in flight, and a rate limit: OpenAI's rate_limit_exceeded, no resets_at", () => {
  const held = refusalError("bud", { limit: "budget", retryAfterMs: 1000, used: 10, max: 20, budget: { window: "1d", tokens: 20 }, inFlight: 2 }, NOW);
  const rpm = refusalError("bud", { limit: "rpm", retryAfterMs: 30_000, used: 3, max: 3 }, NOW);
  for (const err of [held, rpm]) {
    const body = responses.errorBody(err) as any;
    expect(body.error).toMatchObject({ type: "rate_limit_exceeded", code: "key_rate_limit_exceeded" });
    expect(body.error.resets_at).toBeUndefined();
  }
});
