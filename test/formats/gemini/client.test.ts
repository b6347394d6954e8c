/**
 * The Gemini client side of formats/gemini: request parsing into the hub (parse.ts), the
 * stream encoder and the non-streamed body (encoder.ts).
 */
import { describe, expect, test } from "bun:test";
import { gemini, geminiSchemaToJsonSchema, parseGeminiRequest } from "../../../formats/gemini/index.ts";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import type { HubEvent } from "../../../formats/hub.ts";
import { FormatError } from "../../../formats/hub.ts";

const TARGET = { model: "gemini-2.5-flash", kind: "gemini" as const, family: "gemini" as const, stream: true };

describe("parseRequest", () => {
  test("system, roles, thoughts merged into one signed thinking part, placeholder signatures ignored", () => {
    const hub = parseGeminiRequest(
      {
        systemInstruction: { parts: [{ text: "Be terse." }, { text: "Use tools." }] },
        contents: [
          { role: "user", parts: [{ text: "Weather?" }] },
          {
            role: "model",
            parts: [
              { text: "I should ", thought: true },
              { text: "call it.", thought: true, thoughtSignature: "Z2VtaW5pU2ln" },
              { functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "skip_thought_signature_validator" },
            ],
          },
          { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "12C" } } }] },
        ],
      },
      { model: "gem/x", stream: true },
    );
    expect(hub.model).toBe("gem/x");
    expect(hub.stream).toBe(true);
    expect(hub.system).toEqual([{ type: "text", text: "Be terse." }, { type: "text", text: "Use tools." }]);
    expect(hub.messages[1]!.content).toEqual([
      { type: "thinking", text: "I should call it.", signature: { family: "gemini", value: "Z2VtaW5pU2ln" } },
      { type: "tool_call", id: "call_1_2", name: "get_weather", arguments: '{"city":"Oslo"}' },
    ]);
    expect(hub.messages[2]!.content).toEqual([{ type: "tool_result", callId: "call_1_2", name: "get_weather", content: [{ type: "text", text: "12C" }] }]);
  });

  test("parallel calls pair with their responses by id, then by name in order", () => {
    const hub = parseGeminiRequest({
      contents: [
        { role: "user", parts: [{ text: "x" }] },
        { role: "model", parts: [{ functionCall: { name: "read", args: { p: "a" } } }, { functionCall: { name: "read", args: { p: "b" } } }, { functionCall: { id: "w1", name: "write", args: {} } }] },
        {
          role: "user",
          parts: [
            { functionResponse: { id: "w1", name: "write", response: { error: "denied" } } },
            { functionResponse: { name: "read", response: { result: "A" } } },
            { functionResponse: { name: "read", response: { lines: 2, text: "B" } } },
          ],
        },
      ],
    });
    const results = hub.messages[2]!.content;
    expect(results).toEqual([
      { type: "tool_result", callId: "w1", name: "write", content: [{ type: "text", text: "denied" }], isError: true },
      { type: "tool_result", callId: "call_1_0", name: "read", content: [{ type: "text", text: "A" }] },
      { type: "tool_result", callId: "call_1_1", name: "read", content: [{ type: "text", text: '{"lines":2,"text":"B"}' }] },
    ]);
  });


  test("a response pairs with the call of the model turn before it, not an earlier call of that name the user abandoned", () => {
    const body = {
      contents: [
        { role: "user", parts: [{ text: "search cats" }] },
        { role: "model", parts: [{ functionCall: { name: "search", args: { q: "cats" } } }] },
        { role: "user", parts: [{ text: "never mind, search dogs" }] },
        { role: "model", parts: [{ text: "Searching." }] },
        { role: "model", parts: [{ functionCall: { name: "search", args: { q: "dogs" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "search", response: { result: "DOG RESULTS" } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: "search", parameters: { type: "object", properties: { q: { type: "string" } } } }] }],
    };
    const hub = parseGeminiRequest(body);
    expect(hub.messages.at(-1)!.content).toEqual([{ type: "tool_result", callId: "call_4_0", name: "search", content: [{ type: "text", text: "DOG RESULTS" }] }]);
    // Translated: the dogs result answers the dogs call; only the abandoned cats call gets an error result.
    const built = anthropicMessages.buildRequest!({ ...hub, model: "claude-x" }, { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false });
    const messages = (built.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "call_4_0", content: "DOG RESULTS" }] });
    expect(messages[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "call_1_0", content: "No result was provided for this tool call.", is_error: true },
      { type: "text", text: "never mind, search dogs" },
    ]);
    expect(built.warnings.map((x) => x.code)).toEqual(["missing_tool_result"]);
  });
  test("generationConfig, toolConfig and tools map to the hub; the rest is kept and sent again to Gemini", () => {
    const hub = parseGeminiRequest({
      contents: [{ parts: [{ text: "hi" }, { inlineData: { mimeType: "image/png", data: "iVBOR" } }] }],
      tools: [{ functionDeclarations: [{ name: "f", parametersJsonSchema: { type: "object", additionalProperties: false } }] }, { googleSearch: {} }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["f"] } },
      generationConfig: { maxOutputTokens: 100, temperature: 0.5, stopSequences: ["END"], seed: 3, thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } },
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
    });
    expect(hub.messages[0]!.content[1]).toEqual({ type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" } });
    expect(hub.tools).toEqual([
      { kind: "function", name: "f", parameters: { type: "object", additionalProperties: false } },
      { kind: "provider", format: "gemini", raw: { googleSearch: {} }, name: "googleSearch" },
    ]);
    expect(hub.toolChoice).toEqual({ type: "tool", name: "f" });
    expect(hub.maxOutputTokens).toBe(100);
    expect(hub.stopSequences).toEqual(["END"]);
    expect(hub.reasoning).toEqual({ includeThoughts: true, enabled: true, budgetTokens: 1024 });
    const built = gemini.buildRequest(hub, TARGET).body as any;
    expect(built.generationConfig.seed).toBe(3);
    expect(built.safetySettings).toEqual([{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }]);
    expect(built.tools[1]).toEqual({ googleSearch: {} });
  });

  test("thinkingBudget 0 turns reasoning off; thinkingLevel is an effort", () => {
    expect(parseGeminiRequest({ contents: [{ parts: [{ text: "x" }] }], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }).reasoning).toEqual({ enabled: false });
    expect(parseGeminiRequest({ contents: [{ parts: [{ text: "x" }] }], generationConfig: { thinkingConfig: { thinkingLevel: "HIGH" } } }).reasoning).toEqual({ enabled: true, effort: "high" });
  });

  test("Gemini schemas become JSON Schema", () => {
    expect(geminiSchemaToJsonSchema({ type: "OBJECT", properties: { a: { type: "ARRAY", items: { type: "STRING", enum: ["x"] } }, b: { type: "NUMBER", nullable: true } }, propertyOrdering: ["a", "b"] })).toEqual({
      type: "object",
      properties: { a: { type: "array", items: { type: "string", enum: ["x"] } }, b: { type: ["number", "null"] } },
    });
  });

  test("bodies that are not GenerateContentRequests are 400s naming the field", () => {
    const param = (body: unknown) => {
      try {
        parseGeminiRequest(body);
      } catch (e) {
        expect(e).toBeInstanceOf(FormatError);
        return (e as FormatError).error.param;
      }
      return "no error";
    };
    expect(param({})).toBe("contents");
    expect(param({ contents: [{ role: "assistant", parts: [] }] })).toBe("contents[0].role");
    expect(param({ contents: [{ role: "user" }] })).toBe("contents[0].parts");
    // parts that are no Part, text that is no string, an empty part: skipped before, so a turn could vanish
    const turn = (part: unknown) => ({ contents: [{ parts: [{ text: "first" }] }, { role: "model", parts: [{ text: "ok" }] }, { parts: [part] }] });
    expect(param(turn(5))).toBe("contents[2].parts[0]");
    expect(param(turn({ text: 5 }))).toBe("contents[2].parts[0].text");
    expect(param(turn({}))).toBe("contents[2].parts[0]");
    expect(param(turn({ text: "", thoughtSignature: "c2ln" }))).toBe("no error");
    expect(param({ contents: [{ parts: [{ text: "x" }] }], tools: [{ functionDeclarations: [{ description: "no name" }] }] })).toBe("tools[0].functionDeclarations[0].name");
    expect(param({ contents: [{ parts: [{ text: "x" }] }], generationConfig: { maxOutputTokens: -1 } })).toBe("generationConfig.maxOutputTokens");
    // stop sequences that are no list of strings: dropped before, so the reply ran past the stop asked for
    expect(param({ contents: [{ parts: [{ text: "x" }] }], generationConfig: { stopSequences: "END" } })).toBe("generationConfig.stopSequences");
    expect(param({ contents: [{ parts: [{ text: "x" }] }], generationConfig: { stopSequences: ["END", 5] } })).toBe("generationConfig.stopSequences");
    expect(param({ contents: [{ parts: [{ text: "x" }] }], generationConfig: { stopSequences: ["END", ""] } })).toBe("no error");
    // enums and switches of the wrong type or value: read as absent before, so the request ran with defaults
    const gc = (generationConfig: unknown) => param({ contents: [{ parts: [{ text: "x" }] }], generationConfig });
    expect(gc({ thinkingConfig: { thinkingLevel: "hihg" } })).toBe("generationConfig.thinkingConfig.thinkingLevel");
    // a level named like a member of every object's prototype is no level either (not a function as the effort)
    expect(gc({ thinkingConfig: { thinkingLevel: "constructor" } })).toBe("generationConfig.thinkingConfig.thinkingLevel");
    expect(gc({ thinkingConfig: { thinkingLevel: "toString" } })).toBe("generationConfig.thinkingConfig.thinkingLevel");
    expect(gc({ thinkingConfig: { thinkingBudget: "1000" } })).toBe("generationConfig.thinkingConfig.thinkingBudget");
    expect(gc({ thinkingConfig: { includeThoughts: "yes" } })).toBe("generationConfig.thinkingConfig.includeThoughts");
    expect(gc({ thinkingConfig: true })).toBe("generationConfig.thinkingConfig");
    expect(gc({ responseLogprobs: "yes" })).toBe("generationConfig.responseLogprobs");
    expect(gc({ responseMimeType: 5 })).toBe("generationConfig.responseMimeType");
    expect(gc({ thinkingConfig: { thinkingLevel: "HIGH", thinkingBudget: -1, includeThoughts: true }, responseLogprobs: false, responseMimeType: "text/plain" })).toBe("no error");
    const tc = (functionCallingConfig: unknown) => param({ contents: [{ parts: [{ text: "x" }] }], toolConfig: { functionCallingConfig } });
    expect(tc({ mode: "SOMETIMES" })).toBe("toolConfig.functionCallingConfig.mode");
    expect(tc({ mode: "ANY", allowedFunctionNames: "f" })).toBe("toolConfig.functionCallingConfig.allowedFunctionNames");
    expect(tc({ mode: "any", allowedFunctionNames: ["f"] })).toBe("no error");
    expect(tc({ mode: "MODE_UNSPECIFIED" })).toBe("no error");
  });
});

