/**
 * A Gemini 3 answer whose last part is its thought signature alone, after the text (recorded
 * gemini/empty-text-thought-signature.sse: the answer "4", then `{"text": "", "thoughtSignature": …}`
 * with `finishReason: STOP`), read by Anthropic Messages and Responses clients through the real
 * gateway, and that signature carried back to Gemini on the next turn. Google recommends sending a
 * text answer's signature back for Gemini 3's reasoning quality; Anthropic Messages and Responses have
 * no slot for a text block's signature, so it reaches those clients as a signature-only `thinking`
 * block / reasoning item after the answer (where natively thinking comes first: sdk16 S6, kept on
 * purpose: review17 R2 found that making it the text's signature lost it on the next turn).
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";
import type { FakeReply, ReceivedRequest } from "../support/fake-upstream.ts";

const suite = gatewaySuite();

const SSE = new TextDecoder().decode(await recordedBytes("gemini/empty-text-thought-signature.sse"));
const CHUNKS = SSE.split(/\r?\n\r?\n/)
  .filter((l) => l.startsWith("data: "))
  .map((l) => JSON.parse(l.slice(6)));
const SIGNATURE: string = CHUNKS[1].candidates[0].content.parts[0].thoughtSignature;

const replay = (r: ReceivedRequest): FakeReply => (r.stream ? { sse: SSE } : { json: { ...CHUNKS[1], candidates: [{ ...CHUNKS[1].candidates[0], content: { role: "model", parts: CHUNKS.flatMap((c) => c.candidates[0].content.parts) } }] } });
const MODEL = "gem/gemini-3-flash-preview";

/** The signatures in the model turns of the last upstream request's `contents`. */
function signaturesSentBack(): string[] {
  const contents = suite.gw.fake.requests.at(-1)!.body.contents as Array<{ role: string; parts: Array<{ thoughtSignature?: string }> }>;
  return contents.filter((c) => c.role === "model").flatMap((c) => c.parts.map((p) => p.thoughtSignature).filter((s): s is string => s !== undefined));
}

test("the recorded signature is the reply's last part, alone (what this file is about)", () => {
  expect(CHUNKS.at(-1).candidates[0].content.parts).toEqual([{ text: "", thoughtSignature: SIGNATURE }]);
  expect(CHUNKS[0].candidates[0].content.parts).toEqual([{ text: "4" }]);
});

describe("Anthropic Messages client", () => {
  test("the answer '4', then a thinking block carrying only the signature; the next turn sends the signature back to Gemini", async () => {
    suite.gw.fake.handle(replay);
    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const first = await anthropic.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "2+2?" }] }).finalMessage();
    expect(first.content.map((b) => b.type)).toEqual(["text", "thinking"]);
    expect(first.content[0]).toMatchObject({ type: "text", text: "4" });
    expect(first.content[1]).toMatchObject({ type: "thinking", thinking: "" });
    expect((first.content[1] as { signature: string }).signature.length).toBeGreaterThan(0);
    await anthropic.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [
        { role: "user", content: "2+2?" },
        { role: "assistant", content: first.content },
        { role: "user", content: "and 3+3?" },
      ],
    });
    expect(signaturesSentBack()).toEqual([SIGNATURE]);
  });
});

describe("Responses client", () => {
  test("the message, then a reasoning item carrying the signature; the next turn sends it back to Gemini", async () => {
    suite.gw.fake.handle(replay);
    const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
    const first = await openai.responses.stream({ model: MODEL, input: "2+2?", store: false, include: ["reasoning.encrypted_content"] }).finalResponse();
    expect(first.output.map((o) => o.type)).toEqual(["message", "reasoning"]);
    expect(first.output_text).toBe("4");
    await openai.responses.create({
      model: MODEL,
      store: false,
      input: [{ role: "user", content: "2+2?" }, ...(first.output as any[]), { role: "user", content: "and 3+3?" }],
    });
    expect(signaturesSentBack()).toEqual([SIGNATURE]);
  });
});
