/**
 * Fields GUI apps and SDKs send that the Responses and Gemini lanes lost or dropped without a word
 * (session 41's GUI tryout): Chat `store` and the not-stored default towards a Responses provider,
 * Chat `service_tier` / `metadata` / `reasoning` for Responses, Chat `seed` and penalties for Gemini,
 * what Gemini cannot say (tool `strict`, `additionalProperties`, message names, image `detail`, a system
 * message moved), a max_tokens raised for a thinking budget on Claude, and a prompt Gemini blocked as
 * each client reads it (an Anthropic Messages client too, since 2026-12-07: `stop_details`). Client bodies are parsed with the client's codec and built with the target's,
 * as the pipeline does; replies go through the pipeline's translated stream driver.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { translateBody } from "../support/translate-body.ts";
import type { ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { TranslatedStreamDriver } from "../../pipeline/re-translate.ts";
import { clientRequest } from "../support/fixtures.ts";

const translate = translateBody;

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
    // A client that asked for reasoning gets the include from a model that may reason (one this code does not know)…
    const asked = translate("openai-chat", chat({ reasoning_effort: "high" }), "openai-responses", "openai-responses", "my-finetune");
    expect(asked.body.include).toEqual(["reasoning.encrypted_content"]);
    // … but not from one of OpenAI's models that do not reason, which refuse it (the gateway does not add it; the effort, which the client sent, is named).
    const plain = translate("openai-chat", chat({ reasoning_effort: "high" }), "openai-responses", "openai-responses", "gpt-4.1");
    expect([plain.body.include, plain.body.reasoning]).toEqual([undefined, undefined]);
    expect(plain.warnings.map((w) => w.message)).toContain('gpt-4.1 does not reason (OpenAI refuses reasoning fields to it): reasoning effort "high" not sent.');
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

describe("store towards Anthropic (which stores nothing to turn off)", () => {
  test("a Chat or Responses client's store:true is named as dropped; store:false loses nothing and is not", () => {
    const claude = (from: WireFormat, body: Record<string, unknown>) => translate(from, body, "anthropic-messages", "anthropic");
    for (const [from, body] of [["openai-chat", chat({ store: true })], ["openai-responses", { model: "m", input: "hi", store: true }]] as const) {
      expect(claude(from, body).warnings, from).toContainEqual({ code: "dropped_field", message: 'Field "store" has no Anthropic equivalent and was dropped' });
    }
    expect(messages(claude("openai-responses", { model: "m", input: "hi", store: false }))).not.toContain("store");
    expect(messages(claude("openai-chat", chat({ store: false })))).not.toContain("store");
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

describe("Chat seed and penalties towards Gemini (generationConfig.seed, presencePenalty, frequencyPenalty)", () => {
  test("are carried from a Chat client, with no 'no equivalent' warning", () => {
    const built = translate("openai-chat", chat({ seed: 42, presence_penalty: 0.5, frequency_penalty: -0.25 }), "gemini", "gemini", "gemini-2.0-flash");
    expect(built.body.generationConfig).toEqual({ seed: 42, presencePenalty: 0.5, frequencyPenalty: -0.25 });
    expect(built.warnings).toEqual([]);
  });

  test("are carried from a Responses client too; a seed past int32 is named as dropped", () => {
    const built = translate("openai-responses", { model: "m", input: "hi", seed: 9_000_000_000, presence_penalty: 1 }, "gemini", "gemini", "models/gemini-2.0-flash-001");
    expect(built.body.generationConfig).toEqual({ presencePenalty: 1 });
    expect(messages(built)).toContain("seed has no Gemini equivalent and was not sent.");
  });

  test("penalties are not sent to a model that refuses them (gemini-2.5 on: 400 'Penalty is not enabled'); the seed still is", () => {
    for (const model of ["gemini-2.5-flash", "gemini-3-pro-preview", "gemini-flash-latest"]) {
      const built = translate("openai-chat", chat({ seed: 42, presence_penalty: 0.5, frequency_penalty: 0 }), "gemini", "gemini", model);
      expect(built.body.generationConfig).toEqual({ seed: 42 });
      // the non-zero one is named; a 0 changes nothing and is left out without a word
      expect(built.warnings).toEqual([
        { code: "dropped_field", message: `presence_penalty 0.5 was not sent: ${model} takes no penalties (Gemini answers 400 "Penalty is not enabled" to any but 0).` },
      ]);
    }
  });
});

describe("what the Gemini lane cannot send is named (SPEC F-2)", () => {
  const strictTool = {
    type: "function",
    function: {
      name: "get_weather",
      strict: true,
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
    },
  };

  test("a strict tool: strict is named; its additionalProperties false is removed without a word", () => {
    const built = translate("openai-chat", chat({ tools: [strictTool] }), "gemini", "gemini");
    const decl = ((built.body.tools as Array<{ functionDeclarations: Array<Record<string, unknown>> }>)[0]!.functionDeclarations[0]!.parameters as Record<string, unknown>);
    expect("additionalProperties" in decl).toBe(false);
    expect(messages(built)).toContain("Gemini has no strict mode for tools; strict was not sent for get_weather");
    expect(messages(built)).not.toContain("additionalProperties");
  });

  test("Codex's tools (additionalProperties false on each) give no additionalProperties warning; one that is a schema or true beside properties does", async () => {
    // the recorded Codex body: every tool's parameters say additionalProperties false (a Gemini declaration's own meaning)
    const codex = await clientRequest("codex-tool-use-1.json");
    expect(JSON.stringify(codex.tools)).toContain('"additionalProperties":false');
    const built = translate("openai-responses", codex, "gemini", "gemini");
    expect(JSON.stringify(built.body.tools)).not.toContain("additionalProperties");
    expect(messages(built)).not.toContain("additionalProperties");
    const fn = (name: string, parameters: Record<string, unknown>) => ({ type: "function", name, strict: false, parameters });
    const obj = { type: "object", properties: { a: { type: "string" } } };
    const tools = [
      fn("closed", { ...obj, additionalProperties: false }),
      fn("env", { type: "object", properties: { vars: { type: "object", additionalProperties: { type: "string" } } } }), // a map of strings
      fn("open", { ...obj, additionalProperties: true }),
      fn("open_empty", { ...obj, additionalProperties: {} }),
      fn("free_form", { type: "object", properties: { meta: { type: "object", additionalProperties: true } } }), // free-form either way
      fn("named", { type: "object", properties: { additionalProperties: { type: "string" } } }), // a parameter of that name
    ];
    const mixed = translate("openai-responses", { model: "m", input: "hi", tools }, "gemini", "gemini");
    expect(mixed.warnings.filter((w) => w.message.includes("additionalProperties"))).toEqual([
      { code: "dropped_field", message: "Gemini's tool schemas have no additionalProperties; it was removed from the parameters of env, open, open_empty." },
    ]);
  });

  test("a plain tool (no strict, additionalProperties true or absent) gets no warning", () => {
    const plain = { type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "object", additionalProperties: true } } } } };
    expect(translate("openai-chat", chat({ tools: [plain] }), "gemini", "gemini").warnings).toEqual([]);
  });

  test("a message name and an image detail", () => {
    const built = translate(
      "openai-chat",
      chat({ messages: [{ role: "user", name: "alice", content: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } }] }] }),
      "gemini",
      "gemini",
    );
    expect(messages(built)).toContain("Gemini has no message names; the name of a message was not sent.");
    expect(messages(built)).toContain("Gemini has no per-image detail; an image's detail (low/high) was not sent.");
    const auto = translate("openai-chat", chat({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" } }] }] }), "gemini", "gemini");
    expect(auto.warnings).toEqual([]);
  });

  test("a system message in mid-conversation is moved into systemInstruction with the warning the Anthropic lane gives; a leading one is not", () => {
    const body = chat({
      messages: [
        { role: "system", content: "be terse" },
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
        { role: "developer", content: "answer in French" },
        { role: "user", content: "bye" },
      ],
    });
    const built = translate("openai-chat", body, "gemini", "gemini");
    expect(built.body.systemInstruction).toEqual({ parts: [{ text: "be terse" }, { text: "answer in French" }] });
    expect(built.warnings).toEqual([{ code: "hoisted_system_message", message: "A mid-conversation system message was moved into the top-level system prompt" }]);
    const claude = translate("openai-chat", body, "anthropic-messages", "anthropic");
    expect(claude.warnings.filter((w) => w.code === "hoisted_system_message")).toEqual(built.warnings);
    const leading = translate("openai-chat", chat({ messages: [{ role: "system", content: "be terse" }, { role: "user", content: "hi" }] }), "gemini", "gemini");
    expect(codes(leading)).toEqual([]);
  });
});

describe("a thinking budget that raises a Chat client's token limit on Claude (REFERENCE §5.8)", () => {
  test("max_completion_tokens 1000 + reasoning_effort high: max_tokens 17384, budget 16384, and a warning naming both", () => {
    const built = translate("openai-chat", chat({ max_completion_tokens: 1000, reasoning_effort: "high" }), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    expect(built.body.max_tokens).toBe(17384);
    expect(built.body.thinking).toEqual({ type: "enabled", budget_tokens: 16384 });
    expect(built.warnings.filter((w) => w.code === "raised_max_tokens")).toEqual([
      { code: "raised_max_tokens", message: "max_tokens 1000 was raised to 17384 to hold the thinking budget (16384 tokens), which Anthropic counts in max_tokens" },
    ]);
  });

  test("no client limit (the model's default holds the budget) or a limit above the budget: no such warning", () => {
    const big = translate("openai-chat", chat({ max_completion_tokens: 32000, reasoning_effort: "high" }), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    expect(big.body.max_tokens).toBe(32000);
    expect(codes(big)).not.toContain("raised_max_tokens");
  });
});

describe("a prompt Gemini blocked (promptFeedback.blockReason, no candidates) as each client reads it", () => {
  const blocked = { promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, responseId: "r1" };
  const opts = (client: WireFormat) => {
    let n = 0;
    return { model: "client-model", includeUsage: false, newId: (p: string) => `${p}${++n}`, now: () => 1_750_000_000_000 };
  };
  const whole = (client: WireFormat, body: unknown = blocked) => {
    const resp = codecFor("gemini").decodeResponse(body, { family: "gemini" });
    return codecFor(client).encodeResponse!(resp, opts(client)) as Record<string, any>;
  };
  const streamed = (client: WireFormat) => {
    const d = new TranslatedStreamDriver(codecFor("gemini"), codecFor(client), { family: "gemini" }, opts(client));
    const bytes = new TextEncoder().encode(`data: ${JSON.stringify(blocked)}\r\n\r\n`);
    d.hold(bytes);
    return new TextDecoder().decode(d.end());
  };
  const REASON = "Gemini blocked the prompt (PROHIBITED_CONTENT).";

  test("Chat: the reason is the message's refusal, finish_reason content_filter (JSON and stream)", () => {
    const body = whole("openai-chat");
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.refusal).toBe(REASON);
    expect(body.choices[0].finish_reason).toBe("content_filter");
    const sse = streamed("openai-chat");
    const deltas = sse
      .split("\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)).choices[0]);
    expect(deltas.map((c) => c.delta.refusal).filter(Boolean)).toEqual([REASON]);
    expect(deltas.at(-1).finish_reason).toBe("content_filter");
  });

  test("Responses: the reason is a refusal part of the reply, status incomplete (content_filter) (JSON and stream)", () => {
    const body = whole("openai-responses");
    expect(body.status).toBe("incomplete");
    expect(body.incomplete_details).toEqual({ reason: "content_filter" });
    expect(body.output.flatMap((o: any) => o.content ?? [])).toEqual([{ type: "refusal", refusal: REASON }]);
    expect(streamed("openai-responses")).toContain(`"refusal":${JSON.stringify(REASON)}`);
  });

  test("Anthropic Messages: stop_reason refusal with stop_details naming the reason (JSON and stream)", () => {
    const details = { type: "refusal", category: null, explanation: REASON };
    const body = whole("anthropic-messages");
    expect([body.content, body.stop_reason, body.stop_details]).toEqual([[], "refusal", details]);
    const delta = streamed("anthropic-messages")
      .split("\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)))
      .find((e) => e.type === "message_delta");
    expect(delta.delta).toEqual({ stop_reason: "refusal", stop_sequence: null, stop_details: details });
  });

  test("Vertex's blockReasonMessage is part of the reason", () => {
    const body = whole("openai-chat", { ...blocked, promptFeedback: { blockReason: "BLOCKLIST", blockReasonMessage: "The prompt contains blocked terms." } });
    expect(body.choices[0].message.refusal).toBe("Gemini blocked the prompt (BLOCKLIST): The prompt contains blocked terms.");
  });
});
