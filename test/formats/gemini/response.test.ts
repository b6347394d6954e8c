import { describe, expect, test } from "bun:test";
import { gemini } from "../../../formats/gemini/index.ts";
import { FormatError } from "../../../formats/hub.ts";
import { recordedBytes } from "../../support/fixtures.ts";
import { decodeBytes, geminiSse, reply } from "../../support/gemini-harness.ts";

const opts = { family: "gemini" as const };
const json = async (file: string) => JSON.parse(new TextDecoder().decode(await recordedBytes(file)));

describe("gemini decodeResponse", () => {
  test("text.json: visible text keeps its thoughtSignature on the same part; usage per §5.10", async () => {
    const body = await json("gemini/text.json");
    const r = gemini.decodeResponse(body, opts);
    expect(r.id).toBe("Un6LacrVMcjUxs0PmJfWoQc");
    expect(r.model).toBe("gemini-3-pro-preview");
    expect(r.content).toEqual([
      {
        type: "text",
        text: body.candidates[0].content.parts[0].text,
        signature: { family: "gemini", value: body.candidates[0].content.parts[0].thoughtSignature },
      },
    ]);
    expect(r.stopReason).toBe("end_turn");
    expect(r.rawStopReason).toBe("STOP");
    expect(r.usage).toEqual({ inputTokens: 9, outputTokens: 28 + 244, reasoningTokens: 244 });
  });

  test("function-call.json: tool call with stringified args and its signature; stop promoted to tool_use", async () => {
    const body = await json("gemini/function-call.json");
    const r = gemini.decodeResponse(body, opts);
    expect(r.content).toEqual([
      {
        type: "tool_call",
        id: "call_m36LaZGyCLz1xs0PtNSB-QU_0",
        name: "weather",
        arguments: '{"location":"San Francisco"}',
        signature: { family: "gemini", value: body.candidates[0].content.parts[0].thoughtSignature },
      },
    ]);
    expect(r.stopReason).toBe("tool_use");
    expect(r.usage).toEqual({ inputTokens: 29, outputTokens: 15 + 893, reasoningTokens: 893 });
  });

  test("the non-streamed reply equals the streamed decode of the same chunks", () => {
    const chunks = [
      { candidates: [{ content: { parts: [{ text: "think", thought: true }] } }], responseId: "same" },
      {
        candidates: [
          {
            content: { parts: [{ text: "Hi" }, { functionCall: { name: "f", args: { a: [1, 2] } }, thoughtSignature: "eA==" }] },
            finishReason: "STOP",
          },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 2 },
        responseId: "same",
      },
    ];
    const streamed = reply(decodeBytes(geminiSse(...chunks))).response;
    expect(gemini.decodeResponse(chunks, opts)).toEqual(streamed);
  });

  test("a body without finishReason has stopReason null", () => {
    const r = gemini.decodeResponse({ candidates: [{ content: { parts: [{ text: "x" }] } }] }, opts);
    expect(r.stopReason).toBeNull();
    expect(r.content).toEqual([{ type: "text", text: "x" }]);
  });

  test("prompt blocked: no content, refusal", () => {
    const r = gemini.decodeResponse({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 4 } }, opts);
    expect(r).toMatchObject({ content: [], stopReason: "refusal", rawStopReason: "SAFETY", usage: { inputTokens: 4 } });
  });

  test("an error body throws FormatError carrying the mapped upstream error", async () => {
    const body = await json("gemini/error-429-retry-info.json");
    let caught: unknown;
    try {
      gemini.decodeResponse(body, opts);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(FormatError);
    expect((caught as FormatError).error).toMatchObject({ kind: "rate_limit", status: 429, retryAfterSeconds: 35 });
  });

  test("bodies of another format throw FormatError (upstream_malformed)", () => {
    for (const bad of [null, "text", [], { id: "chatcmpl-1", choices: [] }, { candidates: "nope" }]) {
      expect(() => gemini.decodeResponse(bad, opts)).toThrow(FormatError);
      try {
        gemini.decodeResponse(bad, opts);
      } catch (e) {
        expect((e as FormatError).error).toMatchObject({ kind: "api_error", status: 502, code: "upstream_malformed" });
      }
    }
  });
});
