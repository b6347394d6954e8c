/**
 * Found by review (session 45; fixed that session): an Anthropic client's `output_config.effort: "max"`
 * becomes `xhigh` for every OpenAI model (formats/openai-chat/build.ts and the Responses builder: "max →
 * xhigh"), but only gpt-5.1-codex-max and gpt-5.2 on take `xhigh`; gpt-5, o3 and gpt-5.1 answer 400
 * "Unsupported value: 'xhigh' … Supported values are: …" (their accepted efforts: gpt-5 minimal/low/
 * medium/high, gpt-5.1 none/low/medium/high, the o-series low/medium/high; OpenAI's API reference for
 * `reasoning_effort`: "xhigh is supported for all models after gpt-5.1-codex-max"). openai-common/
 * models.ts now knows these families (dropRefusedFields, effortForDisabledReasoning) but does not
 * bound the top effort; the per-model clamp of src/providers/capabilities.ts only acts when the
 * config lists `reasoning_efforts` (OpenAI's /v1/models reports none). Expected: gpt-5, o3 and gpt-5.1
 * get `high` (the most they take) with a warning, gpt-5.2 keeps `xhigh`. Failed for that reason before the fix.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const maxEffort = { model: "m", max_tokens: 1000, thinking: { type: "adaptive" }, output_config: { effort: "max" }, messages: [{ role: "user", content: "hi" }] };

test("effort max: gpt-5, o3, gpt-5.1 get high (they refuse xhigh); gpt-5.2 keeps xhigh", () => {
  const chat = (model: string) => translateBody("anthropic-messages", maxEffort, "openai-chat", "openai", model).body.reasoning_effort;
  const responses = (model: string) => (translateBody("anthropic-messages", maxEffort, "openai-responses", "openai-responses", model).body.reasoning as { effort?: string } | undefined)?.effort;
  for (const model of ["gpt-5", "o3", "gpt-5.1"]) expect([chat(model), responses(model)], model).toEqual(["high", "high"]);
  expect([chat("gpt-5.2"), responses("gpt-5.2")]).toEqual(["xhigh", "xhigh"]);
});
