/**
 * Found in a tryout (2026-12-07): a Gemini-compatible upstream that answers every reply with the same
 * `responseId` (and calls without `functionCall.id`) made the gateway mint the same call id on every
 * turn (`call_<responseId>_<n>`): Claude Code got `call_resp_g1_0` for two turns' calls and looped
 * (2,228 requests in 120 s). Each reply's minted ids now carry a random part of their own
 * (formats/gemini/decoder.ts, pipeline/commit.ts). Fails on the code before that fix.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

/** A Gemini stream calling `read` without a call id, always with responseId resp_g1. */
const CALL_SSE = `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "read", args: { path: "a.txt" } } }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 }, responseId: "resp_g1" })}\n\n`;
const CALL_JSON = { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "read", args: { path: "a.txt" } } }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 }, responseId: "resp_g1" };
const TOOLS = [{ name: "read", description: "Read a file", input_schema: { type: "object", properties: { path: { type: "string" } } } }];

async function ask(messages: unknown[], stream: boolean): Promise<string> {
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "gem/gemini-x", max_tokens: 100, tools: TOOLS, messages, stream }),
  });
  expect(res.status).toBe(200);
  if (!stream) {
    const body = (await res.json()) as { content: { type: string; id: string }[] };
    return body.content.find((b) => b.type === "tool_use")!.id;
  }
  const start = (await res.text()).split("\n").find((l) => l.startsWith("data: ") && l.includes('"tool_use"'))!;
  return JSON.parse(start.slice(6)).content_block.id;
}

for (const stream of [true, false]) {
  test(`${stream ? "streamed" : "non-streamed"}: two turns' calls from an upstream with a constant responseId get different ids`, async () => {
    gw.fake.reset();
    gw.fake.enqueue(stream ? { sse: CALL_SSE } : { json: CALL_JSON }, stream ? { sse: CALL_SSE } : { json: CALL_JSON });
    const user = { role: "user", content: "Read a.txt twice" };
    const first = await ask([user], stream);
    const history = [user, { role: "assistant", content: [{ type: "tool_use", id: first, name: "read", input: { path: "a.txt" } }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: first, content: "A" }] }];
    const second = await ask(history, stream);
    expect(first).toMatch(/^call_resp_g1_[0-9a-f]{8}_0$/);
    expect(second).toMatch(/^call_resp_g1_[0-9a-f]{8}_0$/);
    expect(second).not.toBe(first);
  });
}
