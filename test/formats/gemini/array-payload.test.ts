/**
 * A Gemini stream event whose payload is an array of chunks (the array form of `streamGenerateContent`,
 * which a whole reply may take too and decodeResponse reads): the decoder and the passthrough tap read
 * its chunks in order. Before, both skipped the payload as "not an object": a reply whose finish came
 * in one lost its last text and ended with the truncation error (translated), or got the truncation
 * error appended after its finish (passthrough).
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../../formats/index.ts";
import { passthroughDriver, TranslatedStreamDriver } from "../../../pipeline/re-translate.ts";

const first = { candidates: [{ content: { role: "model", parts: [{ text: "Hello" }] }, index: 0 }] };
const middle = { candidates: [{ content: { role: "model", parts: [{ text: "," }] }, index: 0 }] };
const last = { candidates: [{ content: { role: "model", parts: [{ text: " world" }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3 } };
const stream = `data: ${JSON.stringify(first)}\n\ndata: ${JSON.stringify([middle, last])}\n\n`;
const bytes = new TextEncoder().encode(stream);

describe("a Gemini stream event holding an array of chunks", () => {
  test("translated to a Chat client: every chunk's text, the finish and the usage; no error", () => {
    const d = new TranslatedStreamDriver(codecFor("gemini"), codecFor("openai-chat"), { family: "gemini" }, { model: "m", includeUsage: true });
    const out = new TextDecoder().decode(Buffer.concat([d.push(bytes), d.end()]));
    const chunks = out
      .split("\n")
      .filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
      .map((l) => JSON.parse(l.slice(6)));
    expect(chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join("")).toBe("Hello, world");
    expect(chunks.some((c) => c.error)).toBe(false);
    expect(chunks.find((c) => c.choices?.[0]?.finish_reason)?.choices[0].finish_reason).toBe("stop");
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3 });
    expect(out.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("native passthrough: forwarded as it came, with its finish and usage observed; nothing appended", () => {
    const d = passthroughDriver(codecFor("gemini").createTap({ family: "gemini", includeUsage: true }));
    const out = new TextDecoder().decode(Buffer.concat([d.push(bytes), d.end()]));
    expect(out).toBe(stream);
    expect(d.stopReason).toBe("end_turn");
    expect(d.lateError).toBeUndefined();
    expect(d.usage).toMatchObject({ inputTokens: 4, outputTokens: 3 });
  });
});
