/**
 * A streamed reply translated through the hub leaves out what the hub has no slot for (Anthropic's
 * server-tool blocks, Responses hosted tools' items, Gemini image parts, Chat audio), as a whole JSON
 * reply does; it now says so as the JSON path does (README "Not done yet" until this was fixed: the
 * stream decoders dropped them without a word). What the decoder left out by the commit point is named
 * in `X-Switchyard-Warning` (`reply_content_dropped`, SPEC F-2); what it leaves out after the commit
 * point, when the header has gone out, is named in the route trace's warning when the stream ends.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { MESSAGE_START, sseEvent } from "../support/anthropic-thinking-stream.ts";

const suite = gatewaySuite();
const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
const warnings = (res: Response) => JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as { code: string; message: string }[];
const traceOf = async (res: Response) => (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;

const block = (index: number, content_block: unknown) => sseEvent("content_block_start", { type: "content_block_start", index, content_block });
const stop = (index: number) => sseEvent("content_block_stop", { type: "content_block_stop", index });
const textDelta = (index: number, text: string) => sseEvent("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } });
/** Anthropic's web search: the server tool's call (its input streamed) and its result, blocks `at` and `at + 1`. */
const webSearch = (at: number) =>
  block(at, { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }) +
  sseEvent("content_block_delta", { type: "content_block_delta", index: at, delta: { type: "input_json_delta", partial_json: '{"query":"oslo weather"}' } }) +
  stop(at) +
  block(at + 1, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.com", title: "Oslo", encrypted_content: "e30=" }] }) +
  stop(at + 1);
const END = sseEvent("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } }) + sseEvent("message_stop", { type: "message_stop" });
const SERVER_BLOCKS = "The reply of upstream anth held server_tool_use block, web_search_tool_result block, which this reply cannot carry (the gateway's common form has no place for it); left out.";

/**
 * A Chat client's stream of the Anthropic reply `first + rest`, where the fake holds `rest` back until
 * the client has the answer's status (the commit point has passed with `first`). @returns the response, status 200 checked.
 */
async function streamInTwo(first: string, rest: string): Promise<Response> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  suite.gw.fake.enqueue({ sse: first + rest, split_at: [Buffer.byteLength(first)], resume_after_first: gate });
  const res = await post("/v1/chat/completions", { model: "anth/claude-x", stream: true, messages: [{ role: "user", content: "weather?" }] });
  expect(res.status).toBe(200);
  release();
  return res;
}

describe("a streamed translated reply names what it left out", () => {
  test("Chat client, Anthropic provider, the web search before the answer: the warning header at the commit point, and the trace", async () => {
    suite.gw.fake.enqueue({ sse: MESSAGE_START + webSearch(0) + block(2, { type: "text", text: "" }) + textDelta(2, "It is sunny.") + stop(2) + END });
    const res = await post("/v1/chat/completions", { model: "anth/claude-x", stream: true, messages: [{ role: "user", content: "weather?" }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"content":"It is sunny."');
    expect(text).toContain('"finish_reason":"stop"');
    expect(warnings(res)).toEqual([{ code: "reply_content_dropped", message: SERVER_BLOCKS }]);
    expect((await traceOf(res)).warnings).toContainEqual({ code: "reply_content_dropped", message: SERVER_BLOCKS });
  });

  test("the web search after the commit point: no header (it had gone out), the trace's warning names the blocks when the stream ends", async () => {
    const first = MESSAGE_START + block(0, { type: "text", text: "" }) + textDelta(0, "Let me look. ");
    const rest = stop(0) + webSearch(1) + block(3, { type: "text", text: "" }) + textDelta(3, "It is sunny.") + stop(3) + END;
    const res = await streamInTwo(first, rest);
    const text = await res.text();
    expect(text).toContain('"content":"It is sunny."');
    expect(res.headers.get("x-switchyard-warning")).toBeNull();
    expect((await traceOf(res)).warnings).toEqual([{ code: "reply_content_dropped", message: SERVER_BLOCKS }]);
  });

  test("one block left out before the commit point and one after: the header names the first, the trace both", async () => {
    const first = MESSAGE_START + block(0, { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "oslo" } }) + stop(0) + block(1, { type: "text", text: "" }) + textDelta(1, "Searching. ");
    const rest = stop(1) + block(2, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] }) + stop(2) + END;
    const res = await streamInTwo(first, rest);
    await res.text();
    expect(warnings(res).map((w) => w.message)).toEqual([
      "The reply of upstream anth held server_tool_use block, which this reply cannot carry (the gateway's common form has no place for it); left out.",
    ]);
    expect((await traceOf(res)).warnings).toEqual([{ code: "reply_content_dropped", message: SERVER_BLOCKS }]);
  });

  test("Messages client, Responses provider: the hosted tool's item is named", async () => {
    let seq = 0;
    const ev = (type: string, data: Record<string, unknown>) => sseEvent(type, { type, sequence_number: seq++, ...data });
    const resp = { id: "resp_w", object: "response", created_at: 1, status: "in_progress", model: "gpt-x", output: [], usage: null };
    const search = { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "oslo weather" } };
    const msg = { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "It is sunny.", annotations: [] }] };
    const sse =
      ev("response.created", { response: resp }) +
      ev("response.output_item.added", { output_index: 0, item: { ...search, status: "in_progress" } }) +
      ev("response.web_search_call.completed", { output_index: 0, item_id: "ws_1" }) +
      ev("response.output_item.done", { output_index: 0, item: search }) +
      ev("response.output_item.added", { output_index: 1, item: { ...msg, status: "in_progress", content: [] } }) +
      ev("response.content_part.added", { output_index: 1, item_id: "msg_1", content_index: 0, part: { type: "output_text", text: "", annotations: [] } }) +
      ev("response.output_text.delta", { output_index: 1, item_id: "msg_1", content_index: 0, delta: "It is sunny." }) +
      ev("response.output_item.done", { output_index: 1, item: msg }) +
      ev("response.completed", {
        response: { ...resp, status: "completed", output: [search, msg], usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 9 } },
      });
    suite.gw.fake.enqueue({ sse });
    const res = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "weather?" }] });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"text":"It is sunny."');
    expect(warnings(res).map((w) => w.message)).toEqual([
      "The reply of upstream resp held web_search_call item, which this reply cannot carry (the gateway's common form has no place for it); left out.",
    ]);
  });

  test("a stream without anything left out carries no such warning", async () => {
    suite.gw.fake.enqueue({ sse: MESSAGE_START + block(0, { type: "text", text: "" }) + textDelta(0, "Hi.") + stop(0) + END });
    const res = await post("/v1/chat/completions", { model: "anth/claude-x", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    await res.text();
    expect(res.headers.get("x-switchyard-warning")).toBeNull();
    expect((await traceOf(res)).warnings).toEqual([]);
  });
});