/** Runs canonical events through the encoder and returns the parsed `data:` payloads. */
function encode(events: HubEvent[], end = true): any[] {
  let out = "";
  const enc = gemini.createEncoder!({ model: "m", newId: () => "rid" }, (t) => (out += t));
  for (const e of events) enc.event(e);
  if (end) enc.end();
  expect(out.endsWith("\n\n")).toBe(true);
  return out
    .slice(0, -2)
    .split("\n\n")
    .map((e) => {
      expect(e.startsWith("data: ")).toBe(true);
      return JSON.parse(e.slice(6));
    });
}

const parts = (chunks: any[]) => chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);

describe("stream encoder", () => {
  test("tool arguments are buffered into one functionCall part; signatures of other families are tagged", () => {
    const chunks = encode([
      { type: "message_start", usage: { inputTokens: 10 } },
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "hmm" } },
      { type: "block_delta", index: 0, delta: { type: "signature", signature: { family: "anthropic", value: "AAA" } } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "toolu_1", name: "f", signature: { family: "gemini", value: "R2Vt" } } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"a":' } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: "1}" } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "tool_use" },
      { type: "usage", usage: { outputTokens: 5, reasoningTokens: 2, cacheReadTokens: 4 } },
    ]);
    expect(parts(chunks)).toEqual([
      { text: "hmm", thought: true },
      { text: "", thought: true, thoughtSignature: "sy|anthropic|AAA" },
      { functionCall: { id: "toolu_1", name: "f", args: { a: 1 } }, thoughtSignature: "R2Vt" },
    ]);
    expect(chunks.at(-1)).toEqual({
      candidates: [{ content: { role: "model", parts: [] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 14, candidatesTokenCount: 3, thoughtsTokenCount: 2, cachedContentTokenCount: 4, totalTokenCount: 19 },
      modelVersion: "m",
      responseId: "rid",
    });
  });

  test("an error before the finish is one error chunk; after the finish the stream closes normally", () => {
    const failed = encode([
      { type: "message_start" },
      { type: "block_start", index: 0, block: { type: "text" } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "Hi" } },
      { type: "error", error: { kind: "overloaded", status: 529, message: "busy" } },
    ]);
    // Anthropic's 529 is 503 here, the code a Gemini client gets for it before the stream starts too
    expect(failed.at(-1)).toEqual({ error: { code: 503, message: "busy", status: "UNAVAILABLE" } });
    expect(failed).toHaveLength(2);
    const closed = encode([{ type: "message_start" }, { type: "finish", reason: "max_tokens" }, { type: "error", error: { kind: "api_error", status: 502, message: "late" } }]);
    expect(closed).toHaveLength(1);
    expect(closed[0].candidates[0].finishReason).toBe("MAX_TOKENS");
  });

  test("the end without a finish is the truncation error, never a finish", () => {
    const chunks = encode([{ type: "message_start" }, { type: "block_start", index: 0, block: { type: "text" } }, { type: "block_delta", index: 0, delta: { type: "text", text: "a" } }]);
    expect(chunks.at(-1).error.status).toBe("INTERNAL");
    expect(chunks.some((c) => c.candidates?.[0]?.finishReason)).toBe(false);
  });
});

describe("encodeResponse", () => {
  test("one candidate with text, thought and call parts, finish reason and usage", () => {
    const body = gemini.encodeResponse!(
      {
        content: [
          { type: "thinking", text: "why", signature: { family: "openai", value: "enc" } },
          { type: "text", text: "Answer", signature: { family: "gemini", value: "c2ln" } },
          { type: "tool_call", id: "c1", name: "f", arguments: "" },
        ],
        stopReason: "tool_use",
        usage: { inputTokens: 3, outputTokens: 4 },
      },
      { model: "m", newId: () => "rid" },
    );
    expect(body).toEqual({
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { text: "why", thought: true, thoughtSignature: "sy|openai|enc" },
              { text: "Answer", thoughtSignature: "c2ln" },
              // The call carries the reasoning before it (formats/gemini/thought-carry.ts), for clients that drop thought parts.
              { functionCall: { id: "c1", name: "f", args: {} }, thoughtSignature: "sy|thoughts|" + Buffer.from('{"v":1,"p":[{"t":"why","s":"openai|enc"}]}').toString("base64url") },
            ],
          },
          finishReason: "STOP",
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 },
      modelVersion: "m",
      responseId: "rid",
    });
  });
});
