/**
 * Found by review (session 45; fixed that session): an Anthropic or Gemini client's stop sequences towards an
 * OpenAI reasoning model on Chat Completions (kind `openai`, o3 / gpt-5) are all emulated by the gateway
 * (BuiltRequest.stopsEmulated: the body has no `stop`, pipeline/commit.ts cuts the reply at every one of
 * them), but the Chat builder first trims the list to OpenAI's 4 and warns "OpenAI accepts at most 4
 * stop sequences; 2 were dropped." (formats/openai-chat/build.ts: the trim and its warning run before
 * openai-common/models.ts `dropRefusedFields` takes `stop` out). The client is told two of its
 * sequences were dropped while the reply is in fact cut at all six. Expected: no such warning when the
 * stops are emulated (the model gets none, the gateway applies all). Failed for that reason before the fix.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const STOPS = ["A1", "B2", "C3", "D4", "E5", "F6"];

test("six stop sequences to o3 on Chat: emulated, and no warning that two were dropped", () => {
  const built = translateBody("anthropic-messages", { model: "m", max_tokens: 100, stop_sequences: STOPS, messages: [{ role: "user", content: "hi" }] }, "openai-chat", "openai", "o3");
  expect(built.body.stop).toBeUndefined();
  expect(built.stopsEmulated).toBe(true);
  expect(built.warnings.map((w) => w.message).filter((m) => /stop sequences/.test(m))).toEqual([]);
});
