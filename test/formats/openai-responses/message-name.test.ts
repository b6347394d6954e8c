/**
 * Found by the request-features tryout (session 45; fixed that session): a Chat client's message `name`
 * (who said it, in a conversation of several users or agents) reaches an OpenAI Responses provider
 * without the name and without a word: the input message has no `name` field, and the built request's
 * warnings are empty (the client's `X-Switchyard-Warning` header is absent, seen end to end). The
 * Anthropic and Gemini lanes drop the same name with a `dropped_field` warning. Expected (SPEC F-2):
 * a warning naming the dropped message name. Failed for that reason before the fix (session 45).
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

test("a Chat message name dropped on the Responses lane is named in a warning, as on the Anthropic and Gemini lanes", () => {
  const body = { model: "m", messages: [{ role: "user", name: "alice", content: "I vote yes" }, { role: "user", name: "bob", content: "I vote no" }] };
  const built = translateBody("openai-chat", body, "openai-responses", "openai-responses", "gpt-5");
  expect(JSON.stringify(built.body).includes("alice")).toBe(false); // the Responses input has no slot for it
  expect(built.warnings.filter((w) => w.code === "dropped_field" && /name/i.test(w.message)).length).toBeGreaterThan(0);
  // the other lanes, for comparison
  for (const [to, kind] of [["anthropic-messages", "anthropic"], ["gemini", "gemini"]] as const) {
    expect(translateBody("openai-chat", body, to, kind, "x").warnings.some((w) => w.code === "dropped_field" && /name/i.test(w.message)), to).toBe(true);
  }
});
