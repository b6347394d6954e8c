/**
 * A Gemini client's request written with the API's snake_case field names (`system_instruction`,
 * `generation_config`, `inline_data: {mime_type}`, `function_declarations`, `tool_config`), as Google's
 * own REST examples write them and as the Gemini API accepts them (protobuf's JSON mapping takes a
 * field's proto name too). Until 2026-12-04 a translated target read only the camelCase names: the
 * system prompt, the token limit, the stop sequences, the tools and the image went nowhere (the image
 * without a word), and the upstream answered a different question. formats/gemini/field-names.ts now
 * renames the request's own members (not the client's data: tool arguments, schema property names).
 */
import { describe, expect, test } from "bun:test";
import { camelCaseRequest } from "../../formats/gemini/field-names.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const snakeBody = {
  system_instruction: { parts: [{ text: "You are a cat." }] },
  contents: [
    { role: "user", parts: [{ text: "What is in the picture?" }, { inline_data: { mime_type: "image/png", data: png } }] },
    { role: "model", parts: [{ function_call: { name: "look_up", args: { cat_name: "Neko" } } }] },
    { role: "user", parts: [{ function_response: { name: "look_up", response: { result: "a tabby" } } }] },
  ],
  generation_config: { max_output_tokens: 77, stop_sequences: ["END"], temperature: 0.25 },
  tools: [{ function_declarations: [{ name: "look_up", description: "Finds a cat.", parameters: { type: "OBJECT", properties: { cat_name: { type: "STRING" } }, required: ["cat_name"] } }] }],
  tool_config: { function_calling_config: { mode: "ANY" } },
};
const post = (model: string, body: unknown) =>
  fetch(`${suite.gw.url}/v1beta/models/${model}:generateContent`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("a Gemini client's snake_case request on a translated target", () => {
  test("Chat provider: the system prompt, token limit, stop sequence, temperature, tool, tool choice, image and the call's arguments all arrive; no warning of dropped fields", async () => {
    const res = await post("chat/gpt-x", snakeBody);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-warning")).toBeNull();
    const sent = suite.gw.fake.requests[0]!.body;
    expect(sent.messages[0]).toEqual({ role: "system", content: "You are a cat." });
    expect(sent.messages[1].content).toEqual([
      { type: "text", text: "What is in the picture?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
    ]);
    expect(JSON.parse(sent.messages[2].tool_calls[0].function.arguments)).toEqual({ cat_name: "Neko" });
    expect(sent.messages[3]).toMatchObject({ role: "tool", content: "a tabby" });
    expect(sent).toMatchObject({ max_tokens: 77, stop: ["END"], temperature: 0.25, tool_choice: "required" });
    expect(sent.tools[0].function).toMatchObject({ name: "look_up", parameters: { type: "object", properties: { cat_name: { type: "string" } }, required: ["cat_name"] } });
  });

  test("Anthropic provider: the same request in Messages terms", async () => {
    const res = await post("anth/claude-x", snakeBody);
    expect(res.status).toBe(200);
    const sent = suite.gw.fake.requests[0]!.body;
    expect(sent.system).toEqual([{ type: "text", text: "You are a cat." }]);
    expect(sent.max_tokens).toBe(77);
    expect(sent.stop_sequences).toEqual(["END"]);
    expect(sent.tool_choice).toEqual({ type: "any" });
    expect(sent.messages[0].content[1]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: png } });
    expect(sent.tools[0].input_schema.properties).toEqual({ cat_name: { type: "string" } });
  });

  test("the renaming keeps the client's own names: tool arguments, results, schema properties and JSON schemas; camelCase wins over a snake_case twin; a camelCase body is the same object", () => {
    const out = camelCaseRequest({
      contents: [{ parts: [{ function_call: { name: "f", args: { max_output_tokens: 1 } } }, { function_response: { name: "f", response: { inline_data: 2 } } }] }],
      tools: [{ function_declarations: [{ name: "f", parameters: { type: "OBJECT", properties: { max_items: { type: "ARRAY", max_items: 3, items: { type: "STRING" } } } }, parameters_json_schema: { additional_properties: false } }] }],
      generation_config: { maxOutputTokens: 10, max_output_tokens: 99 },
    }) as any;
    expect(out.contents[0].parts[0].functionCall.args).toEqual({ max_output_tokens: 1 });
    expect(out.contents[0].parts[1].functionResponse.response).toEqual({ inline_data: 2 });
    expect(out.tools[0].functionDeclarations[0].parameters.properties).toEqual({ max_items: { type: "ARRAY", maxItems: 3, items: { type: "STRING" } } });
    expect(out.tools[0].functionDeclarations[0].parametersJsonSchema).toEqual({ additional_properties: false });
    expect(out.generationConfig).toEqual({ maxOutputTokens: 10 });
    const camel = { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 5 } };
    expect(camelCaseRequest(camel)).toBe(camel);
  });
});
