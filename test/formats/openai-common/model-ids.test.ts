/**
 * OpenAI model ids whose rules differ from their family's (formats/openai-common/models.ts), and the
 * top effort per model: `gpt-5-search-api` and o1-mini take no reasoning effort (OpenAI answers 400
 * "Unrecognized request argument supplied: reasoning_effort" / "Unsupported parameter:
 * 'reasoning_effort' is not supported with this model."); `codex-mini-latest` is a reasoning model (a
 * fine-tuned o4-mini, OpenAI's model page), so it gets no `top_p`; `xhigh` only from
 * gpt-5.1-codex-max on ("xhigh is supported for all models after gpt-5.1-codex-max"), and only for
 * OpenAI's own API; a third-party Chat server's cache_control warning does not say OpenAI caches.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const anthropic = (extra: Record<string, unknown>) => ({ model: "m", max_tokens: 1000, messages: [{ role: "user", content: "hi" }], ...extra });
const messages = (built: { warnings: Array<{ message: string }> }) => built.warnings.map((w) => w.message);

describe("models that take no reasoning effort", () => {
  for (const model of ["gpt-5-search-api", "gpt-5-search-api-2025-10-14", "o1-mini"]) {
    test(`${model}: a thinking budget sends no reasoning_effort, named; sampling is still a reasoning model's`, () => {
      const built = translateBody("anthropic-messages", anthropic({ temperature: 0.2, thinking: { type: "enabled", budget_tokens: 4096 } }), "openai-chat", "openai", model);
      expect(built.body.reasoning_effort).toBeUndefined();
      expect(built.body.temperature).toBeUndefined();
      expect(messages(built)).toContain(`${model} takes no reasoning effort: reasoning effort "medium" not sent.`);
    });

    test(`${model}: thinking disabled sends no effort and says reasoning could not be switched off`, () => {
      const built = translateBody("anthropic-messages", anthropic({ thinking: { type: "disabled" } }), "openai-chat", "openai", model);
      expect(built.body.reasoning_effort).toBeUndefined();
      expect(messages(built)).toEqual([`${model} takes no reasoning effort; reasoning could not be switched off`]);
    });
  }

  test("o1 and o3-mini still get the effort", () => {
    for (const model of ["o1", "o3-mini"]) {
      const built = translateBody("anthropic-messages", anthropic({ thinking: { type: "enabled", budget_tokens: 4096 } }), "openai-chat", "openai", model);
      expect(built.body.reasoning_effort, model).toBe("medium");
    }
  });
});

describe("codex-mini-latest is a reasoning model", () => {
  test("no top_p or temperature 0.2 (named), the encrypted include with store false, effort low when thinking is disabled", () => {
    const built = translateBody("anthropic-messages", anthropic({ temperature: 0.2, top_p: 0.9 }), "openai-responses", "openai-responses", "codex-mini-latest");
    expect([built.body.temperature, built.body.top_p, built.body.include]).toEqual([undefined, undefined, ["reasoning.encrypted_content"]]);
    expect(messages(built).some((m) => m.startsWith("codex-mini-latest is an OpenAI reasoning model") && m.includes("top_p 0.9"))).toBe(true);
    const off = translateBody("anthropic-messages", anthropic({ thinking: { type: "disabled" } }), "openai-responses", "openai-responses", "codex-mini-latest");
    expect((off.body.reasoning as { effort?: string }).effort).toBe("low");
  });
});

describe("effort max / xhigh per model", () => {
  const maxEffort = anthropic({ thinking: { type: "adaptive" }, output_config: { effort: "max" } });
  const responsesEffort = (kind: "openai-responses" | "codex", model: string) =>
    (translateBody("anthropic-messages", maxEffort, "openai-responses", kind, model).body.reasoning as { effort?: string } | undefined)?.effort;

  test("high, with a changed_field warning, for the models before gpt-5.1-codex-max", () => {
    for (const model of ["gpt-5-mini", "gpt-5-codex", "gpt-5-pro", "gpt-5.1-codex", "gpt-5.1-codex-mini", "o4-mini", "codex-mini-latest", "openai/o3"]) {
      const built = translateBody("anthropic-messages", maxEffort, "openai-responses", "openai-responses", model);
      expect((built.body.reasoning as { effort?: string }).effort, model).toBe("high");
      expect(built.warnings.filter((w) => w.code === "changed_field").map((w) => w.message), model).toEqual([
        `${model} takes reasoning effort up to high (xhigh only from gpt-5.1-codex-max on); effort max was sent as high.`,
      ]);
    }
    expect(responsesEffort("codex", "gpt-5.1-codex")).toBe("high");
  });

  test("xhigh for gpt-5.1-codex-max, gpt-5.2 on, and an id this code does not know", () => {
    for (const model of ["gpt-5.1-codex-max", "gpt-5.2-codex", "gpt-5.4-mini", "my-finetune"]) expect(responsesEffort("openai-responses", model), model).toBe("xhigh");
  });

  test("a third-party Chat server's o3 keeps xhigh (OpenRouter takes it)", () => {
    expect(translateBody("anthropic-messages", maxEffort, "openai-chat", "openai-compatible", "openai/o3").body.reasoning_effort).toBe("xhigh");
  });
});

describe("cache_control towards Chat, per kind", () => {
  const cached = anthropic({ system: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }] });
  const said = (kind: "openai" | "openai-compatible", model: string) =>
    translateBody("anthropic-messages", cached, "openai-chat", kind, model).warnings.filter((w) => w.code === "dropped_cache_control").map((w) => w.message);

  test("OpenAI: it caches prefixes by itself; a third-party server: one that caches only at marked points does not cache", () => {
    expect(said("openai", "gpt-4.1")).toEqual(["Chat Completions has no per-block prompt-cache markers (OpenAI caches prompt prefixes by itself); cache_control was not sent."]);
    const compat = said("openai-compatible", "anthropic/claude-sonnet-4.5");
    expect(compat).toHaveLength(1);
    expect(compat[0]).not.toContain("OpenAI caches");
    expect(compat[0]).toContain("OpenRouter");
  });
});
