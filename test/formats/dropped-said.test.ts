/**
 * What a translated request leaves out is said in a warning, and only what it leaves out (SPEC F-2):
 * - a forcing `tool_choice` (required, a named tool) in a request without tools is dropped with a
 *   `dropped_field` warning on every lane (the Anthropic lane did; Chat and Gemini dropped it without a
 *   word, Responses sent it, which OpenAI answers 400);
 * - `cache_control` markers are dropped with `dropped_cache_control` on the Chat and Responses lanes,
 *   as on the Gemini lane (they were dropped without a word);
 * - a Responses client's `include: ["message.output_text.logprobs"]` on a Gemini route is carried
 *   (`responseLogprobs`), so no "include has no Gemini equivalent" warning; an entry Gemini has no
 *   answer for is still named.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../support/translate-body.ts";
import type { ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";

const LANES: Array<[WireFormat, ProviderKind, string]> = [
  ["openai-chat", "openai", "gpt-4.1"],
  ["openai-chat", "openai-compatible", "local-model"],
  ["openai-responses", "openai-responses", "gpt-5"],
  ["anthropic-messages", "anthropic", "claude-sonnet-4-5"],
  ["gemini", "gemini", "gemini-2.5-flash"],
];
const codes = (ws: Array<{ code: string }>) => ws.map((w) => w.code);

describe("a tool_choice that forces a call, in a request without tools", () => {
  const bodies: Array<[WireFormat, Record<string, unknown>]> = [
    ["openai-chat", { model: "m", messages: [{ role: "user", content: "hi" }], tool_choice: "required" }],
    ["openai-responses", { model: "m", input: "hi", tool_choice: { type: "function", name: "lookup" } }],
    ["gemini", { contents: [{ role: "user", parts: [{ text: "hi" }] }], toolConfig: { functionCallingConfig: { mode: "ANY" } } }],
  ];
  for (const [from, body] of bodies) {
    test(`${from} client: not sent, and a dropped_field warning names tool_choice on every lane`, () => {
      for (const [to, kind, model] of LANES) {
        if (to === from) continue;
        const built = translateBody(from, body, to, kind, model);
        const b = built.body as Record<string, any>;
        expect([to, kind, b.tool_choice ?? b.toolConfig]).toEqual([to, kind, undefined]);
        expect(built.warnings.filter((w) => w.code === "dropped_field" && w.message.startsWith("tool_choice was dropped")).length, `${from} → ${to} (${kind})`).toBe(1);
      }
    });
  }

  test("tool_choice auto or none without tools is no warning", () => {
    for (const [to, kind, model] of LANES) {
      for (const tool_choice of ["auto", "none"]) {
        const built = translateBody("openai-chat", { model: "m", messages: [{ role: "user", content: "hi" }], tool_choice }, to, kind, model);
        expect(built.warnings.filter((w) => w.message.includes("tool_choice")), `${tool_choice} → ${to}`).toEqual([]);
      }
    }
  });
});

describe("cache_control markers on the Chat and Responses lanes", () => {
  const marked = {
    model: "m",
    max_tokens: 100,
    system: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }],
    messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }],
  };
  for (const [to, kind, model] of LANES.filter(([to]) => to !== "anthropic-messages")) {
    test(`${to} (${kind}): not sent, and one dropped_cache_control warning`, () => {
      const built = translateBody("anthropic-messages", marked, to, kind, model);
      expect(JSON.stringify(built.body)).not.toContain("cache_control");
      expect(codes(built.warnings).filter((c) => c === "dropped_cache_control")).toEqual(["dropped_cache_control"]);
      const plain = translateBody("anthropic-messages", { ...marked, system: "sys", messages: [{ role: "user", content: "hi" }] }, to, kind, model);
      expect(codes(plain.warnings)).not.toContain("dropped_cache_control");
    });
  }

  test("a marker only on a tool result's content or on a tool is said too", () => {
    const body = {
      model: "m",
      max_tokens: 100,
      tools: [{ name: "lookup", input_schema: { type: "object" }, cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "r", cache_control: { type: "ephemeral" } }] }] },
      ],
    };
    expect(codes(translateBody("anthropic-messages", body, "openai-chat", "openai", "gpt-4.1").warnings)).toContain("dropped_cache_control");
    const onlyResult = { ...body, tools: [{ name: "lookup", input_schema: { type: "object" } }] };
    expect(codes(translateBody("anthropic-messages", onlyResult, "openai-responses", "openai-responses", "gpt-5").warnings)).toContain("dropped_cache_control");
  });
});

describe("a Responses client's include on a Gemini route", () => {
  test("logprobs (and Codex's reasoning.encrypted_content) are carried: no include warning", () => {
    const built = translateBody("openai-responses", { model: "m", input: "hi", include: ["message.output_text.logprobs", "reasoning.encrypted_content"], top_logprobs: 3 }, "gemini", "gemini", "gemini-2.5-flash");
    expect((built.body as any).generationConfig).toMatchObject({ responseLogprobs: true, logprobs: 3 });
    expect(built.warnings.filter((w) => w.message.includes("include"))).toEqual([]);
  });

  test("an entry Gemini has no answer for is named", () => {
    const built = translateBody("openai-responses", { model: "m", input: "hi", include: ["message.output_text.logprobs", "file_search_call.results"] }, "gemini", "gemini", "gemini-2.5-flash");
    expect(built.warnings.filter((w) => w.message.includes("include")).map((w) => [w.code, w.message])).toEqual([
      ["dropped_field", "include file_search_call.results has no Gemini equivalent and was not sent."],
    ]);
  });
});
