/**
 * A Gemini 3 answer whose last part is its thought signature alone, after the text (recorded
 * gemini/empty-text-thought-signature.sse: the answer "4", then `{"text": "", "thoughtSignature": …}`
 * with `finishReason: STOP`), read by Anthropic Messages and Responses clients through the real
 * gateway (sdk16 S6). The signature belongs to the text, as Gemini's non-streamed reply has it (on the
 * text part: recorded gemini/text.json): the clients get the answer alone, streamed and not, with no
 * empty `thinking` block or reasoning item after it (they got one until 2026-12-05, after the answer,
 * where a native reply puts thinking before it). Neither format has a slot for a text block's
 * signature, so the next turn sends the text without it (Gemini checks signatures only on the function
 * calls of the current turn; a call's signature is unchanged by this: the placeholder goes back).
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

/** The same reply non-streamed: one candidate with both parts, the signature-only part last. */
const JSON_REPLY = {
  ...CHUNKS[1],
  candidates: [{ ...CHUNKS[1].candidates[0], content: { role: "model", parts: CHUNKS.flatMap((c) => c.candidates[0].content.parts) } }],
};

const replay = (r: ReceivedRequest): FakeReply => (r.stream ? { sse: SSE } : { json: JSON_REPLY });
const MODEL = "gem/gemini-3-flash-preview";

/** The SSE events of a response, as `event` name and parsed data. */
async function events(res: Response): Promise<Array<{ event: string; data: any }>> {
  const out: Array<{ event: string; data: any }> = [];
  for (const block of (await res.text()).split("\n\n")) {
    const name = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (name && data) out.push({ event: name, data: JSON.parse(data) });
  }
  return out;
}

const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });

describe("Anthropic Messages client", () => {
  test("streamed: exactly one text block '4', no thinking block after it; the SDK's finalMessage has the text alone", async () => {
    suite.gw.fake.handle(replay);
    const res = await post("/v1/messages", { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: "user", content: "2+2?" }] });
    expect(res.status).toBe(200);
    const seen = (await events(res)).map((e) =>
      e.event === "content_block_start" ? `start:${e.data.index}:${e.data.content_block.type}` : e.event === "content_block_delta" ? `delta:${e.data.index}:${e.data.delta.type}` : e.event === "content_block_stop" ? `stop:${e.data.index}` : e.event,
    );
    expect(seen).toEqual(["message_start", "start:0:text", "delta:0:text_delta", "stop:0", "message_delta", "message_stop"]);

    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const msg = await anthropic.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "2+2?" }] }).finalMessage();
    expect(msg.content.map((b) => b.type)).toEqual(["text"]);
    expect(msg.content[0]).toMatchObject({ type: "text", text: "4" });
    expect(msg.stop_reason).toBe("end_turn");
  });

  test("non-streamed (the signature-only part last in one reply): the same content, text alone", async () => {
    suite.gw.fake.handle(replay);
    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const msg = await anthropic.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "2+2?" }] });
    expect(suite.gw.fake.requests.at(-1)!.stream).toBe(false);
    expect(msg.content as unknown[]).toEqual([{ type: "text", text: "4" }]);
  });

  test("next turn: the answer goes back to Gemini as its text, and the conversation goes on", async () => {
    suite.gw.fake.handle(replay);
    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const first = await anthropic.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "2+2?" }] }).finalMessage();
    const second = await anthropic.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [
        { role: "user", content: "2+2?" },
        { role: "assistant", content: first.content },
        { role: "user", content: "and 3+3?" },
      ],
    });
    expect(second.content as unknown[]).toEqual([{ type: "text", text: "4" }]);
    const contents = suite.gw.fake.requests.at(-1)!.body.contents as Array<{ role: string; parts: unknown[] }>;
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "2+2?" }] },
      { role: "model", parts: [{ text: "4" }] },
      { role: "user", parts: [{ text: "and 3+3?" }] },
    ]);
  });
});

describe("Responses client", () => {
  test("streamed: one message item at output_index 0, no reasoning item; the SDK's finalResponse output is the message alone", async () => {
    suite.gw.fake.handle(replay);
    const res = await post("/v1/responses", { model: MODEL, stream: true, input: "2+2?" });
    expect(res.status).toBe(200);
    const added = (await events(res)).filter((e) => e.event === "response.output_item.added").map((e) => [e.data.output_index, e.data.item.type]);
    expect(added).toEqual([[0, "message"]]);

    const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
    const r = await openai.responses.stream({ model: MODEL, input: "2+2?" }).finalResponse();
    expect(r.output.map((o) => o.type)).toEqual(["message"]);
    expect(r.output_text).toBe("4");
    expect(r.status).toBe("completed");
  });

  test("non-streamed: output is the message alone", async () => {
    suite.gw.fake.handle(replay);
    const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
    const r = await openai.responses.create({ model: MODEL, input: "2+2?" });
    expect(r.output.map((o) => o.type)).toEqual(["message"]);
    expect(r.output_text).toBe("4");
  });
});

test("the recorded signature is the reply's last part, alone (what this file is about)", () => {
  expect(CHUNKS.at(-1).candidates[0].content.parts).toEqual([{ text: "", thoughtSignature: SIGNATURE }]);
  expect(CHUNKS[0].candidates[0].content.parts).toEqual([{ text: "4" }]);
});
