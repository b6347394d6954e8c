/**
 * A Gemini client in JSON mode with an ARRAY (or any non-object) `responseSchema` reached OpenAI with
 * that root (Chat `response_format.json_schema.schema.type: "array"`, Responses `text.format`), which
 * OpenAI refuses with a 400 (structured outputs take an object root only), and no warning said so.
 * Now the schema is not sent and a `dropped_field` warning names it; an object root, a Chat client's
 * own array root, a Gemini upstream and an openai-compatible server keep theirs.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const gemini = (schema: Record<string, unknown>) => ({
  contents: [{ role: "user", parts: [{ text: "list" }] }],
  generationConfig: { responseMimeType: "application/json", responseSchema: schema },
});
const ARRAY = { type: "ARRAY", items: { type: "STRING" } };

test("a Gemini ARRAY responseSchema does not reach OpenAI Chat; a warning names response_format", () => {
  const built = translateBody("gemini", gemini(ARRAY), "openai-chat", "openai", "gpt-4.1");
  expect(built.body.response_format).toBeUndefined();
  expect(built.warnings).toEqual([
    {
      code: "dropped_field",
      message: "The JSON schema for the reply has a root of type array; OpenAI's structured outputs take an object root only, so response_format was not sent and the reply is not held to the schema.",
    },
  ]);
});

test("a Gemini ARRAY / STRING responseSchema does not reach OpenAI Responses or Codex; a warning names text.format", () => {
  for (const kind of ["openai-responses", "codex"] as const) {
    for (const [schema, type] of [[ARRAY, "array"], [{ type: "STRING" }, "string"]] as const) {
      const built = translateBody("gemini", gemini(schema), "openai-responses", kind, "gpt-5");
      expect((built.body.text as { format?: unknown } | undefined)?.format, kind).toBeUndefined();
      const said = built.warnings.filter((w) => w.code === "dropped_field").map((w) => w.message);
      expect(said, kind).toContain(`The JSON schema for the reply has a root of type ${type}; OpenAI's structured outputs take an object root only, so text.format was not sent and the reply is not held to the schema.`);
    }
  }
});

test("an OBJECT responseSchema still reaches OpenAI as json_schema, without a warning", () => {
  const schema = { type: "OBJECT", properties: { names: ARRAY }, required: ["names"] };
  const chat = translateBody("gemini", gemini(schema), "openai-chat", "openai", "gpt-4.1");
  expect((chat.body.response_format as any).json_schema.schema).toEqual({ type: "object", properties: { names: { type: "array", items: { type: "string" } } }, required: ["names"] });
  expect(chat.warnings).toEqual([]);
  const resp = translateBody("gemini", gemini(schema), "openai-responses", "openai-responses", "gpt-5");
  expect((resp.body.text as any).format.schema.type).toBe("object");
  expect(resp.warnings.filter((w) => w.code === "dropped_field")).toEqual([]);
});

test("an ARRAY schema is kept for a Gemini upstream and an openai-compatible server; a Chat client's own goes as written", () => {
  const toGemini = translateBody("gemini", gemini(ARRAY), "gemini", "gemini", "gemini-2.5-flash");
  expect(toGemini.body.generationConfig).toEqual({ responseMimeType: "application/json", responseJsonSchema: { type: "array", items: { type: "string" } } });
  const compat = translateBody("gemini", gemini(ARRAY), "openai-chat", "openai-compatible", "qwen3");
  expect((compat.body.response_format as any).json_schema.schema.type).toBe("array");
  const chatBody = { model: "m", messages: [{ role: "user", content: "list" }], response_format: { type: "json_schema", json_schema: { name: "r", schema: { type: "array", items: { type: "string" } } } } };
  const own = translateBody("openai-chat", chatBody, "openai-chat", "openai", "gpt-4.1");
  expect((own.body.response_format as any).json_schema.schema.type).toBe("array");
});
