/**
 * A Responses upstream's stream that ends in `response.failed`
 * after some output, its `response.usage` filled in (input_tokens 3000 of which cached 2000,
 * output_tokens 500 of which reasoning 200), was costed from that usage only when the client also
 * spoke Responses (native passthrough: its tap reads usage from `response.failed` as from
 * `response.completed`). Translated for a Chat, Messages or Gemini client, the decoder
 * (formats/openai-responses/decoder.ts, `case "response.failed"`) emitted the error but dropped the
 * usage, so the request was recorded as an *estimate* from the text that reached the client.
 *
 * What a user noticed: the same upstream reply cost $0.0065 for a Codex/Responses client but
 * $0.00002125 (1 input + 2 output tokens, `estimated: true`) for a Claude Code / Chat / Gemini client,
 * in `GET /admin/api/calls`, `switchyard usage` and the key's USD budget and tpm, though the provider
 * reported (and bills) 3,500 tokens. SPEC O-1: usage is "taken from the provider's real usage …
 * marked `estimated` when the provider gave none"; here the provider gave it.
 *
 * Expected: every client format records usage {inputTokens 1000, cacheReadTokens 2000, outputTokens
 * 500, reasoningTokens 200}, not estimated, cost 0.0065 (gpt-5: 1000 × $1.25 + 2000 × $0.125 + 500 ×
 * $10 per million, @pydantic/genai-prices 0.1.8). Before the fix (the decoder now emits the failed
 * response's usage before its error): Chat, Messages and Gemini clients record
 * {inputTokens 1, outputTokens 2}, estimated, cost 0.00002125; the Responses client records 0.0065.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../../support/gateway.ts";
import { adminAndClientKeys } from "../../support/configs.ts";
import { decodePieces } from "../../support/openai-responses-helpers.ts";

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const USAGE = { input_tokens: 3000, input_tokens_details: { cached_tokens: 2000 }, output_tokens: 500, output_tokens_details: { reasoning_tokens: 200 }, total_tokens: 3500 };

/** A Responses stream: one text delta ("cut off"), then `response.failed` whose response carries USAGE. */
function failedStream(model: string): string {
  const item = { type: "message", id: "msg_1", role: "assistant", status: "incomplete", content: [{ type: "output_text", text: "cut off", annotations: [] }] };
  const obj = (status: string, done: boolean) => ({
    id: "resp_1",
    object: "response",
    created_at: 1,
    status,
    model,
    error: done ? { code: "server_error", message: "boom" } : null,
    incomplete_details: null,
    output: done ? [item] : [],
    usage: done ? USAGE : null,
  });
  let seq = 0;
  const e = (d: Record<string, unknown>) => ev(d.type as string, { ...d, sequence_number: seq++ });
  return (
    e({ type: "response.created", response: obj("in_progress", false) }) +
    e({ type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } }) +
    e({ type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }) +
    e({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "cut off" }) +
    e({ type: "response.failed", response: obj("failed", true) })
  );
}

describe("a Responses stream ending in response.failed with usage", () => {
  test("the decoder passes the failed response's usage on (hub usage event before the error)", () => {
    const events = decodePieces([new TextEncoder().encode(failedStream("gpt-5"))]);
    expect(events.filter((x) => x.type === "usage").map((x) => (x as { usage: unknown }).usage)).toEqual([
      { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, reasoningTokens: 200 },
    ]);
  });

  const ADMIN = "sy-test-failed-usage-admin01";
  const KEY = "sy-test-failed-usage-client1";
  const YAML = adminAndClientKeys(["resp", "openai-responses"], ADMIN, KEY);
  const requests: Record<string, [string, unknown]> = {
    responses: ["/v1/responses", { model: "resp/gpt-5", stream: true, input: "hi" }],
    chat: ["/v1/chat/completions", { model: "resp/gpt-5", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] }],
    messages: ["/v1/messages", { model: "resp/gpt-5", stream: true, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }],
    gemini: ["/v1beta/models/resp/gpt-5:streamGenerateContent?alt=sse", { contents: [{ role: "user", parts: [{ text: "hi" }] }] }],
  };
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  for (const [client, [path, body]] of Object.entries(requests)) {
    test(`a ${client} client: the call's usage and cost are the provider's (0.0065 USD), not an estimate`, async () => {
      // A gateway per client format: the failure cools the account down, which would skew the next request.
      gw = await startGateway(YAML);
      gw.fake.handle((req) => ({ sse: failedStream(req.model ?? "gpt-5") }));
      const r = await fetch(`${gw.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(r.status).toBe(200); // committed at the text delta; the failure is in-band
      expect(await r.text()).toContain("cut off");
      let call: { usage: unknown; estimated: boolean; costUsd?: number } | undefined;
      for (const end = Date.now() + 5000; !call && Date.now() < end; await Bun.sleep(50)) {
        const calls = ((await (await fetch(`${gw.url}/admin/api/calls?limit=1`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { calls: (typeof call)[] }).calls;
        call = calls[0];
      }
      expect({ usage: call!.usage, estimated: call!.estimated, costUsd: call!.costUsd }).toEqual({
        usage: { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, reasoningTokens: 200 },
        estimated: false,
        costUsd: 0.0065,
      });
    });
  }
});
