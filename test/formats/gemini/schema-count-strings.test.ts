/**
 * Found by the request-features tryout (session 45; fixed that session): Gemini's `Schema` writes its count
 * keywords as int64, which proto3 JSON (and @google/genai's `Schema` type: `minItems?: string`) spell
 * as strings: `"minItems": "1"`, `"maxLength": "10"` (ai.google.dev/api/caching#Schema). Gemini takes
 * them. formats/gemini/parse.ts `geminiSchemaToJsonSchema` copies them as they are, so a Gemini client's
 * tool parameters and `responseSchema` reach OpenAI and Anthropic as JSON Schema with
 * `"minItems": "1"`, which JSON Schema (and both providers' validators) take only as a non-negative
 * integer: a request Gemini accepts becomes an upstream 400, with no warning. Expected: the counts
 * sent as integers. It failed for that reason before the fix.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const params = { type: "OBJECT", properties: { ids: { type: "ARRAY", items: { type: "STRING" }, minItems: "1", maxItems: "3" }, name: { type: "STRING", maxLength: "10" } }, required: ["ids"] };
const body = (extra: Record<string, unknown>) => ({ contents: [{ role: "user", parts: [{ text: "pick" }] }], ...extra });
const counts = (schema: any) => ({ minItems: schema.properties.ids.minItems, maxItems: schema.properties.ids.maxItems, maxLength: schema.properties.name.maxLength });
const INTEGERS = { minItems: 1, maxItems: 3, maxLength: 10 };

describe("a Gemini schema's string counts reach JSON Schema providers as integers", () => {
  test("tool parameters → OpenAI Chat and Anthropic", () => {
    const tools = [{ functionDeclarations: [{ name: "pick", description: "p", parameters: params }] }];
    const chat = translateBody("gemini", body({ tools }), "openai-chat", "openai", "gpt-4.1").body as any;
    expect(counts(chat.tools[0].function.parameters)).toEqual(INTEGERS);
    const claude = translateBody("gemini", body({ tools }), "anthropic-messages", "anthropic", "claude-sonnet-4-5").body as any;
    expect(counts(claude.tools[0].input_schema)).toEqual(INTEGERS);
  });

  test("responseSchema → OpenAI Chat response_format", () => {
    const chat = translateBody("gemini", body({ generationConfig: { responseMimeType: "application/json", responseSchema: params } }), "openai-chat", "openai", "gpt-4.1").body as any;
    expect(counts(chat.response_format.json_schema.schema)).toEqual(INTEGERS);
  });
});
