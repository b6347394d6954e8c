/**
 * formats/gemini/field-names.ts: a body in camelCase is returned as it came (no copy), a countTokens
 * wrapper's snake_case request is renamed even when the wrapper itself has none, and a member named
 * `__proto__` stays a member of the copy instead of becoming its prototype.
 */
import { describe, expect, test } from "bun:test";
import { camelCaseRequest } from "../../../formats/gemini/field-names.ts";

describe("camelCaseRequest", () => {
  test("a camelCase body is the same object, untouched", () => {
    const body = JSON.parse('{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"be brief"}]},"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"object","properties":{"snake_arg":{"type":"string"}}}}]}]}');
    expect(camelCaseRequest(body)).toBe(body);
  });

  test("a countTokens wrapper holding a snake_case request has it renamed", () => {
    const body = JSON.parse('{"generateContentRequest":{"model":"models/m","contents":[{"role":"user","parts":[{"inline_data":{"mime_type":"image/png","data":"AA=="}}]}],"system_instruction":{"parts":[{"text":"sys"}]}}}');
    const out = camelCaseRequest(body) as { generateContentRequest: Record<string, unknown> };
    expect(out.generateContentRequest).toEqual({
      model: "models/m",
      contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "AA==" } }] }],
      systemInstruction: { parts: [{ text: "sys" }] },
    });
    expect(body.generateContentRequest.system_instruction).toBeDefined(); // the client's body is not changed
  });

  test("a member named __proto__ in a renamed object stays a member, not the copy's prototype", () => {
    const body = JSON.parse('{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generation_config":{"max_output_tokens":5,"__proto__":{"injected":true}}}');
    const out = camelCaseRequest(body) as { generationConfig: Record<string, unknown> };
    expect(out.generationConfig.maxOutputTokens).toBe(5);
    expect(Object.getPrototypeOf(out.generationConfig)).toBe(Object.prototype);
    expect((out.generationConfig as { injected?: unknown }).injected).toBeUndefined();
    expect(Object.keys(out.generationConfig)).toEqual(["maxOutputTokens", "__proto__"]);
  });
});
