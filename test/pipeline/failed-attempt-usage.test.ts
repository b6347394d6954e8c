/**
 * Usage a provider reported on a reply the gateway then treats as a failed attempt before the commit
 * point is billed by the provider, so it counts (SPEC O-1: usage "taken from the provider's real
 * usage"; 9.5/9.6: a USD budget counts each request's cost). Until 2026-12-07 it was recorded nowhere:
 * not on the call, not in the key's USD budget (src/usage-record.ts usageRecordOf: a request whose
 * attempts all failed had usage {}; a failed attempt's usage events went with the attempt).
 *
 * Example: a Gemini upstream answers a non-streamed request with text, finishReason
 * MALFORMED_FUNCTION_CALL and a full `usageMetadata` (promptTokenCount 3000 of which cached 2000,
 * candidatesTokenCount 300, thoughtsTokenCount 200). The gateway turns the reply into a 502
 * (formats/normalize.ts unfinishedReplyError, REFERENCE §5.1). Streamed, the same reply is committed
 * with an in-band error and was charged $0.0065 (control test); not streamed it was $0, usage {}.
 * Expected: usage {inputTokens 1000, cacheReadTokens 2000, outputTokens 500, reasoningTokens 200}, cost
 * 0.0065 (gemini-2.5-pro: 1000 × $1.25 + 2000 × $0.125 + 500 × $10 per million, @pydantic/genai-prices
 * 0.1.8), and the key's 1d USD budget used 0.0065.
 *
 * And a retry: an Anthropic stream that gave message_start (input 1000, cache read 2000, cache write
 * 300) then broke before any content is retried on the same account; the row adds the broken
 * attempt's usage and cost to the served one's (nothing counted twice: each attempt's usage is its own
 * reply's). Before, only the retry was charged.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { adminAndClientKeys } from "../support/configs.ts";

const ADMIN = "sy-test-failed-attempt-admin1";
const KEY = "sy-test-failed-attempt-client";
/** The client key's budget: 5 USD a day (the charge shows on it). */
const BUDGET = "limits: { budgets: [{ window: 1d, usd: 5 }] }";
const YAML = adminAndClientKeys(["gem", "gemini"], ADMIN, KEY, BUDGET);
const USAGE = { promptTokenCount: 3000, cachedContentTokenCount: 2000, candidatesTokenCount: 300, thoughtsTokenCount: 200, totalTokenCount: 3500 };
const body = { candidates: [{ content: { role: "model", parts: [{ text: "some text" }] }, finishReason: "MALFORMED_FUNCTION_CALL", index: 0 }], usageMetadata: USAGE, modelVersion: "gemini-2.5-pro" };
const sse = `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "some text" }] }, index: 0 }], modelVersion: "gemini-2.5-pro" })}\r\n\r\ndata: ${JSON.stringify({ ...body, candidates: [{ finishReason: "MALFORMED_FUNCTION_CALL", index: 0 }] })}\r\n\r\n`;

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const admin = async (path: string) => (await fetch(`${gw!.url}/admin/api${path}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json() as Promise<any>;

async function ask(stream: boolean): Promise<{ status: number; call: { usage: unknown; costUsd?: number }; used: number }> {
  gw = await startGateway(YAML);
  gw.fake.handle((req) => (req.stream ? { sse } : { json: body }));
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gem/gemini-2.5-pro", stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: "user", content: "hi" }] }),
  });
  await r.text();
  let calls: any[] = [];
  for (const end = Date.now() + 5000; calls.length === 0 && Date.now() < end; await Bun.sleep(50)) calls = (await admin("/calls?limit=1")).calls;
  await Bun.sleep(100);
  const used = (await admin("/keys")).keys.find((k: any) => k.name === "client").use.budgets[0]?.used ?? 0;
  return { status: r.status, call: calls[0], used };
}

describe("a Gemini reply that breaks off (MALFORMED_FUNCTION_CALL) with its usageMetadata", () => {
  test("streamed to a Chat client (control): committed, the provider's usage is charged, 0.0065 USD on the call and the budget", async () => {
    const { status, call, used } = await ask(true);
    expect(status).toBe(200);
    expect({ usage: call.usage, costUsd: call.costUsd, used }).toEqual({
      usage: { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, reasoningTokens: 200 },
      costUsd: 0.0065,
      used: 0.0065,
    });
  });

  test("not streamed, to a Chat client: the 502's call still carries the provider's usage and 0.0065 USD, counted on the key's budget", async () => {
    const { status, call, used } = await ask(false);
    expect(status).toBe(502);
    expect({ usage: call.usage, costUsd: call.costUsd, used }).toEqual({
      usage: { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, reasoningTokens: 200 },
      costUsd: 0.0065,
      used: 0.0065,
    });
  });
});

describe("an Anthropic stream that reported usage, then broke before any content, and was retried", () => {
  const ANT = adminAndClientKeys(["ant", "anthropic"], ADMIN, KEY, BUDGET);
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const start = (usage: Record<string, number>) =>
    ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, stop_sequence: null, usage } });
  const broken = start({ input_tokens: 1000, cache_read_input_tokens: 2000, cache_creation_input_tokens: 300, output_tokens: 1 });
  const whole =
    start({ input_tokens: 100, output_tokens: 1 }) +
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hello" } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
    ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 50 } }) +
    ev("message_stop", { type: "message_stop" });

  for (const [client, path, body] of [
    ["Messages (native)", "/v1/messages", { model: "ant/claude-sonnet-4-5", stream: true, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }],
    ["Chat (translated)", "/v1/chat/completions", { model: "ant/claude-sonnet-4-5", stream: true, messages: [{ role: "user", content: "hi" }] }],
  ] as const) {
    test(`a ${client} client: the row adds the broken attempt's usage and cost to the served one's, on the key's budget too`, async () => {
      gw = await startGateway(ANT);
      gw.fake.enqueue({ sse: broken, reset_after_bytes: Buffer.byteLength(broken) }, { sse: whole });
      const r = await fetch(`${gw.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(r.status).toBe(200);
      expect(await r.text()).toContain("hello");
      expect(gw.fake.requests.length).toBe(2);
      let calls: any[] = [];
      for (const end = Date.now() + 5000; calls.length === 0 && Date.now() < end; await Bun.sleep(50)) calls = (await admin("/calls?limit=1")).calls;
      await Bun.sleep(100);
      const used = (await admin("/keys")).keys.find((k: any) => k.name === "client").use.budgets[0]?.used ?? 0;
      // 1000 × $3 + 2000 × $0.30 + 300 × $3.75 + 1 × $15 (the broken attempt: 0.00474) plus 100 × $3 + 50 × $15 (the served one: 0.00105), per million
      expect({ usage: calls[0].usage, costUsd: calls[0].costUsd, estimated: calls[0].estimated, used }).toEqual({
        usage: { inputTokens: 1100, outputTokens: 51, cacheReadTokens: 2000, cacheWriteTokens: 300 },
        costUsd: 0.00579,
        estimated: false,
        used: 0.00579,
      });
    });
  }
});
