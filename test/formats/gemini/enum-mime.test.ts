/**
 * Found by the request-features tryout (session 45; fixed that session): a Gemini client's enum mode
 * (`responseMimeType: "text/x.enum"` with a `STRING` schema listing `enum` values; the reply is the
 * bare value, e.g. `red`) reaches OpenAI as `response_format: {type: "json_schema", json_schema:
 * {schema: {type: "string", enum: [...]}}}` (Chat) / `text.format` (Responses). OpenAI's structured
 * outputs take an object at the root of the schema only, so the request becomes an upstream 400, with
 * no warning; and where it is accepted the reply is JSON (`"red"`, quoted), not Gemini's bare value.
 * Expected: no JSON schema with a non-object root is sent to OpenAI; what is not sent is named in a
 * warning. It failed for that reason before the fix.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

test("text/x.enum does not reach OpenAI as a json_schema whose root is a string", () => {
  const body = { contents: [{ role: "user", parts: [{ text: "Which colour?" }] }], generationConfig: { responseMimeType: "text/x.enum", responseSchema: { type: "STRING", enum: ["red", "blue"] } } };
  const chat = translateBody("gemini", body, "openai-chat", "openai", "gpt-4.1");
  const chatSchema = (chat.body.response_format as any)?.json_schema?.schema;
  expect(chatSchema === undefined || chatSchema.type === "object").toBe(true);
  const resp = translateBody("gemini", body, "openai-responses", "openai-responses", "gpt-5");
  const respSchema = (resp.body.text as any)?.format?.schema;
  expect(respSchema === undefined || respSchema.type === "object").toBe(true);
  expect(chat.warnings.length + resp.warnings.length).toBeGreaterThan(0);
});

const ENUM_BODY = { contents: [{ role: "user", parts: [{ text: "Which colour?" }] }], generationConfig: { responseMimeType: "text/x.enum", responseSchema: { type: "STRING", enum: ["red", "blue"] } } };

test("text/x.enum reaches OpenAI and Anthropic as no structured output, each lane naming the two fields dropped", () => {
  for (const [to, kind, model] of [["openai-chat", "openai", "gpt-4.1"], ["openai-responses", "openai-responses", "gpt-5"], ["anthropic-messages", "anthropic", "claude-sonnet-4-5"]] as const) {
    const built = translateBody("gemini", ENUM_BODY, to, kind, model);
    expect(JSON.stringify(built.body).includes('"enum"'), to).toBe(false);
    const said = built.warnings.filter((w) => w.code === "dropped_field").map((w) => w.message).join(" ");
    expect(said, to).toContain("generationConfig.responseMimeType");
    expect(said, to).toContain("generationConfig.responseSchema");
  }
});

test("text/x.enum reaches Gemini as enum mode still (was: JSON mode, whose reply is the value quoted)", () => {
  const built = translateBody("gemini", ENUM_BODY, "gemini", "gemini", "gemini-2.5-flash");
  expect(built.body.generationConfig).toEqual({ responseMimeType: "text/x.enum", responseSchema: { type: "STRING", enum: ["red", "blue"] } });
  expect(built.warnings).toEqual([]);
});
