/**
 * Fields GUI apps and SDKs send that the Responses and Gemini lanes lost or dropped without a word
 * (session 41's GUI tryout): Chat `store` and the not-stored default towards a Responses provider,
 * Chat `service_tier` / `metadata` / `reasoning` for Responses, Chat `seed` and penalties for Gemini,
 * what Gemini cannot say (tool `strict`, `additionalProperties`, message names, image `detail`, a system
 * message moved), a max_tokens raised for a thinking budget on Claude, and a prompt Gemini blocked as
 * each client reads it. Client bodies are parsed with the client's codec and built with the target's,
 * as the pipeline does; replies go through the pipeline's translated stream driver.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { BuildTarget, ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { TranslatedStreamDriver } from "../../pipeline/re-translate.ts";

const FAMILY: Partial<Record<ProviderKind, BuildTarget["family"]>> = {
  openai: "openai",
  "openai-responses": "openai",
  anthropic: "anthropic",
  gemini: "gemini",
};

/** `from` client body → provider body for a `kind` target speaking `to` (non-streamed). */
function translate(from: WireFormat, body: Record<string, unknown>, to: WireFormat, kind: ProviderKind, model = "up-model") {
  const hub = codecFor(from).parseRequest!(body);
  const target: BuildTarget = { model, kind, family: FAMILY[kind] ?? "provider:x", stream: false };
  return codecFor(to).buildRequest({ ...hub, model, stream: false }, target);
}

const chat = (over: Record<string, unknown> = {}) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...over });
const messages = (built: { warnings: Array<{ message: string }> }) => built.warnings.map((w) => w.message).join("\n");
const codes = (built: { warnings: Array<{ code: string }> }) => built.warnings.map((w) => w.code);

describe("store towards a Responses provider (OpenAI stores Responses by default, REFERENCE §3.1)", () => {
  test("Chat store:true is sent as store:true, store:false as store:false; neither is named as dropped", () => {
    for (const store of [true, false]) {
      const built = translate("openai-chat", chat({ store }), "openai-responses", "openai-responses");
      expect(built.body.store).toBe(store);
      expect(messages(built)).not.toContain("store");
    }
  });

  test("an Anthropic or Gemini client's request is sent with store:false", () => {
    const claude = translate("anthropic-messages", { model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }, "openai-responses", "openai-responses");
    expect(claude.body.store).toBe(false);
    const gemini = translate("gemini", { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, "openai-responses", "openai-responses");
    expect(gemini.body.store).toBe(false);
  });

  test("a Responses client's own store is left as it wrote it (absent stays absent)", () => {
    const none = translate("openai-responses", { model: "m", input: "hi" }, "openai-responses", "openai");
    expect("store" in none.body).toBe(false);
    const stored = translate("openai-responses", { model: "m", input: "hi", store: true }, "openai-responses", "openai");
    expect(stored.body.store).toBe(true);
  });

  test("not stored: a reasoning model is asked for encrypted reasoning, so reasoning round-trips; other models are not (they refuse the include)", () => {
    const gpt5 = translate("openai-chat", chat(), "openai-responses", "openai-responses", "gpt-5-mini");
    expect(gpt5.body.include).toEqual(["reasoning.encrypted_content"]);
    const o4 = translate("openai-chat", chat(), "openai-responses", "openai-responses", "o4-mini");
    expect(o4.body.include).toEqual(["reasoning.encrypted_content"]);
    for (const model of ["gpt-4o", "gpt-4.1-mini", "gpt-5-chat-latest"]) {
      const built = translate("openai-chat", chat(), "openai-responses", "openai-responses", model);
      expect(built.body.store, model).toBe(false);
      expect(built.body.include, model).toBeUndefined();
    }
    // A client that asked for reasoning gets the include whatever the model, as before.
    const asked = translate("openai-chat", chat({ reasoning_effort: "high" }), "openai-responses", "openai-responses", "gpt-4.1");
    expect(asked.body.include).toEqual(["reasoning.encrypted_content"]);
  });

  test("not stored: OpenAI's encrypted reasoning in the history goes back; reasoning with only an item id is dropped with a warning", () => {
    const hub = codecFor("openai-chat").parseRequest!(chat());
    hub.messages = [
      { role: "user", content: [{ type: "text", text: "q" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", text: "t", itemId: "rs_1", signature: { family: "openai", value: "gAAAA" } },
          { type: "thinking", text: "u", itemId: "rs_2" },
          { type: "text", text: "a" },
        ],
      },
      { role: "user", content: [{ type: "text", text: "more" }] },
    ];
    const built = codecFor("openai-responses").buildRequest(hub, { model: "gpt-5", kind: "openai-responses", family: "openai", stream: false });
    const input = built.body.input as Array<Record<string, unknown>>;
    expect(input.filter((i) => i.type === "reasoning")).toEqual([{ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "t" }], encrypted_content: "gAAAA" }]);
    expect(messages(built)).toContain("Reasoning items without encrypted_content cannot be replayed with store:false");
  });

  test("a Chat client's store reaches OpenAI's Chat endpoint; another client's store:true elsewhere is named as dropped", () => {
    expect(translate("openai-chat", chat({ store: true }), "openai-chat", "openai").body.store).toBe(true);
    expect(translate("openai-responses", { model: "m", input: "hi", store: false }, "openai-chat", "openai").body.store).toBe(false);
    const third = translate("openai-responses", { model: "m", input: "hi", store: true }, "openai-chat", "openai-compatible");
    expect("store" in third.body).toBe(false);
    expect(messages(third)).toContain("store is only sent to OpenAI; it was dropped.");
  });
});

describe("Chat service_tier, metadata and reasoning towards a Responses provider", () => {
  test("are carried, not named as having no equivalent", () => {
    const built = translate(
      "openai-chat",
      chat({ service_tier: "flex", metadata: { app: "librechat", conv: "c1" }, reasoning: { effort: "high", summary: "auto" } }),
      "openai-responses",
      "openai-responses",
      "o4-mini",
    );
    expect(built.body.service_tier).toBe("flex");
    expect(built.body.metadata).toEqual({ app: "librechat", conv: "c1" });
    expect(built.body.reasoning).toEqual({ effort: "high", summary: "auto" });
    expect(built.warnings).toEqual([]);
  });

  test("reasoning_effort wins over the reasoning object's effort; members Responses lacks are named", () => {
    const built = translate("openai-chat", chat({ reasoning_effort: "low", reasoning: { effort: "high", max_tokens: 2000, exclude: true } }), "openai-responses", "openai-responses");
    expect(built.body.reasoning).toEqual({ effort: "low", summary: "auto" });
    expect(messages(built)).toContain("Fields with no Responses equivalent were dropped: reasoning.max_tokens, reasoning.exclude.");
  });

  test("the other Chat fields with no Responses slot are still named", () => {
    const built = translate("openai-chat", chat({ service_tier: "flex", seed: 7 }), "openai-responses", "openai-responses");
    expect(messages(built)).toContain("Fields with no Responses equivalent were dropped: seed.");
  });
});
