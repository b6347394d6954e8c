/**
 * Server-side web searches are billed per search, and the reply says how many ran; until 2026-12-07 a
 * request's cost counted its tokens only (src/pricing/prices.ts kept only the token classes' prices and
 * never passed the price package a `web_searches` count).
 *
 * Anthropic: `usage.server_tool_use.web_search_requests` ($10 per 1,000 for claude-sonnet-4-5 in
 * @pydantic/genai-prices 0.1.8: `web_searches_kcount: 10`). Claude Code's WebSearch tool through
 * switchyard added $0.01 per search to the provider's bill and none to the call's cost, `switchyard
 * usage`, the dashboard or the key's USD budget. Usage input 1000, cache read 2000, cache write 300,
 * output 500, 2 web searches → 0.032225 (1000 × $3 + 2000 × $0.30 + 300 × $3.75 + 500 × $15 per
 * million = $0.012225, plus 2 × $10 / 1000; the package's calcPrice with `web_searches: 2` answers
 * 0.032225000000000004); it was 0.012225, streamed and not.
 *
 * OpenAI Responses: each `web_search_call` output item is a call billed per call (gpt-5
 * `web_searches_kcount: 10`): two of them with 0.0065 of tokens → 0.0265 (was 0.0065), on the native
 * lane and translated, streamed and not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

const USAGE = { input_tokens: 1000, cache_read_input_tokens: 2000, cache_creation_input_tokens: 300, output_tokens: 500, server_tool_use: { web_search_requests: 2 } };
const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

let gw: TestGateway;
let sent = 0;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["anth", "anthropic"]]));
  gw.fake.handle((req) => {
    const message = { id: "msg_1", type: "message", role: "assistant", model: req.model, content: [{ type: "text", text: "found it" }], stop_reason: "end_turn", stop_sequence: null, usage: USAGE };
    if (!req.stream) return { json: message };
    return {
      sse:
        ev("message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...USAGE, output_tokens: 1, server_tool_use: { web_search_requests: 0 } } } }) +
        ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
        ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "found it" } }) +
        ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
        ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: USAGE }) +
        ev("message_stop", { type: "message_stop" }),
    };
  });
});
afterAll(async () => {
  await gw?.stop();
});

for (const stream of [false, true]) {
  test(`a Messages request ${stream ? "streamed" : "not streamed"} whose reply ran 2 web searches costs 0.032225 USD, its searches included`, async () => {
    const r = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "anth/claude-sonnet-4-5",
        max_tokens: 1000,
        stream,
        tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }],
        messages: [{ role: "user", content: "search the web" }],
      }),
    });
    expect(r.status).toBe(200);
    await r.text();
    sent++;
    // this request's call: the newest, once the list holds one call per request sent so far
    let calls: { costUsd?: number }[] = [];
    for (const end = Date.now() + 5000; calls.length < sent && Date.now() < end; await Bun.sleep(50)) {
      calls = ((await (await fetch(`${gw.url}/admin/api/calls?limit=10`)).json()) as { calls: typeof calls }).calls;
    }
    expect(Number(calls[0]!.costUsd!.toFixed(12))).toBe(0.032225);
  });
}

describe("an OpenAI Responses reply with two web_search_call items", () => {
  const RUSAGE = { input_tokens: 3000, input_tokens_details: { cached_tokens: 2000 }, output_tokens: 500, output_tokens_details: { reasoning_tokens: 200 }, total_tokens: 3500 };
  const search = (id: string) => ({ type: "web_search_call", id, status: "completed", action: { type: "search", query: "switchyard" } });
  const message = { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "found it", annotations: [] }] };
  const response = (model: string, done: boolean) => ({
    id: "resp_1",
    object: "response",
    created_at: 1,
    status: done ? "completed" : "in_progress",
    model,
    error: null,
    incomplete_details: null,
    output: done ? [search("ws_1"), search("ws_2"), message] : [],
    usage: done ? RUSAGE : null,
  });
  const sse = (model: string) => {
    let seq = 0;
    const e = (d: Record<string, unknown>) => ev(d.type as string, { ...d, sequence_number: seq++ });
    return (
      e({ type: "response.created", response: response(model, false) }) +
      e({ type: "response.output_item.added", output_index: 0, item: { ...search("ws_1"), status: "in_progress" } }) +
      e({ type: "response.output_item.done", output_index: 0, item: search("ws_1") }) +
      e({ type: "response.output_item.added", output_index: 1, item: { ...search("ws_2"), status: "in_progress" } }) +
      e({ type: "response.output_item.done", output_index: 1, item: search("ws_2") }) +
      e({ type: "response.output_item.added", output_index: 2, item: { ...message, status: "in_progress", content: [] } }) +
      e({ type: "response.content_part.added", item_id: "msg_1", output_index: 2, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }) +
      e({ type: "response.output_text.delta", item_id: "msg_1", output_index: 2, content_index: 0, delta: "found it" }) +
      e({ type: "response.output_item.done", output_index: 2, item: message }) +
      e({ type: "response.completed", response: response(model, true) })
    );
  };
  let rgw: TestGateway;
  let asked = 0;
  beforeAll(async () => {
    rgw = await startGateway(fakeProviders([["resp", "openai-responses"]]));
    rgw.fake.handle((req) => (req.stream ? { sse: sse(req.model ?? "gpt-5") } : { json: response(req.model ?? "gpt-5", true) }));
  });
  afterAll(async () => {
    await rgw?.stop();
  });

  for (const [client, path, body] of [
    ["Responses streamed (native)", "/v1/responses", { model: "resp/gpt-5", stream: true, input: "search", tools: [{ type: "web_search" }] }],
    ["Responses not streamed (native)", "/v1/responses", { model: "resp/gpt-5", input: "search", tools: [{ type: "web_search" }] }],
    ["Chat streamed (translated)", "/v1/chat/completions", { model: "resp/gpt-5", stream: true, messages: [{ role: "user", content: "search" }] }],
    ["Chat not streamed (translated)", "/v1/chat/completions", { model: "resp/gpt-5", messages: [{ role: "user", content: "search" }] }],
  ] as const) {
    test(`a ${client} request costs 0.0265 USD: 0.0065 of tokens and 2 searches at $10 per 1,000`, async () => {
      const r = await fetch(`${rgw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(r.status).toBe(200);
      expect(await r.text()).toContain("found it");
      asked++;
      let calls: { costUsd?: number }[] = [];
      for (const end = Date.now() + 5000; calls.length < asked && Date.now() < end; await Bun.sleep(50)) {
        calls = ((await (await fetch(`${rgw.url}/admin/api/calls?limit=10`)).json()) as { calls: typeof calls }).calls;
      }
      // gpt-5: 1000 × $1.25 + 2000 × $0.125 + 500 × $10 per million, plus 2 × $10 / 1000
      expect(Number(calls[0]!.costUsd!.toFixed(12))).toBe(0.0265);
    });
  }
});
