/**
 * Found by review (session 45; fixed that session): towards an OpenAI model that does not reason (gpt-4.1) on
 * the Responses lane, the `dropped_field` warning of openai-common/models.ts `dropRefusedFields` names
 * "include reasoning.encrypted_content" as not sent, though the client never asked for it: the
 * Responses builder itself adds that include for any request with reasoning (store false), and the
 * rule then takes it out again and reports it as the client's. Claude Code sends no `include`; every
 * Claude Code turn routed to a Responses gpt-4.1 reads "gpt-4.1 does not reason …: reasoning effort
 * \"medium\", include reasoning.encrypted_content not sent." Expected: the warning names what the client
 * asked (its reasoning effort), not what the gateway added. Failed for that reason before the fix.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

test("Anthropic client with thinking → Responses gpt-4.1: the warning names no include the client did not send", () => {
  const body = { model: "m", max_tokens: 100, thinking: { type: "enabled", budget_tokens: 4096 }, messages: [{ role: "user", content: "hi" }] };
  const built = translateBody("anthropic-messages", body, "openai-responses", "openai-responses", "gpt-4.1");
  expect(built.body.reasoning).toBeUndefined();
  expect(built.body.include).toBeUndefined();
  const said = built.warnings.map((w) => w.message).filter((m) => m.includes("does not reason"));
  expect(said).toHaveLength(1);
  expect(said[0]).not.toContain("include");
});
