/**
 * What OpenAI's own API refuses for a model, taken out of a translated request (formats/openai-common/
 * models.ts `dropRefusedFields`), and where it is not: the boundaries of the fixes for the reasoning
 * models' sampling settings and the plain models' reasoning fields, and the fields the Chat and
 * Responses builders now carry from another client format (service tiers, metadata, seed, penalties).
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const gemini = (generationConfig: Record<string, unknown>) => ({ contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig });
const anthropic = (extra: Record<string, unknown>) => ({ model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }], ...extra });
const messages = (built: { warnings: Array<{ message: string }> }) => built.warnings.map((w) => w.message);

describe("only OpenAI's own API and OpenAI's model ids", () => {
  test("an openai-compatible server's gpt-5 keeps the client's temperature and top_p; its gpt-4.1 keeps the effort", () => {
    const sampling = translateBody("gemini", gemini({ temperature: 0.3, topP: 0.9 }), "openai-chat", "openai-compatible", "gpt-5");
    expect([sampling.body.temperature, sampling.body.top_p]).toEqual([0.3, 0.9]);
    const effort = translateBody("anthropic-messages", anthropic({ thinking: { type: "enabled", budget_tokens: 4096 } }), "openai-chat", "openai-compatible", "gpt-4.1");
    expect(effort.body.reasoning_effort).toBe("medium");
  });

  test("an id that is not OpenAI's (or a later chat model this code does not classify) keeps both", () => {
    for (const model of ["my-finetune", "gpt-5.1-chat-latest"]) {
      const built = translateBody("anthropic-messages", anthropic({ temperature: 0.2, thinking: { type: "enabled", budget_tokens: 4096 } }), "openai-chat", "openai", model);
      expect([built.body.temperature, built.body.reasoning_effort], model).toEqual([0.2, "medium"]);
    }
  });

  test("a routing prefix is ignored: openai/o3 is a reasoning model", () => {
    const built = translateBody("anthropic-messages", anthropic({ temperature: 0.2 }), "openai-chat", "openai", "openai/o3");
    expect(built.body.temperature).toBeUndefined();
  });
});

describe("a reasoning model", () => {
  test("gpt-5.1 at reasoning effort none keeps temperature and top_p (OpenAI's latest-model guide); gpt-5 at any effort does not", () => {
    const off = translateBody("anthropic-messages", anthropic({ temperature: 0.2, top_p: 0.9, thinking: { type: "disabled" } }), "openai-chat", "openai", "gpt-5.1");
    expect([off.body.reasoning_effort, off.body.temperature, off.body.top_p]).toEqual(["none", 0.2, 0.9]);
    const on = translateBody("anthropic-messages", anthropic({ temperature: 0.2, thinking: { type: "enabled", budget_tokens: 2048 } }), "openai-responses", "openai-responses", "gpt-5.1");
    expect([(on.body.reasoning as { effort?: string }).effort, on.body.temperature]).toEqual(["low", undefined]);
    const gpt5 = translateBody("anthropic-messages", anthropic({ temperature: 0.2, thinking: { type: "disabled" } }), "openai-chat", "openai", "gpt-5");
    expect([gpt5.body.reasoning_effort, gpt5.body.temperature]).toEqual(["minimal", undefined]);
  });

  test("one warning names what was not sent, with its values", () => {
    const built = translateBody("gemini", gemini({ temperature: 1, topP: 0.95, stopSequences: ["END"], presencePenalty: 0.5, seed: 3 }), "openai-chat", "openai", "o3");
    expect(built.body).not.toHaveProperty("stop");
    expect(built.body).not.toHaveProperty("presence_penalty");
    expect(built.body.seed).toBe(3);
    expect(messages(built)).toContain("o3 is an OpenAI reasoning model, which takes temperature and top_p at 1 only, penalties at 0 only, and no logprobs or logit_bias: top_p 0.95, presence_penalty 0.5 not sent.");
    expect(built.body.temperature).toBe(1); // the default, which o3 takes: sent, not named
    // stop is not sent either, but not lost: the gateway cuts the reply at it (test/e2e/stop-sequence-emulation.test.ts)
    expect(built.stopsEmulated).toBe(true);
    expect(translateBody("gemini", gemini({ stopSequences: ["END"] }), "openai-chat", "openai", "gpt-4.1").body.stop).toEqual(["END"]);
  });

  test("logprobs: Chat's logprobs/top_logprobs and Responses' logprobs include are not sent", () => {
    const chat = translateBody("openai-chat", { model: "m", messages: [{ role: "user", content: "hi" }], logprobs: true, top_logprobs: 3 }, "openai-responses", "openai-responses", "gpt-5");
    expect([chat.body.include, chat.body.top_logprobs]).toEqual([["reasoning.encrypted_content"], undefined]);
    const gem = translateBody("gemini", gemini({ responseLogprobs: true, logprobs: 2 }), "openai-chat", "openai", "gpt-5-mini");
    expect([gem.body.logprobs, gem.body.top_logprobs]).toEqual([undefined, undefined]);
    const plain = translateBody("gemini", gemini({ responseLogprobs: true, logprobs: 2 }), "openai-chat", "openai", "gpt-4.1");
    expect([plain.body.logprobs, plain.body.top_logprobs]).toEqual([true, 2]);
  });
});

describe("fields another client format has under the same meaning", () => {
  test("a Responses client's service_tier, safety_identifier and metadata (stored) → OpenAI Chat", () => {
    const body = { model: "m", input: "hi", service_tier: "flex", safety_identifier: "sid", metadata: { team: "a" }, store: true };
    const built = translateBody("openai-responses", body, "openai-chat", "openai", "gpt-4.1");
    expect([built.body.service_tier, built.body.safety_identifier, built.body.metadata, built.body.store]).toEqual(["flex", "sid", { team: "a" }, true]);
    expect(built.warnings.filter((w) => w.code === "dropped_field")).toEqual([]);
  });

  test("metadata without store:true is not sent to Chat (OpenAI refuses it), said in a warning; a third-party server gets none of the three", () => {
    const unstored = translateBody("openai-responses", { model: "m", input: "hi", metadata: { team: "a" } }, "openai-chat", "openai", "gpt-4.1");
    expect(unstored.body.metadata).toBeUndefined();
    expect(messages(unstored)).toContain("metadata was not sent: Chat Completions takes it only with store: true.");
    const compat = translateBody("openai-responses", { model: "m", input: "hi", service_tier: "flex", safety_identifier: "sid" }, "openai-chat", "openai-compatible", "x");
    expect([compat.body.service_tier, compat.body.safety_identifier]).toEqual([undefined, undefined]);
    expect(messages(compat)).toContain("service_tier is only sent to OpenAI; it was dropped.");
  });

  test("an Anthropic client's service_tier: auto → auto, standard_only → default, on Chat and Responses", () => {
    for (const [tier, sent] of [["auto", "auto"], ["standard_only", "default"]] as const) {
      const chat = translateBody("anthropic-messages", anthropic({ service_tier: tier }), "openai-chat", "openai", "gpt-4.1");
      const resp = translateBody("anthropic-messages", anthropic({ service_tier: tier }), "openai-responses", "openai-responses", "gpt-4.1");
      expect([chat.body.service_tier, resp.body.service_tier], tier).toEqual([sent, sent]);
      expect([...chat.warnings, ...resp.warnings].filter((w) => w.code === "dropped_field"), tier).toEqual([]);
    }
  });

  test("a Gemini client's seed and penalties reach a third-party Chat server too; Responses has no such fields and says so", () => {
    const compat = translateBody("gemini", gemini({ seed: 7, frequencyPenalty: 0.25 }), "openai-chat", "openai-compatible", "x");
    expect([compat.body.seed, compat.body.frequency_penalty]).toEqual([7, 0.25]);
    const resp = translateBody("gemini", gemini({ seed: 7 }), "openai-responses", "openai-responses", "gpt-4.1");
    expect(resp.body.seed).toBeUndefined();
    expect(messages(resp)).toContain("Fields with no Responses equivalent were dropped: generationConfig.seed.");
  });
});
