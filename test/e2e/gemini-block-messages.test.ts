/**
 * A prompt or a reply Gemini blocked, as an Anthropic Messages client reads it (REFERENCE §5.1 refusal
 * row; §1.2 `stop_details`): `stop_reason: refusal` with `stop_details.explanation` naming Gemini's
 * reason ("Gemini blocked the prompt (PROHIBITED_CONTENT).", "Gemini blocked the reply (SAFETY).", with
 * the candidate's `finishMessage` when it says more), streamed and not, read with the official SDK
 * (`finalMessage()` keeps `stop_details`). Until 2026-12-07 a Messages client got the refusal stop with
 * no reason while Chat and Responses clients were told it. The prompt block is the recorded
 * gemini/prompt-blocked.sse. Real gateway, fake upstream.
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";
import type { FakeReply } from "../support/fake-upstream.ts";

const suite = gatewaySuite();

const MODEL = "gem/gemini-x";
const TEXT = "Partial answer";

const anthropic = () => new Anthropic({ apiKey: "x", baseURL: suite.gw.url, maxRetries: 0 });
const ask = { model: MODEL, max_tokens: 50, messages: [{ role: "user" as const, content: "hi" }] };

/** The Gemini chunks as a stream (CRLF framing), and `whole` as the body of a JSON request. */
function replay(chunks: unknown[], whole: unknown): void {
  const reply = (stream: boolean): FakeReply => (stream ? { sse: chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("") } : { json: whole });
  suite.gw.fake.handle((r) => reply(r.stream));
}

/** A reply that says `TEXT`, then stops with `finishReason` (and `finishMessage` when given): streamed in two chunks, whole in one body. */
function replyBlocked(finishReason: string, finishMessage?: string): void {
  const end: Record<string, unknown> = { finishReason, index: 0 };
  if (finishMessage !== undefined) end.finishMessage = finishMessage;
  const usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 };
  replay(
    [
      { candidates: [{ content: { role: "model", parts: [{ text: TEXT }] }, index: 0 }], modelVersion: "gemini-x" },
      { candidates: [{ content: { role: "model", parts: [{ text: "" }] }, ...end }], usageMetadata, modelVersion: "gemini-x" },
    ],
    { candidates: [{ content: { role: "model", parts: [{ text: TEXT }] }, ...end }], usageMetadata, modelVersion: "gemini-x" },
  );
}

/** What the client reads, streamed and whole: [stop_reason, stop_details, the text blocks' text]. */
async function bothWays(): Promise<Array<[unknown, unknown, string]>> {
  const asked = suite.gw.fake.requests.length;
  const s = await anthropic().messages.stream(ask).finalMessage();
  const w = await anthropic().messages.create(ask);
  // Gemini was asked for a stream, then for a whole reply
  expect(suite.gw.fake.requests.slice(asked).map((r) => r.stream)).toEqual([true, false]);
  const text = (m: Anthropic.Message) => m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
  return [s, w].map((m) => [m.stop_reason, (m as unknown as { stop_details?: unknown }).stop_details, text(m)]);
}

describe("an Anthropic Messages client routed to Gemini", () => {
  test("a prompt Gemini blocked (recorded: promptFeedback.blockReason PROHIBITED_CONTENT): refusal, stop_details names the reason", async () => {
    const sse = new TextDecoder().decode(await recordedBytes("gemini/prompt-blocked.sse"));
    const chunk = JSON.parse(sse.trim().slice("data: ".length));
    replay([chunk], chunk);
    const details = { type: "refusal", category: null, explanation: "Gemini blocked the prompt (PROHIBITED_CONTENT)." };
    expect(await bothWays()).toEqual([
      ["refusal", details, ""],
      ["refusal", details, ""],
    ]);
  });

  test("a reply Gemini blocked on the way (finishReason SAFETY, PROHIBITED_CONTENT): the text so far, refusal, stop_details names the reason", async () => {
    for (const reason of ["SAFETY", "PROHIBITED_CONTENT", "RECITATION"]) {
      replyBlocked(reason);
      const details = { type: "refusal", category: null, explanation: `Gemini blocked the reply (${reason}).` };
      expect(await bothWays()).toEqual([
        ["refusal", details, TEXT],
        ["refusal", details, TEXT],
      ]);
    }
  });

  test("the candidate's finishMessage is part of the reason; a plain end has no stop_details", async () => {
    replyBlocked("SAFETY", "The response was blocked for harassment.");
    const details = { type: "refusal", category: null, explanation: "Gemini blocked the reply (SAFETY): The response was blocked for harassment." };
    expect(await bothWays()).toEqual([
      ["refusal", details, TEXT],
      ["refusal", details, TEXT],
    ]);
    replyBlocked("STOP");
    expect(await bothWays()).toEqual([
      ["end_turn", undefined, TEXT],
      ["end_turn", undefined, TEXT],
    ]);
  });
});
